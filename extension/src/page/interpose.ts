// The getUserMedia interposition (design (b) "facade swap", docs/design/release-on-mute.md): the page
// keeps the real track Chromium gave it. When every live track on a device is disabled we stop the real
// tracks (the device is released) while the page-visible state reads as before; when one is enabled we
// call the original getUserMedia with the same constraints (exact deviceId) and swap the new track in
// behind the page's objects: RTCRtpSender (replaceTrack), media elements and WebAudio source nodes
// (private shadow streams), clones. Nothing runs per audio frame, so unmuted costs nothing.
//
// Hostile territory: every built-in used after install is captured here first, and a failure in our
// bookkeeping never breaks the page's own call (errors are swallowed, the original result returned).
import type { GroupReport, GroupState } from '../content/page-protocol.ts';
import { disconnects } from './audio-connections.ts';
import type { Bridge } from './bridge.ts';
import { concreteDeviceId, groupKey, isVirtualDeviceId, reacquireConstraints } from './device-groups.ts';
import { maskToString, replaceAccessor, replaceConstructor, replaceMethod } from './natives.ts';
import { decideGroup } from './release-policy.ts';

type Realm = Window & typeof globalThis;
type Track = MediaStreamTrack;

interface Root {
  /** Audio constraints for reacquiring: the page's own, deviceId made exact. */
  constraints: MediaTrackConstraints;
  /** Settles once `constraints` name the concrete device (see pinDevice). */
  pinned: Promise<void>;
}

interface Member {
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
}

interface Group {
  id: string;
  deviceId: string;
  label: string;
  members: Set<Member>;
  state: 'on' | 'off' | 'acquiring';
  lastOnMs: number;
  timer: number | null;
  /** Why a muted device is kept open; null when it is not being kept. */
  kept: string | null;
  seq: number;
  reported: GroupState | null;
  since: number;
}

interface Shadowed {
  page: MediaStream;
  shadow: MediaStream;
}

/** A recorder started while its device was released records a stand-in track (a generator), fed
 * from the device once it is back: a recording MediaRecorder stops if its stream's tracks change. */
interface Feed {
  member: Member;
  gen: Track & { writable: WritableStream };
  abort: AbortController | null;
  src: Track | null;
}

interface RecorderEntry {
  rec: MediaRecorder;
  page: MediaStream;
  shadow: MediaStream;
  feeds: Feed[];
}

interface SourceNodeEntry {
  ctx: BaseAudioContext;
  page: MediaStream;
  /** The node built on the current real tracks after a reacquire (the page's node is on dead ones). */
  inner: AudioNode | null;
  conns: unknown[][];
}

const MARK = Symbol.for('micoff.page');
const RECORDING = 'a MediaRecorder is recording this microphone';
const construct = Reflect.construct as (target: unknown, args: unknown[], newTarget: unknown) => object;

export interface InstallOptions {
  bridge: Bridge;
  realm: number;
  /** Called for same-origin child frames reached through this realm (iframe.contentWindow). */
  onChildRealm?: (child: Realm) => void;
}

