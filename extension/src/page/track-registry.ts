// The page world's bookkeeping for one realm: which page-visible track stands for which real track
// (members), which tracks share a device (groups), and the private streams behind media elements and
// recorders (shadows). It also carries out the group machine's effects on real tracks: stop on release,
// reopen and swap on reacquire, end on failure. The patched surfaces (patch/*.ts) extend it through
// hooks: what to prune, what to redo after a swap, what holds a device open.
import type { GroupReport } from '../shared/messages/page-content.ts';
import { KEPT } from '../shared/release-decision.ts';
import { type Audibility, assess, starvedSenders, type Vertex } from './audibility.ts';
import { concreteDeviceId, isVirtualDeviceId } from './device-groups.ts';
import { groupState, keptReason, type MachineGroup } from './group-machine.ts';
import type { Originals, Track } from './originals.ts';

export interface Root {
  /** Audio constraints for reacquiring: the page's own, deviceId made exact. */
  constraints: MediaTrackConstraints;
  /** Settles once `constraints` name the concrete device (see pinDevice). */
  pinned: Promise<void>;
}

export interface Member {
  page: Track;
  real: Track;
  enabled: boolean;
  ended: boolean;
  group: Group;
  root: Root;
  settings: MediaTrackSettings;
  capabilities: MediaTrackCapabilities;
  constraints: MediaTrackConstraints;
  /** The page's last applyConstraints (applied again after every reacquire). */
  applied: MediaTrackConstraints | null;
  senders: Set<RTCRtpSender>;
  /** Why micoff kept echo cancellation on against the page's `latency` request (latency-guard.ts). */
  guard: string | null;
}

export interface Group extends MachineGroup {
  id: string;
  deviceId: string;
  label: string;
  members: Set<Member>;
  reported: GroupReport['state'] | null;
  since: number;
}

/** A private stream a media element plays or a recorder records: the page's stream with real tracks. */
export interface Shadowed {
  page: MediaStream;
  shadow: MediaStream;
}

/** Where the registry hands decisions back to the group machine. */
export interface RegistryHooks {
  evaluate(g: Group): void;
  unhold(g: Group, reason: string): void;
}

export type TrackRegistry = ReturnType<typeof createTrackRegistry>;

/** The longest a reacquire waits for the senders' restarts (two setParameters, a few ms measured). */
const RESTART_WAIT_MS = 1000;

