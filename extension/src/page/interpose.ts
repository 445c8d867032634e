// The getUserMedia interposition (design (b) "facade swap", docs/design/release-on-mute.md): the page
// keeps the real track Chromium gave it. When every live track on a device is disabled we stop the real
// tracks (the device is released) while the page-visible state reads as before; when one is enabled we
// call the original getUserMedia with the same constraints (exact deviceId) and swap the new track in
// behind the page's objects: RTCRtpSender (replaceTrack), media elements and WebAudio source nodes
// (private shadow streams), clones. Nothing runs per audio frame, so unmuted costs nothing.
//
// This file only wires one realm together:
//   originals.ts       every built-in used after install, captured first
//   track-registry.ts  members, groups, shadows; the effects on real tracks (parts in registry/)
//   group-machine.ts   evaluate / release / acquire (pure, unit-tested)
//   audibility.ts      can anything hear the device? (pure, unit-tested; patches record the graph)
//   patch/*.ts         the patched surfaces, each patchX(window, originals, registry)
// Hostile territory: a failure in our bookkeeping never breaks the page's own call (errors are
// swallowed, the original result returned).
import type { Bridge } from './bridge.ts';
import { createGroupMachine } from './group-machine.ts';
import { maskToString } from './natives.ts';
import { captureOriginals, type Realm } from './originals.ts';
import { patchFrames } from './patch/frames.ts';
import { patchGetUserMedia } from './patch/get-user-media.ts';
import { patchInsertable } from './patch/insertable.ts';
import { patchMediaElement } from './patch/media-element.ts';
import { patchRecorder } from './patch/recorder.ts';
import { patchRtc } from './patch/rtc.ts';
import { patchStream } from './patch/stream.ts';
import { patchTrack } from './patch/track.ts';
import { patchWebAudio } from './patch/webaudio.ts';
import { createTrackRegistry, type Group } from './track-registry.ts';

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

  const reg = createTrackRegistry(o, realm, {
    evaluate: (g) => machine.evaluate(g),
    unhold: (g, reason) => machine.unhold(g, reason),
  });
  const machine = createGroupMachine<Group>({
    now: o.now,
    setTimer: (cb, ms) => o.setTimeout(cb, ms),
    clearTimer: (handle) => o.clearTimeout(handle as number),
    config: () => bridge.config(),
    holdReason: reg.holdReason,
    askPolicy: async (g) => {
      const [answer] = await Promise.all([
        bridge.askPolicy(g.label),
        ...[...g.members].map((m) => m.root.pinned),
      ]);
      return answer;
    },
    stopTracks: reg.stopTracks,
    reacquire: reg.reacquire,
    endTracks: reg.endTracks,
    changed: () => bridge.report(realm, reg.report()),
    audibility: (g) => reg.audibility(g, bridge.config().paths ?? true),
  });

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
