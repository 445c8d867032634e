// Can anything hear a device? The patches record where the device's tracks go (senders, WebAudio nodes,
// media elements, recorders, clones, derived tracks) and hand the graph to `assess` as vertices; this
// file decides with no DOM, so the rule (docs/design/release-on-mute.md "The rule") runs under
// `node --test`. A path is SILENT when it ends in a disabled track or a sender that sends nothing; it
// HEARS when it reaches a consumer that reads audio or something micoff cannot follow. The device may be
// released only when nothing hears and something is silenced; when something hears while something else
// is silenced, the page listens while muted.

/** One point of the graph. `key` identifies it for the cycle guard (WebAudio graphs may loop). */
export type Vertex =
  | {
      kind: 'track';
      key: object;
      enabled: boolean;
      /** Was the track ever handed to a consumer micoff records? */
      seen: boolean;
      /** Why an enabled track hears when it goes nowhere micoff can see. */
      unseen: string;
      next(): Vertex[];
      /** Clones of the track: they carry the source's audio whatever this track's `enabled` says. */
      clones?(): Vertex[];
    }
  | {
      kind: 'node';
      key: object;
      /** Why the page reads this node's audio itself (analyser, worklet port), or null. */
      reads: string | null;
      next(): Vertex[];
      /** Where this node's frames go when it only passes on frames that come in (an insertable-streams
       * processor followed to its generators): what it feeds gets nothing while the device is off.
       * Absent for a node that produces frames of its own (a WebAudio node keeps rendering silence). */
      relayed?(): Vertex[];
    }
  | {
      kind: 'sender';
      sending: boolean;
      why: string;
      /** Restart the sender's RTP stream so its clock jumps over a pause (see `starvedSenders`). */
      restart?: () => Promise<void>;
    }
  | { kind: 'sink'; why: string };

export interface Audibility {
  /** Why something hears the device (the first such path found), or null when nothing does. */
  hears: string | null;
  /** Some path ends silent: a disabled track, a sender sending nothing, an emptied consumer. */
  silenced: boolean;
}

/** Walk every path from `roots`. With `follow` false only the plain rule applies: an enabled track hears
 * (its `unseen` reason), a disabled one is silenced, nothing beyond is looked at. */
export function assess(roots: Iterable<Vertex>, follow = true): Audibility {
  const out: Audibility = { hears: null, silenced: false };
  const visited = new Set<object>();
  const hear = (why: string) => {
    if (out.hears === null) out.hears = why;
  };
  const walk = (v: Vertex): void => {
    switch (v.kind) {
      case 'sink':
        hear(v.why);
        return;
      case 'sender':
        if (v.sending) hear(v.why);
        else out.silenced = true;
        return;
      case 'track': {
        if (visited.has(v.key)) return;
        visited.add(v.key);
        for (const c of v.clones?.() ?? []) walk(c);
        if (!v.enabled) {
          out.silenced = true;
          return;
        }
        if (!follow) {
          hear(v.unseen);
          return;
        }
        const next = v.next();
        if (next.length === 0) {
          if (v.seen) out.silenced = true;
          else hear(v.unseen);
          return;
        }
        for (const n of next) walk(n);
        return;
      }
      case 'node': {
        if (visited.has(v.key)) return;
        visited.add(v.key);
        if (v.reads !== null) hear(v.reads);
        for (const n of v.next()) walk(n);
        return;
      }
    }
  };
  for (const r of roots) walk(r);
  return out;
}

/** The plain rule's view of a group (no graph): enabled members hear, disabled ones are silenced. */
export function plainAudibility(
  members: Iterable<{ enabled: boolean; ended: boolean }>,
  why: string,
): Audibility {
  const out: Audibility = { hears: null, silenced: false };
  for (const m of members) {
    if (m.ended) continue;
    if (m.enabled) out.hears ??= why;
    else out.silenced = true;
  }
  return out;
}

/** The senders a release leaves with no audio frames at all: those carrying one of the device's tracks
 * (a clone's too), directly or through insertable-streams relays, whatever the tracks' `enabled` (a
 * disabled track sends encoded silence, a stopped one nothing). Their RTP stream pauses while the device
 * is off; `restart` each before the reopened device's first frame (docs/design/release-on-mute.md,
 * "The far end's jitter buffer after a release"). A sender that sends nothing anyway is left alone, and
 * so is anything behind a WebAudio node, which keeps rendering (silence) while the device is off. */
export function starvedSenders(roots: Iterable<Vertex>): (() => Promise<void>)[] {
  const out: (() => Promise<void>)[] = [];
  const visited = new Set<object>();
  const walk = (v: Vertex): void => {
    switch (v.kind) {
      case 'sender':
        if (v.sending && v.restart) out.push(v.restart);
        return;
      case 'sink':
        return;
      case 'track':
        if (visited.has(v.key)) return;
        visited.add(v.key);
        for (const c of v.clones?.() ?? []) walk(c);
        for (const n of v.next()) walk(n);
        return;
      case 'node':
        if (!v.relayed || visited.has(v.key)) return;
        visited.add(v.key);
        for (const n of v.relayed()) walk(n);
        return;
    }
  };
  for (const r of roots) walk(r);
  return out;
}