export function createTrackRegistry(o: Originals, realm: number, hooks: RegistryHooks) {
  const members = new WeakMap<Track, Member>(); // page-visible track -> member
  const byReal = new WeakMap<Track, Member>(); // every real track we hand around -> member
  const groups = new Map<string, Group>(); // by deviceId
  const shadows = new Set<Shadowed>();
  const shadowPage = new WeakMap<MediaStream, MediaStream>(); // shadow -> the page's stream
  const pruners: (() => void)[] = [];
  const swapListeners: ((swapped: Member[]) => void)[] = [];
  const endListeners: ((m: Member) => void)[] = [];
  const holds: ((g: Group) => string | null)[] = [];
  const quiet = new WeakSet<MediaStream>();
  // Where tracks go (audibility.ts): each patch answers for the consumers it records.
  const consumerSources: ((t: Track) => Vertex[])[] = [];
  let clonesOf: (t: Track) => Track[] = () => [];
  const seen = new WeakSet<Track>();
  let nextGroup = 1;

  /** A track as a point of the audio graph: a member's page-visible track or a derived one (a
   * MediaStreamAudioDestinationNode's, a clone of one). An ended derived track carries nothing. */
  function trackVertex(t: Track): Vertex {
    const m = members.get(t);
    return {
      kind: 'track',
      key: t,
      enabled: m ? m.enabled && !m.ended : o.getEnabled.call(t) && !o.isEnded(t),
      get seen() {
        return seen.has(t);
      },
      unseen: m ? KEPT.clone : KEPT.unseen,
      clones: () => clonesOf(t).map(trackVertex),
      next() {
        const out: Vertex[] = [];
        for (const c of consumerSources) {
          try {
            out.push(...c(t));
          } catch {
            out.push({ kind: 'sink', why: KEPT.unseen }); // a consumer we cannot read: it may hear
          }
        }
        if (out.length > 0) seen.add(t);
        return out;
      },
    };
  }

  /** What hears the group's device; `follow` false is the plain rule (enabled tracks hear). */
  function audibility(g: Group, follow: boolean): Audibility {
    const roots: Vertex[] = [];
    for (const m of g.members) if (!m.ended) roots.push(trackVertex(m.page));
    return assess(roots, follow);
  }

  const managedIn = (s: MediaStream): Member[] => {
    const out: Member[] = [];
    for (const t of o.getTracks.call(s)) {
      const m = members.get(t);
      if (m) out.push(m);
    }
    return out;
  };
  const realOf = (t: Track) => members.get(t)?.real ?? t;
  const liveIn = (s: MediaStream) => managedIn(s).some((m) => !m.ended);
  const makeShadow = (page: MediaStream) => new o.MediaStream(o.getTracks.call(page).map(realOf));

  // Our release makes a stream of managed tracks inactive; Chromium's non-standard `inactive` event
  // must not leak. The listener goes on first wherever we can: streams getUserMedia hands out, streams
  // the page builds from managed tracks (constructor, clone) and, late but still, streams it adds one to.
  function hideInactive(stream: MediaStream): void {
    if (quiet.has(stream)) return;
    quiet.add(stream);
    o.addEventListener.call(stream, 'inactive', (e: Event) => {
      if (liveIn(stream)) e.stopImmediatePropagation();
    });
  }

  /** Forget consumers that can never play the mic again (closed contexts, streams with no live managed
   * track, stopped recorders), so long calls do not accumulate them and swaps stay cheap. */
  function prune(): void {
    for (const p of pruners) p();
    for (const sh of shadows) if (!liveIn(sh.page)) shadows.delete(sh);
  }

  function shadowed(page: MediaStream): MediaStream {
    const shadow = makeShadow(page);
    shadows.add({ page, shadow });
    shadowPage.set(shadow, page);
    return shadow;
  }

  function dropShadow(shadow: MediaStream): void {
    for (const s of shadows) if (s.shadow === shadow) shadows.delete(s);
  }

  /** The member is gone for good (the page stopped it, or its device went away). */
  function markEnded(m: Member): void {
    if (m.ended) return;
    m.ended = true;
    for (const l of endListeners) {
      try {
        l(m);
      } catch {}
    }
  }

  function watchReal(m: Member, real: Track): void {
    o.addEventListener.call(real, 'ended', () => {
      if (m.real !== real || m.ended) return;
      // The device went away (the page's stop() and our release never fire `ended`).
      markEnded(m);
      if (real !== m.page) o.dispatchEvent.call(m.page, new o.Event('ended'));
      hooks.evaluate(m.group);
    });
    if (real === m.page) return;
    for (const type of ['mute', 'unmute']) {
      o.addEventListener.call(real, type, () => {
        if (m.real === real && !m.ended) o.dispatchEvent.call(m.page, new o.Event(type));
      });
    }
  }

  function swapIn(m: Member, next: Track): void {
    const old = m.real;
    m.real = next;
    byReal.set(next, m);
    o.setEnabled.call(next, m.enabled);
    watchReal(m, next);
    if (m.applied) o.applyConstraints.call(next, m.applied).catch(() => {});
    for (const s of m.senders) {
      // Only where the sender still carries the old track: one the page emptied (removeTrack,
      // replaceTrack(null)) or moved to another track stays as the page left it.
      const carried = o.senderTrack?.call(s);
      if (carried === old) o.replaceTrack?.call(s, next).catch(() => {});
      else if (carried !== next) m.senders.delete(s);
    }
    for (const sh of shadows) {
      if (!o.getTracks.call(sh.shadow).includes(old)) continue;
      o.addTrack.call(sh.shadow, next);
      o.removeTrack.call(sh.shadow, old);
    }
  }

  function groupFor(deviceId: string, label: string): Group {
    let g = groups.get(deviceId);
    if (!g) {
      g = {
        id: `${realm}.${nextGroup++}`,
        deviceId,
        label,
        members: new Set(),
        state: 'on',
        lastOnMs: o.now(),
        timer: null,
        kept: null,
        listening: null,
        seq: 0,
        reported: null,
        since: o.dateNow(),
      };
      groups.set(deviceId, g);
    }
    return g;
  }

  /** A new page-visible track on `group`: from getUserMedia (page === real) or a clone of `from`. */
  function addMember(page: Track, real: Track, group: Group, root: Root, from?: Member): Member {
    const m: Member = {
      page,
      real,
      enabled: from ? from.enabled : o.getEnabled.call(page),
      ended: false,
      group,
      root,
      settings: from ? { ...from.settings } : o.getSettings.call(real),
      capabilities: from ? { ...from.capabilities } : o.getCapabilities.call(real),
      constraints: from ? { ...from.constraints } : o.getConstraints.call(real),
      applied: from?.applied ?? null,
      senders: new Set(),
      guard: from?.guard ?? null,
    };
    members.set(page, m);
    byReal.set(real, m);
    group.members.add(m);
    watchReal(m, real);
    return m;
  }

  /** Pin the concrete device behind Chromium's "default" (see device-groups.ts). */
  async function pinDevice(root: Root, settings: MediaTrackSettings): Promise<void> {
    if (!isVirtualDeviceId(settings.deviceId)) return;
    const id = concreteDeviceId(settings, await o.enumerateDevices.call(o.mediaDevices));
    if (id) root.constraints = { ...root.constraints, deviceId: { exact: id } };
  }

  // ---- the group machine's effects ---------------------------------------------------------------------

  function holdReason(g: Group): string | null {
    for (const h of holds) {
      const why = h(g);
      if (why !== null) return why;
    }
    return null;
  }

  /** Release: remember what the page reads while the device is off, then stop the real tracks. */
  function stopTracks(g: Group): void {
    for (const m of g.members) {
      if (m.ended) continue;
      try {
        const ids = { deviceId: m.settings.deviceId, groupId: m.settings.groupId };
        m.settings = { ...o.getSettings.call(m.real), ...ids };
        m.capabilities = { ...o.getCapabilities.call(m.real), ...ids };
      } catch {}
      o.stop.call(m.real);
    }
  }

  function endTracks(g: Group): void {
    for (const m of g.members) {
      if (m.ended) continue;
      markEnded(m);
      o.stop.call(m.real);
      o.dispatchEvent.call(m.page, new o.Event('ended'));
    }
  }

  /** Settles when the restarts are done, or after RESTART_WAIT_MS at most: the fresh audio never waits
   * longer on a sender that does not answer (a restart that ends later still steps the clock). */
  function restartStarved(g: Group): Promise<unknown> {
    try {
      const roots: Vertex[] = [];
      for (const m of g.members) if (!m.ended) roots.push(trackVertex(m.page));
      const restarts = starvedSenders(roots).map((restart) => restart());
      if (restarts.length === 0) return Promise.resolve();
      return Promise.race([
        Promise.allSettled(restarts),
        new Promise<void>((resolve) => o.setTimeout(resolve, RESTART_WAIT_MS)),
      ]);
    } catch {
      return Promise.resolve(); // a graph we cannot read: the senders stay as they are
    }
  }

  /** Reopen every root's device (exact deviceId, the page's constraints) and swap the fresh tracks in
   * behind the page's objects. False when the device could not be reopened or went away meanwhile. */
  async function reacquire(g: Group): Promise<boolean> {
    prune();
    const roots = new Set<Root>();
    for (const m of g.members) if (!m.ended) roots.add(m.root);
    // While the device reopens, the senders the release left without frames restart their RTP stream
    // (audibility.ts starvedSenders), so the fresh capture's first packet carries the pause in its
    // timestamp rather than arriving late by it.
    const restarted = restartStarved(g);
    const fresh = new Map<Root, MediaStream>();
    try {
      for (const root of roots) {
        fresh.set(root, await o.getUserMedia.call(o.mediaDevices, { audio: root.constraints }));
      }
    } catch {
      for (const s of fresh.values()) for (const t of o.getTracks.call(s)) o.stop.call(t);
      return false;
    }
    await restarted;
    const swapped: Member[] = [];
    for (const [root, stream] of fresh) {
      const base = o.getAudioTracks.call(stream)[0];
      if (!base) continue;
      // Members that need a live track: on this root, not stopped by the page, holding a dead real.
      const need = [...g.members].filter((m) => m.root === root && !m.ended && o.isEnded(m.real));
      if (need.length === 0) {
        o.stop.call(base);
        continue;
      }
      need.forEach((m, i) => {
        swapIn(m, i === 0 ? base : o.clone.call(base));
        swapped.push(m);
      });
    }
    if (swapped.some((m) => o.isEnded(m.real))) return false; // the device went away between open and swap
    if (swapped.length > 0) for (const l of swapListeners) l(swapped);
    return true;
  }

  /** Every group's report, for the bridge; groups whose tracks all ended are reported once, then go. */
  /** Echo cancellation as the browser granted it to these tracks (their settings when adopted). */
  function echoCancellationOf(live: Member[]): boolean | null {
    const ec = live.map((m) => (m.settings as { echoCancellation?: unknown }).echoCancellation);
    if (ec.some((v) => v === false)) return false;
    return ec.length > 0 && ec.every((v) => v === true) ? true : null;
  }

  function report(): GroupReport[] {
    const out: GroupReport[] = [];
    for (const g of groups.values()) {
      const state = groupState(g);
      if (state !== g.reported) {
        g.reported = state;
        g.since = o.dateNow();
      }
      const live = [...g.members].filter((m) => !m.ended);
      out.push({
        id: g.id,
        state,
        since_ms: g.since,
        reason: state === 'not_released' ? keptReason(g) : null,
        label: g.label.slice(0, 200),
        tracks: live.length,
        enabled: live.filter((m) => m.enabled).length,
        echo_cancellation: echoCancellationOf(live),
        latency_guard: live.find((m) => m.guard)?.guard ?? null,
      });
      if (state === 'ended') groups.delete(g.deviceId);
    }
    return out;
  }

  return {
    members,
    byReal,
    groups,
    shadowPage,
    managedIn,
    realOf,
    liveIn,
    makeShadow,
    hideInactive,
    shadowed,
    dropShadow,
    groupFor,
    addMember,
    pinDevice,
    evaluate: hooks.evaluate,
    unhold: hooks.unhold,
    /** A patch's consumers to forget when they can no longer play the mic (runs before a reacquire). */
    onPrune(p: () => void): void {
      pruners.push(p);
    },
    /** A patch's consumers to rebuild on the fresh tracks after a reacquire. */
    onSwapped(l: (swapped: Member[]) => void): void {
      swapListeners.push(l);
    },
    /** A patch's consumers to close when a member ends for good (see markEnded). */
    onEnded(l: (m: Member) => void): void {
      endListeners.push(l);
    },
    markEnded,
    /** Something that keeps a muted device open (returns why, or null). */
    addHold(h: (g: Group) => string | null): void {
      holds.push(h);
    },
    /** A patch's consumers of a (page-visible) track, as graph vertices (see audibility.ts). */
    addConsumers(c: (t: Track) => Vertex[]): void {
      consumerSources.push(c);
    },
    /** Where clones of derived tracks are recorded (managed clones are members of their group). */
    setClones(c: (t: Track) => Track[]): void {
      clonesOf = c;
    },
    /** Mark a track as handed to a consumer micoff records (its consumers are then known). */
    markSeen(t: Track): void {
      seen.add(t);
    },
    trackVertex,
    audibility,
    /** Something on any device's paths changed (a sender, a node, a derived track): decide again. */
    evaluateAll(): void {
      for (const g of [...groups.values()]) hooks.evaluate(g);
    },
    holdReason,
    stopTracks,
    endTracks,
    reacquire,
    report,
  };
}