/** Patch one realm (a window). Returns false when it already was. */
export function install(w: Realm, opts: InstallOptions): boolean {
  const marked = w as unknown as Record<symbol, unknown>;
  if (marked[MARK]) return false;
  Object.defineProperty(w, MARK, { value: true });
  maskToString(w.Function.prototype);

  const { bridge, realm } = opts;
  const TrackProto = w.MediaStreamTrack?.prototype;
  const StreamProto = w.MediaStream?.prototype;
  const MediaDevicesProto = w.MediaDevices?.prototype;
  if (!TrackProto || !StreamProto || !MediaDevicesProto?.getUserMedia) return true;

  // ---- originals -------------------------------------------------------------------------------------
  const origGUM = MediaDevicesProto.getUserMedia;
  const origEnumerate = MediaDevicesProto.enumerateDevices;
  const origStop = TrackProto.stop;
  const origClone = TrackProto.clone;
  const origGetSettings = TrackProto.getSettings;
  const origGetConstraints = TrackProto.getConstraints;
  const origGetCapabilities = TrackProto.getCapabilities;
  const origApply = TrackProto.applyConstraints;
  const origAddListener = w.EventTarget.prototype.addEventListener;
  const origDispatch = w.EventTarget.prototype.dispatchEvent;
  const origGetTracks = StreamProto.getTracks;
  const origGetAudioTracks = StreamProto.getAudioTracks;
  const origAddTrack = StreamProto.addTrack;
  const origRemoveTrack = StreamProto.removeTrack;
  const OrigMediaStream = w.MediaStream;
  const OrigEvent = w.Event;
  const readyStateOf = Object.getOwnPropertyDescriptor(TrackProto, 'readyState')?.get;
  const enabledDesc = Object.getOwnPropertyDescriptor(TrackProto, 'enabled');
  const mutedOf = Object.getOwnPropertyDescriptor(TrackProto, 'muted')?.get;
  const labelOf = Object.getOwnPropertyDescriptor(TrackProto, 'label')?.get;
  const setTimer = w.setTimeout.bind(w);
  const clearTimer = w.clearTimeout.bind(w);
  const now = w.performance.now.bind(w.performance);
  const dateNow = Date.now;
  const mediaDevices = w.navigator.mediaDevices;
  if (!readyStateOf || !enabledDesc?.get || !enabledDesc.set || !mutedOf || !labelOf) return true;
  const getEnabled = enabledDesc.get;
  const setEnabled = enabledDesc.set;
  const isEnded = (t: Track) => readyStateOf.call(t) === 'ended';

  // ---- registry --------------------------------------------------------------------------------------
  const members = new WeakMap<Track, Member>(); // page-visible track -> member
  const byReal = new WeakMap<Track, Member>(); // every real track we hand around -> member
  const groups = new Map<string, Group>();
  const shadows = new Set<Shadowed>(); // media elements' and recorders' private streams
  const shadowPage = new WeakMap<MediaStream, MediaStream>();
  const sourceNodes = new Map<AudioNode, SourceNodeEntry>();
  const recorders = new Set<RecorderEntry>();
  const recorderOf = new WeakMap<MediaRecorder, RecorderEntry>();
  let nextGroup = 1;

  const managedIn = (s: MediaStream): Member[] => {
    const out: Member[] = [];
    for (const t of origGetTracks.call(s)) {
      const m = members.get(t);
      if (m) out.push(m);
    }
    return out;
  };
  const realOf = (t: Track) => members.get(t)?.real ?? t;
  const liveIn = (s: MediaStream) => managedIn(s).some((m) => !m.ended);

  // Our release makes a stream of managed tracks inactive; Chromium's non-standard `inactive` event
  // must not leak. The listener goes on first wherever we can: streams getUserMedia hands out, streams
  // the page builds from managed tracks (constructor, clone) and, late but still, streams it adds one to.
  const quiet = new WeakSet<MediaStream>();
  function hideInactive(stream: MediaStream): void {
    if (quiet.has(stream)) return;
    quiet.add(stream);
    origAddListener.call(stream, 'inactive', (e: Event) => {
      if (liveIn(stream)) e.stopImmediatePropagation();
    });
  }

  /** Forget consumers that can never play the mic again (closed contexts, streams with no live managed
   * track, stopped recorders), so long calls do not accumulate them and swaps stay cheap. */
  function prune(): void {
    for (const [node, e] of sourceNodes) {
      if (e.ctx.state === 'closed' || !liveIn(e.page)) sourceNodes.delete(node);
    }
    for (const r of recorders) {
      if (r.rec.state === 'inactive' && !liveIn(r.page)) recorders.delete(r);
    }
    for (const sh of shadows) if (!liveIn(sh.page)) shadows.delete(sh);
  }
  const makeShadow = (page: MediaStream) => new OrigMediaStream(origGetTracks.call(page).map(realOf));

  // ---- reporting -------------------------------------------------------------------------------------
  function stateOf(g: Group): GroupState {
    if (![...g.members].some((m) => !m.ended)) return 'ended';
    if (g.state === 'off') return 'released';
    return g.kept ? 'not_released' : 'capturing';
  }

  function report(): void {
    const out: GroupReport[] = [];
    for (const g of groups.values()) {
      const state = stateOf(g);
      if (state !== g.reported) {
        g.reported = state;
        g.since = dateNow();
      }
      const live = [...g.members].filter((m) => !m.ended);
      out.push({
        id: g.id,
        state,
        since_ms: g.since,
        reason: state === 'not_released' ? g.kept : null,
        label: g.label.slice(0, 200),
        tracks: live.length,
        enabled: live.filter((m) => m.enabled).length,
      });
      if (state === 'ended') groups.delete(g.deviceId);
    }
    bridge.report(realm, out);
  }

  // ---- policy ----------------------------------------------------------------------------------------
  function cancelTimer(g: Group): void {
    if (g.timer !== null) clearTimer(g.timer);
    g.timer = null;
  }

  function evaluate(g: Group): void {
    const cfg = bridge.config();
    const action = decideGroup(g.members, cfg.delayMs, now(), g.lastOnMs);
    if (action.kind !== 'release') {
      cancelTimer(g);
      g.kept = null;
      g.seq++;
      if (action.kind === 'on' && g.state === 'off') void acquire(g);
    } else if (g.state === 'on') {
      if (!cfg.release) {
        cancelTimer(g);
        g.kept = cfg.reason ?? 'release is off for this site';
      } else if (g.timer === null && g.kept === null) {
        const seq = ++g.seq;
        g.timer = setTimer(() => void fire(g, seq), action.waitMs);
      }
    }
    report();
  }

  const allDisabled = (g: Group) => decideGroup(g.members, 0, 0, 0).kind === 'release';

  function recording(g: Group): boolean {
    for (const r of recorders) {
      if (r.rec.state === 'inactive') continue;
      if (managedIn(r.page).some((m) => m.group === g && !m.ended)) return true;
    }
    return false;
  }

  async function fire(g: Group, seq: number): Promise<void> {
    g.timer = null;
    if (seq !== g.seq || g.state !== 'on' || !allDisabled(g)) return;
    if (recording(g)) {
      g.kept = RECORDING;
      report();
      return;
    }
    const [answer] = await Promise.all([
      bridge.askPolicy(g.label),
      ...[...g.members].map((m) => m.root.pinned),
    ]);
    if (seq !== g.seq || g.state !== 'on' || !allDisabled(g)) return;
    if (!answer.allow) {
      g.kept = answer.reason ?? 'kept open by policy';
      report();
      return;
    }
    release(g);
  }

  function release(g: Group): void {
    for (const m of g.members) {
      if (m.ended) continue;
      try {
        const ids = { deviceId: m.settings.deviceId, groupId: m.settings.groupId };
        m.settings = { ...origGetSettings.call(m.real), ...ids };
        m.capabilities = { ...origGetCapabilities.call(m.real), ...ids };
      } catch {}
      origStop.call(m.real);
    }
    g.state = 'off';
    report();
  }

  function failGroup(g: Group): void {
    g.state = 'off';
    for (const m of g.members) {
      if (m.ended) continue;
      m.ended = true;
      origStop.call(m.real);
      origDispatch.call(m.page, new OrigEvent('ended'));
    }
    report();
  }

  async function acquire(g: Group): Promise<void> {
    prune();
    g.state = 'acquiring';
    report();
    const roots = new Set<Root>();
    for (const m of g.members) if (!m.ended) roots.add(m.root);
    const fresh = new Map<Root, MediaStream>();
    try {
      for (const root of roots) {
        fresh.set(root, await origGUM.call(mediaDevices, { audio: root.constraints }));
      }
    } catch {
      for (const s of fresh.values()) for (const t of origGetTracks.call(s)) origStop.call(t);
      failGroup(g);
      return;
    }
    g.state = 'on';
    g.lastOnMs = now();
    const swapped: Member[] = [];
    for (const [root, stream] of fresh) {
      const base = origGetAudioTracks.call(stream)[0];
      if (!base) continue;
      // Members that need a live track: on this root, not stopped by the page, holding a dead real.
      const need = [...g.members].filter((m) => m.root === root && !m.ended && isEnded(m.real));
      if (need.length === 0) {
        origStop.call(base);
        continue;
      }
      need.forEach((m, i) => {
        swapIn(m, i === 0 ? base : origClone.call(base));
        swapped.push(m);
      });
    }
    if (swapped.some((m) => isEnded(m.real))) {
      failGroup(g); // the device went away between open and swap
      return;
    }
    rebindSourceNodes(swapped);
    feedRecorders(swapped);
    evaluate(g);
  }

  function watchReal(m: Member, real: Track): void {
    origAddListener.call(real, 'ended', () => {
      if (m.real !== real || m.ended) return;
      // The device went away (the page's stop() and our release never fire `ended`).
      m.ended = true;
      if (real !== m.page) origDispatch.call(m.page, new OrigEvent('ended'));
      evaluate(m.group);
    });
    if (real === m.page) return;
    for (const type of ['mute', 'unmute']) {
      origAddListener.call(real, type, () => {
        if (m.real === real && !m.ended) origDispatch.call(m.page, new OrigEvent(type));
      });
    }
  }

  function swapIn(m: Member, next: Track): void {
    const old = m.real;
    m.real = next;
    byReal.set(next, m);
    setEnabled.call(next, m.enabled);
    watchReal(m, next);
    if (m.applied) origApply.call(next, m.applied).catch(() => {});
    for (const s of m.senders) {
      // Only where the sender still carries the old track: one the page emptied (removeTrack,
      // replaceTrack(null)) or moved to another track stays as the page left it.
      const carried = senderTrack?.get(s);
      if (carried === old) origReplaceTrack?.call(s, next).catch(() => {});
      else if (carried !== next) m.senders.delete(s);
    }
    for (const sh of shadows) {
      if (!origGetTracks.call(sh.shadow).includes(old)) continue;
      origAddTrack.call(sh.shadow, next);
      origRemoveTrack.call(sh.shadow, old);
    }
  }

  // ---- recorders started while released ----------------------------------------------------------------
  type Generator = new (init: { kind: 'audio' }) => Feed['gen'];
  type Processor = new (init: { track: Track }) => { readable: ReadableStream };
  const OrigGenerator = (w as unknown as { MediaStreamTrackGenerator?: Generator }).MediaStreamTrackGenerator;
  const OrigProcessor = (w as unknown as { MediaStreamTrackProcessor?: Processor }).MediaStreamTrackProcessor;
  const origPipeTo = w.ReadableStream?.prototype.pipeTo;
  const OrigAbort = w.AbortController;

  /** Before a recorder starts: a released member's dead track in its stream would make start() throw
   * (NotSupportedError, where without micoff it records the disabled track's silence), so it gets a
   * live stand-in. */
  function standIns(r: RecorderEntry): void {
    if (!OrigGenerator) return;
    for (const t of origGetTracks.call(r.shadow)) {
      const m = byReal.get(t);
      if (!m || m.ended || !isEnded(t)) continue;
      const gen = new OrigGenerator({ kind: 'audio' });
      origAddTrack.call(r.shadow, gen);
      origRemoveTrack.call(r.shadow, t);
      r.feeds.push({ member: m, gen, abort: null, src: null });
    }
  }

  /** After a reacquire: pump the device into the stand-ins of recorders started while it was off (the
   * only case in which micoff touches audio frames; it ends with the recording). */
  function feedRecorders(swapped: Member[]): void {
    if (!OrigProcessor || !origPipeTo || !OrigAbort) return;
    for (const r of recorders) {
      for (const f of r.feeds) {
        if (f.abort || !swapped.includes(f.member) || isEnded(f.member.real)) continue;
        try {
          const src = origClone.call(f.member.real);
          const abort = new OrigAbort();
          const readable = new OrigProcessor({ track: src }).readable;
          origPipeTo.call(readable, f.gen.writable, { signal: abort.signal }).catch(() => {});
          Object.assign(f, { src, abort });
        } catch {}
      }
    }
  }

  /** The recording is over: the stand-ins go, the recorder's stream holds the members' tracks again. */
  function dropStandIns(r: RecorderEntry): void {
    for (const f of r.feeds) {
      f.abort?.abort();
      if (f.src) origStop.call(f.src);
      origAddTrack.call(r.shadow, f.member.real);
      origRemoveTrack.call(r.shadow, f.gen);
      origStop.call(f.gen);
    }
    r.feeds = [];
  }

  function rebindSourceNodes(swapped: Member[]): void {
    if (swapped.length === 0) return;
    for (const e of sourceNodes.values()) {
      if (!managedIn(e.page).some((m) => swapped.includes(m))) continue;
      try {
        const inner = origCreateSource?.call(e.ctx, makeShadow(e.page));
        if (!inner) continue;
        for (const c of e.conns) (origConnect as (...a: unknown[]) => unknown).apply(inner, c);
        if (e.inner) (origDisconnect as (this: AudioNode) => void).call(e.inner);
        e.inner = inner;
      } catch {} // a closed context: nothing to feed
    }
  }

  // ---- adoption --------------------------------------------------------------------------------------
  function groupFor(deviceId: string, label: string): Group {
    let g = groups.get(deviceId);
    if (!g) {
      g = {
        id: `${realm}.${nextGroup++}`,
        deviceId,
        label,
        members: new Set(),
        state: 'on',
        lastOnMs: now(),
        timer: null,
        kept: null,
        seq: 0,
        reported: null,
        since: dateNow(),
      };
      groups.set(deviceId, g);
    }
    return g;
  }

  function addMember(page: Track, real: Track, group: Group, root: Root, from?: Member): Member {
    const m: Member = {
      page,
      real,
      enabled: from ? from.enabled : getEnabled.call(page),
      ended: false,
      group,
      root,
      settings: from ? { ...from.settings } : origGetSettings.call(real),
      capabilities: from ? { ...from.capabilities } : origGetCapabilities.call(real),
      constraints: from ? { ...from.constraints } : origGetConstraints.call(real),
      applied: from?.applied ?? null,
      senders: new Set(),
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
    const id = concreteDeviceId(settings, await origEnumerate.call(mediaDevices));
    if (id) root.constraints = { ...root.constraints, deviceId: { exact: id } };
  }

  function adopt(stream: MediaStream, constraints: MediaStreamConstraints | undefined): void {
    let touched = false;
    for (const t of origGetAudioTracks.call(stream)) {
      if (members.has(t) || isEnded(t)) continue;
      const settings = origGetSettings.call(t);
      const deviceId = groupKey(settings);
      const root: Root = {
        constraints: reacquireConstraints(constraints?.audio, deviceId),
        pinned: Promise.resolve(),
      };
      root.pinned = pinDevice(root, settings).catch(() => {});
      const g = groupFor(deviceId, labelOf?.call(t) ?? '');
      addMember(t, t, g, root);
      touched = true;
    }
    if (!touched) return;
    hideInactive(stream);
    for (const g of groups.values()) evaluate(g);
  }

  // ---- getUserMedia ----------------------------------------------------------------------------------
  const gum = replaceMethod(
    MediaDevicesProto,
    'getUserMedia',
    (original) =>
      ({
        // Not `async`: the page could tell an AsyncFunction from the native method.
        getUserMedia(this: MediaDevices, constraints?: MediaStreamConstraints) {
          return original.call(this, constraints).then((stream) => {
            try {
              adopt(stream, constraints);
            } catch {}
            return stream;
          });
        },
      }).getUserMedia,
  );
  const patchedGUM = MediaDevicesProto.getUserMedia;

  // Legacy callback forms (navigator.webkitGetUserMedia, navigator.getUserMedia where present).
  const NavProto = w.Navigator.prototype as unknown as Record<string, unknown>;
  for (const name of ['getUserMedia', 'webkitGetUserMedia', 'mozGetUserMedia']) {
    replaceMethod(NavProto, name, () => {
      const legacy = {
        [name](
          this: Navigator,
          c: MediaStreamConstraints,
          ok: (s: MediaStream) => void,
          fail?: (e: unknown) => void,
        ) {
          patchedGUM.call(this.mediaDevices, c).then(ok, fail);
        },
      };
      return legacy[name] as unknown;
    });
  }
  if (!gum) return true;

  // ---- MediaStreamTrack ------------------------------------------------------------------------------
  replaceAccessor<boolean>(TrackProto, 'enabled', (o) => ({
    get(this: unknown) {
      const m = members.get(this as Track);
      return m ? m.enabled : o.get(this);
    },
    set(this: unknown, v: boolean) {
      o.set?.(this, v);
      const m = members.get(this as Track);
      if (!m) return;
      m.enabled = getEnabled.call(this as Track);
      if (m.real !== this && !m.ended) setEnabled.call(m.real, m.enabled);
      evaluate(m.group);
    },
  }));
  replaceAccessor<string>(TrackProto, 'readyState', (o) => ({
    get(this: unknown) {
      const m = members.get(this as Track);
      return m ? (m.ended ? 'ended' : 'live') : o.get(this);
    },
  }));
  replaceAccessor<boolean>(TrackProto, 'muted', (o) => ({
    get(this: unknown) {
      const m = members.get(this as Track);
      if (!m || m.ended) return o.get(this);
      return m.group.state === 'on' ? o.get(m.real) : false;
    },
  }));
  replaceMethod(
    TrackProto,
    'stop',
    (original) =>
      ({
        stop(this: Track) {
          const m = members.get(this);
          original.call(this);
          if (!m || m.ended) return;
          m.ended = true;
          if (m.real !== this) original.call(m.real);
          evaluate(m.group);
        },
      }).stop,
  );
  replaceMethod(
    TrackProto,
    'clone',
    (original) =>
      ({
        clone(this: Track) {
          const m = members.get(this);
          if (!m || m.ended) return original.call(this);
          const c = original.call(m.real);
          try {
            addMember(c, c, m.group, m.root, m);
            evaluate(m.group);
          } catch {}
          return c;
        },
      }).clone,
  );
  replaceMethod(
    TrackProto,
    'getSettings',
    (original) =>
      ({
        getSettings(this: Track) {
          const m = members.get(this);
          if (!m || m.ended) return original.call(this);
          if (m.group.state !== 'on' || isEnded(m.real)) return { ...m.settings };
          // After a reacquire the real track is on the pinned concrete device; the page asked for (and
          // saw) its own deviceId, e.g. "default".
          return { ...original.call(m.real), deviceId: m.settings.deviceId, groupId: m.settings.groupId };
        },
      }).getSettings,
  );
  replaceMethod(
    TrackProto,
    'getCapabilities',
    (original) =>
      ({
        getCapabilities(this: Track) {
          const m = members.get(this);
          if (!m || m.ended) return original.call(this);
          if (m.group.state !== 'on' || isEnded(m.real)) return { ...m.capabilities };
          return { ...original.call(m.real), deviceId: m.settings.deviceId, groupId: m.settings.groupId };
        },
      }).getCapabilities,
  );
  replaceMethod(
    TrackProto,
    'getConstraints',
    (original) =>
      ({
        getConstraints(this: Track) {
          const m = members.get(this);
          if (!m || m.ended) return original.call(this);
          // Released, or never re-applied: the page's own. Once the page applied constraints and the
          // device is on, the real track's (a reacquired track carries them because swapIn applied
          // them; without that this would read the reopen constraints with their exact deviceId).
          if (!m.applied || m.group.state !== 'on' || isEnded(m.real))
            return { ...(m.applied ?? m.constraints) };
          return original.call(m.real);
        },
      }).getConstraints,
  );
  replaceMethod(
    TrackProto,
    'applyConstraints',
    (original) =>
      ({
        applyConstraints(this: Track, c?: MediaTrackConstraints) {
          const m = members.get(this);
          if (!m || m.ended) return original.call(this, c);
          const next = { ...(c ?? {}) };
          if (m.group.state === 'on' && !isEnded(m.real)) {
            return original.call(m.real, c).then(() => {
              m.applied = next;
            });
          }
          // Released: keep it and apply it on reacquire (the spec lets constraints change while muted).
          m.applied = next;
          return Promise.resolve();
        },
      }).applyConstraints,
  );

  // ---- MediaStream -----------------------------------------------------------------------------------
  replaceAccessor<boolean>(StreamProto, 'active', (o) => ({
    get(this: unknown) {
      return o.get(this) || liveIn(this as MediaStream);
    },
  }));
  replaceMethod(
    StreamProto,
    'clone',
    (original) =>
      ({
        clone(this: MediaStream) {
          if (managedIn(this).length === 0) return original.call(this);
          // Through the patched track clone, so clones of released tracks are covered too.
          const copy = new OrigMediaStream(origGetTracks.call(this).map((t) => TrackProto.clone.call(t)));
          hideInactive(copy);
          return copy;
        },
      }).clone,
  );
  replaceMethod(
    StreamProto,
    'addTrack',
    (original) =>
      ({
        addTrack(this: MediaStream, t: Track) {
          original.call(this, t);
          if (members.has(t)) hideInactive(this);
        },
      }).addTrack,
  );
  replaceConstructor<typeof MediaStream>(w, 'MediaStream', (Original, args, newTarget) => {
    const stream = construct(Original, args, newTarget) as MediaStream;
    if (managedIn(stream).length > 0) hideInactive(stream);
    return stream;
  });

  // ---- RTCPeerConnection / RTCRtpSender -------------------------------------------------------------
  const SenderProto = w.RTCRtpSender?.prototype;
  const PcProto = w.RTCPeerConnection?.prototype;
  const origReplaceTrack = SenderProto?.replaceTrack;
  const attach = (sender: RTCRtpSender, track: Track | null) => {
    for (const g of groups.values()) for (const m of g.members) m.senders.delete(sender);
    const m = track ? members.get(track) : undefined;
    m?.senders.add(sender);
  };
  const senderTrack = replaceAccessor<Track | null>(SenderProto, 'track', (o) => ({
    get(this: unknown) {
      const t = o.get(this);
      return (t && byReal.get(t)?.page) || t;
    },
  }));
  replaceMethod(
    SenderProto,
    'replaceTrack',
    (original) =>
      ({
        replaceTrack(this: RTCRtpSender, track: Track | null) {
          const m = track ? members.get(track) : undefined;
          const p = original.call(this, m ? m.real : track);
          p.then(() => attach(this, track)).catch(() => {});
          return p;
        },
      }).replaceTrack,
  );
  replaceMethod(
    PcProto,
    'addTrack',
    (original) =>
      ({
        addTrack(this: RTCPeerConnection, track: Track, ...streams: MediaStream[]) {
          const m = members.get(track);
          const sender = original.call(this, m ? m.real : track, ...streams);
          if (m) attach(sender, track);
          return sender;
        },
      }).addTrack,
  );
  replaceMethod(
    PcProto,
    'addTransceiver',
    (original) =>
      ({
        addTransceiver(this: RTCPeerConnection, what: Track | string, init?: RTCRtpTransceiverInit) {
          const m = typeof what === 'string' ? undefined : members.get(what);
          const tr = original.call(this, m ? m.real : what, init);
          if (m) attach(tr.sender, what as Track);
          return tr;
        },
      }).addTransceiver,
  );

  // ---- media elements (srcObject) and MediaRecorder: private shadow streams --------------------------
  const shadowed = (page: MediaStream): MediaStream => {
    const shadow = makeShadow(page);
    shadows.add({ page, shadow });
    shadowPage.set(shadow, page);
    return shadow;
  };
  replaceAccessor<MediaProvider | null>(w.HTMLMediaElement?.prototype, 'srcObject', (o) => ({
    get(this: unknown) {
      const v = o.get(this);
      return (v instanceof OrigMediaStream && shadowPage.get(v)) || v;
    },
    set(this: unknown, v: MediaProvider | null) {
      const prev = o.get(this);
      if (prev instanceof OrigMediaStream && shadowPage.has(prev)) {
        for (const s of shadows) if (s.shadow === prev) shadows.delete(s);
      }
      o.set?.(this, v instanceof OrigMediaStream && managedIn(v).length > 0 ? shadowed(v) : v);
    },
  }));
  if (w.MediaRecorder) {
    const recStreamOf = Object.getOwnPropertyDescriptor(w.MediaRecorder.prototype, 'stream')?.get;
    replaceConstructor<typeof MediaRecorder>(w, 'MediaRecorder', (Original, args, newTarget) => {
      const [stream, ...rest] = args as [MediaStream, ...unknown[]];
      const managed = stream instanceof OrigMediaStream && managedIn(stream).length > 0;
      const rec = construct(
        Original,
        [managed ? shadowed(stream) : stream, ...rest],
        newTarget,
      ) as MediaRecorder;
      if (managed) {
        const shadow = recStreamOf?.call(rec) as MediaStream;
        const entry: RecorderEntry = { rec, page: stream, shadow, feeds: [] };
        recorders.add(entry);
        recorderOf.set(rec, entry);
        // A recorder that stops may let a muted device go: the reason it was kept no longer holds.
        origAddListener.call(rec, 'stop', () => {
          dropStandIns(entry);
          for (const m of managedIn(stream)) {
            if (m.group.kept === RECORDING) m.group.kept = null;
            evaluate(m.group);
          }
        });
      }
      return rec;
    });
    replaceMethod(
      w.MediaRecorder.prototype,
      'start',
      (original) =>
        ({
          start(this: MediaRecorder, timeslice?: number) {
            const r = recorderOf.get(this);
            if (r) {
              try {
                standIns(r);
              } catch {}
            }
            return original.call(this, timeslice);
          },
        }).start,
    );
    replaceAccessor<MediaStream>(w.MediaRecorder.prototype, 'stream', () => ({
      get(this: unknown) {
        const s = recStreamOf?.call(this) as MediaStream;
        return shadowPage.get(s) ?? s;
      },
    }));
  }

  // ---- WebAudio source nodes -------------------------------------------------------------------------
  const CtxProto = w.AudioContext?.prototype;
  const NodeProto = w.AudioNode?.prototype;
  const origCreateSource = CtxProto?.createMediaStreamSource;
  const origConnect = NodeProto?.connect;
  const origDisconnect = NodeProto?.disconnect;
  const track = (ctx: BaseAudioContext, page: MediaStream, node: AudioNode): AudioNode => {
    sourceNodes.set(node, { ctx, page, inner: null, conns: [] });
    return node;
  };
  replaceMethod(
    CtxProto,
    'createMediaStreamSource',
    (original) =>
      ({
        createMediaStreamSource(this: AudioContext, s: MediaStream) {
          if (!(s instanceof OrigMediaStream) || managedIn(s).length === 0) return original.call(this, s);
          return track(this, s, original.call(this, makeShadow(s))) as MediaStreamAudioSourceNode;
        },
      }).createMediaStreamSource,
  );
  if (w.MediaStreamAudioSourceNode) {
    const NodeCtor = w.MediaStreamAudioSourceNode;
    const streamOf = Object.getOwnPropertyDescriptor(NodeCtor.prototype, 'mediaStream')?.get;
    replaceConstructor<typeof MediaStreamAudioSourceNode>(w, 'MediaStreamAudioSourceNode', (O, a, nt) => {
      const [ctx, init] = a as [BaseAudioContext, MediaStreamAudioSourceOptions];
      const s = init?.mediaStream;
      if (!(s instanceof OrigMediaStream) || managedIn(s).length === 0) return construct(O, a, nt);
      const node = construct(O, [ctx, { ...init, mediaStream: makeShadow(s) }], nt) as AudioNode;
      return track(ctx, s, node);
    });
    const pageStreams = new WeakMap<AudioNode, MediaStream>();
    replaceAccessor<MediaStream>(NodeCtor.prototype, 'mediaStream', () => ({
      get(this: unknown) {
        const e = sourceNodes.get(this as AudioNode);
        return e ? e.page : (pageStreams.get(this as AudioNode) ?? (streamOf?.call(this) as MediaStream));
      },
    }));
  }
  // Method shorthand, like every replacement: not constructible and without a `prototype`, as natives.
  replaceMethod(NodeProto, 'connect', (original) => {
    const { connect } = {
      connect(this: AudioNode, ...args: unknown[]) {
        const out = (original as (...a: unknown[]) => unknown).apply(this, args);
        const e = sourceNodes.get(this);
        if (e) {
          e.conns.push(args);
          if (e.inner) (original as (...a: unknown[]) => unknown).apply(e.inner, args);
        }
        return out;
      },
    };
    return connect as unknown as AudioNode['connect'];
  });
  replaceMethod(NodeProto, 'disconnect', (original) => {
    const { disconnect } = {
      disconnect(this: AudioNode, ...args: unknown[]) {
        const out = (original as (...a: unknown[]) => unknown).apply(this, args);
        const e = sourceNodes.get(this);
        if (e) {
          e.conns = e.conns.filter((c) => !disconnects(args, c));
          try {
            if (e.inner) (original as (...a: unknown[]) => unknown).apply(e.inner, args);
          } catch {}
        }
        return out;
      },
    };
    return disconnect as unknown as AudioNode['disconnect'];
  });

  // ---- same-origin child frames reached before their own page.js ran -----------------------------------
  for (const [proto, key] of [
    [w.HTMLIFrameElement?.prototype, 'contentWindow'],
    [w.HTMLIFrameElement?.prototype, 'contentDocument'],
  ] as const) {
    replaceAccessor<unknown>(proto, key, (o) => ({
      get(this: unknown) {
        const v = o.get(this);
        try {
          const child = (key === 'contentWindow' ? v : (v as Document | null)?.defaultView) as Realm | null;
          if (child && opts.onChildRealm) opts.onChildRealm(child);
        } catch {} // cross-origin: its own page.js covers it
        return v;
      },
    }));
  }

  bridge.onConfig(() => {
    for (const g of groups.values()) {
      cancelTimer(g);
      g.kept = null;
      evaluate(g);
    }
  });
  return true;
}
