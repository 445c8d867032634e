// The getUserMedia interposition ("facade swap", docs/design/release-on-mute.md): when nothing hears a
// device, its real tracks stop (released) while the page's objects read as before; when something does,
// the original getUserMedia reopens it and the fresh tracks go in behind the page's senders, elements,
// WebAudio nodes and clones. Nothing runs per audio frame. This file only wires one realm: originals
// (common/), the registry, the group machine (machine/), the guards (guards/) and the patches (patch/).
// Hostile territory: a failure in our bookkeeping never breaks the page's own call.

import { reopenOutlastsKey, slowReopenStreak } from '../../shared/first-words.ts';
import { KEPT } from '../../shared/release-decision.ts';
import { DEFAULT_SETTINGS } from '../../shared/settings.ts';
import type { Bridge } from '../common/bridge.ts';
import { keepSending } from '../common/far-end.ts';
import {
  captureOriginals,
  maskToString,
  type Originals,
  type Realm,
  type Track,
} from '../common/originals.ts';
import { createCaptureWatch } from './guards/capture-watch.ts';
import { createEchoGuard } from './guards/echo-guard.ts';
import { createFirstAudio, type Tap } from './guards/first-audio.ts';
import { createGrantKeeper, KEEPALIVE_HOLD_MS } from './guards/grant-keeper.ts';
import { createIntent, PRIME_HOLD_MS } from './guards/intent.ts';
import { listenForIntent } from './guards/intent-listeners.ts';
import { createPermissionWatch } from './guards/permission-watch.ts';
import { createGroupMachine, machineRelay } from './machine/group-machine.ts';
import { patchFrames } from './patch/frames.ts';
import { patchGetUserMedia } from './patch/get-user-media.ts';
import { patchInsertable } from './patch/insertable/index.ts';
import { patchMediaElement } from './patch/media-element.ts';
import { patchRecorder } from './patch/recorder.ts';
import { patchRtc } from './patch/rtc.ts';
import { patchStream } from './patch/stream.ts';
import { patchTrack } from './patch/track.ts';
import { patchWebAudio } from './patch/webaudio.ts';
import { applyEnabled, liveMembers } from './registry/members.ts';
import { createOpen } from './registry/reopen.ts';
import { createTrackRegistry, type Group, type Member } from './track-registry.ts';

const MARK = Symbol.for('micoff.page');

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

  const o = captureOriginals(w);
  if (!o) return true;
  const { bridge, realm } = opts;

  const timers = {
    now: o.now,
    setTimer: (cb: () => void, ms: number) => o.setTimeout(cb, ms),
    clearTimer: (handle: unknown) => o.clearTimeout(handle as number),
  };
  // The registry and the grant keeper hand decisions to the group machine, which acts through them:
  // they are built first against this relay, and the machine is connected to it once built.
  const toMachine = machineRelay<Group>();
  const permission = createPermissionWatch(o);
  const reg = createTrackRegistry(o, realm, toMachine, createOpen(o, permission.state));
  const released = () => [...reg.groups.values()].filter((g) => g.state === 'off' && g.silenced);
  const page = o.page;
  // One-time grants stay alive while the page is hidden and released (grant-keeper.ts).
  const keeper = createGrantKeeper<Group>({
    ...timers,
    everyMs: () => bridge.config().keepalive_ms ?? DEFAULT_SETTINGS.grantKeepaliveMs,
    hidden: () => (page ? !page.visible() : false),
    released,
    capturing: () => [...reg.groups.values()].some((g) => g.state !== 'off'),
    keepalive: (g) => toMachine.prime(g, KEEPALIVE_HOLD_MS, KEPT.keepalive),
  });
  reg.onRequest(() => permission.start(keeper.requested));
  // A fresh capture's echo canceller converges before the far end hears it (echo-guard.ts).
  const echo = createEchoGuard({
    ...timers,
    farEndLevel: reg.farEndLevel,
    hold: (m: Member, on: boolean) => {
      m.heldBack = on;
      applyEnabled(o, m);
    },
  });
  reg.onSwapped((swapped) => {
    void reg.refreshOwnStreams();
    echo.opened(swapped);
  });
  reg.onEnded((m) => echo.drop(m));
  const report = () => bridge.report(realm, reg.report(keeper.mayExpire()));
  // How long each open takes to deliver audio, for the background's first-words rule (first-audio.ts).
  const firstAudio = createFirstAudio<Group, Track>({
    ...timers,
    dateNow: o.dateNow,
    tap: (track) => tapFrames(o, track),
    measured: (g, sample) => {
      g.firstAudio = sample;
      g.slowReopens = slowReopenStreak(g.slowReopens, sample);
      report();
    },
  });
  reg.onOpened((g, track) => firstAudio.watch(g, track, o.now()));
  // The page stopped the device's last track: the tap must not keep the device open.
  reg.onEnded((m) => {
    if (liveMembers(m.group).length === 0) firstAudio.cut(m.group);
  });
  // A capture that stops delivering under an enabled track is reopened (capture-watch.ts), unless
  // something holds the device that a reopen would break (a recording); the machine it acts through is
  // built below.
  let restart: (g: Group) => void = () => {};
  // In a hidden tab the page's timers run at most once a second: while the watch reads there, the
  // background's ticks, on the watch's schedule, run its reads (capture-watch.ts `poke`).
  let watchEveryMs: number | null = null;
  const hidden = () => page !== null && !page.visible();
  const wantTicks = () => bridge.ticks(realm, hidden() ? watchEveryMs : null);
  const watch = createCaptureWatch<Group, Track>({
    ...timers,
    watched: () =>
      [...reg.groups.values()].filter(
        (g) => g.state === 'on' && liveMembers(g).some((m) => m.enabled) && reg.holdReason(g) === null,
      ),
    read: (g) => {
      const m = liveMembers(g).find((x) => x.enabled && !x.heldBack);
      // A track the system muted may deliver nothing by design: not watched while muted.
      const audioMs = m && !o.muted.call(m.real) && o.getEnabled.call(m.real) ? framesOf(o, m.real) : null;
      return m && audioMs !== null ? { track: m.real, audioMs } : null;
    },
    stalled: (g) => restart(g),
    onSchedule: (everyMs, soonMs) => {
      watchEveryMs = everyMs;
      wantTicks();
      if (soonMs !== null && hidden()) bridge.tickOnce(soonMs);
    },
  });
  bridge.onTick(() => watch.poke());
  if (page) o.addEventListener.call(page.document, 'visibilitychange', wantTicks);
  // What a user does before unmuting reopens a released device ahead of the unmute (intent.ts).
  const intent = page ? createIntent({ now: o.now, interactive: page.interactive }) : null;

  const machine = createGroupMachine<Group>({
    ...timers,
    config: () => bridge.config(),
    holdReason: reg.holdReason,
    // A device that reopens slower than the page's unmute key gives stays open (first-words.ts).
    slowReopen: (g) =>
      reopenOutlastsKey(g.slowReopens, g.firstAudio, (intent?.learned().keys.length ?? 0) > 0) !== null
        ? KEPT.slowReopen
        : null,
    askPolicy: async (g) => {
      const [answer] = await Promise.all([
        bridge.askPolicy(g.label),
        ...[...g.members].map((m) => m.root.pinned),
      ]);
      return answer;
    },
    stopTracks: (g) => {
      firstAudio.cut(g);
      for (const m of g.members) echo.drop(m);
      reg.stopTracks(g, keepSending(bridge.config(), w));
    },
    reacquire: async (g) => {
      const start = o.now();
      const reopened = await reg.reacquire(g);
      const fresh = reopened.ok ? liveMembers(g)[0] : undefined;
      if (fresh) firstAudio.watch(g, fresh.real, start, o.now());
      return reopened;
    },
    endTracks: (g) => {
      firstAudio.cut(g);
      reg.endTracks(g);
    },
    present: async (g) => {
      const listed = new Set(
        (await o.enumerateDevices.call(o.mediaDevices))
          .filter((d) => d.kind === 'audioinput')
          .map((d) => d.deviceId),
      );
      return liveMembers(g).every((m) => {
        const id = exactDeviceId(m.root.constraints.deviceId);
        return id === null || listed.has(id);
      });
    },
    changed: () => {
      keeper.changed();
      watch.changed();
      report();
    },
    audibility: (g) => reg.audibility(g, bridge.config().paths ?? true),
    heard: () => intent?.noteUnmute(),
  });
  toMachine.connect(machine);
  restart = (g) => machine.restart(g);
  if (page && intent) {
    listenForIntent(o, page, intent, () => {
      for (const g of released()) machine.prime(g, PRIME_HOLD_MS, KEPT.primed);
    });
    o.addEventListener.call(page.document, 'visibilitychange', () => keeper.changed());
  }

  if (!patchGetUserMedia(w, o, reg)) return true;
  patchTrack(w, o, reg);
  patchStream(w, o, reg);
  patchRtc(w, o, reg);
  patchMediaElement(w, o, reg);
  patchWebAudio(w, o, reg);
  patchRecorder(w, o, reg);
  patchInsertable(w, o, reg);
  patchFrames(w, opts.onChildRealm);

  bridge.onConfig(() => {
    for (const g of reg.groups.values()) machine.reconsider(g);
  });
  return true;
}

/** The device a reopen asks for (`deviceId: { exact }`, pinned at getUserMedia), or null for any. */
function exactDeviceId(c: ConstrainDOMString | undefined): string | null {
  if (typeof c === 'string') return c;
  const exact = c && typeof c === 'object' && !Array.isArray(c) ? c.exact : undefined;
  if (typeof exact === 'string') return exact;
  return Array.isArray(exact) && typeof exact[0] === 'string' ? exact[0] : null;
}

/** How much audio (ms) a live track has had (only an enabled track's frames are counted), or null when
 * it cannot tell (ended, no frame count in this browser). */
function framesOf(o: Originals, track: Track): number | null {
  const { trackStats, totalFramesDuration } = o;
  if (!trackStats || !totalFramesDuration || o.isEnded(track)) return null;
  const stats = trackStats.call(track);
  return stats ? totalFramesDuration.call(stats) : null;
}

/** A tap on a fresh real track (guards/first-audio.ts): an enabled clone of its own (a disabled track's
 * frames are not counted), never seen by the page; null where the browser keeps no frame count. */
function tapFrames(o: Originals, track: Track): Tap | null {
  const { trackStats, totalFramesDuration } = o;
  if (!trackStats || !totalFramesDuration) return null;
  const clone = o.clone.call(track);
  o.setEnabled.call(clone, true);
  return {
    audioMs: () => framesOf(o, clone),
    stop: () => o.stop.call(clone),
  };
}
