// getUserMedia (and its legacy callback forms): the page gets Chromium's own stream; its audio tracks
// become members of their device's group (track-registry.ts) with the constraints to reopen them.
// A `latency` request that would cost echo cancellation is guarded first (latency-guard.ts): the
// browser gets `echoCancellation: true` added, the page's getConstraints() still reads what it asked.
import { groupKey, reacquireConstraints } from '../../common/device-groups.ts';
import { type Originals, type Realm, replaceMethod } from '../../common/originals.ts';
import { guardLatency, guardReason, unguardedConstraints } from '../guards/latency-guard.ts';
import type { Root, TrackRegistry } from '../track-registry.ts';

/** Returns false when getUserMedia could not be replaced (then nothing else is worth patching). */
export function patchGetUserMedia(w: Realm, o: Originals, reg: TrackRegistry): boolean {
  function adopt(
    stream: MediaStream,
    constraints: MediaStreamConstraints | undefined,
    guard: string | null,
  ): void {
    let touched = false;
    for (const t of o.getAudioTracks.call(stream)) {
      if (reg.members.has(t) || o.isEnded(t)) continue;
      const settings = o.getSettings.call(t);
      const deviceId = groupKey(settings);
      const root: Root = {
        constraints: reacquireConstraints(constraints?.audio, deviceId),
        pinned: Promise.resolve(),
      };
      root.pinned = reg.pinDevice(root, settings).catch(() => {});
      const g = reg.groupFor(deviceId, o.label.call(t));
      const m = reg.addMember(t, t, g, root);
      if (guard) {
        m.guard = guard;
        m.constraints = unguardedConstraints(m.constraints);
      }
      reg.opened(g, t);
      touched = true;
    }
    if (!touched) return;
    reg.hideInactive(stream);
    for (const g of reg.groups.values()) reg.evaluate(g);
  }

  const gum = replaceMethod(
    o.MediaDevicesProto,
    'getUserMedia',
    (original) =>
      ({
        // Not `async`: the page could tell an AsyncFunction from the native method.
        getUserMedia(this: MediaDevices, constraints?: MediaStreamConstraints) {
          let asked = constraints;
          let guard: string | null = null;
          try {
            if (constraints?.audio) reg.requested();
            const g = guardLatency(constraints);
            asked = g.constraints;
            guard = g.guarded ? guardReason(g.asked) : null;
          } catch {}
          return original.call(this, asked).then((stream) => {
            try {
              // Reopened with what the browser was asked: a reacquired track stays processed.
              adopt(stream, asked, guard);
            } catch {}
            return stream;
          });
        },
      }).getUserMedia,
  );
  const patchedGUM = o.MediaDevicesProto.getUserMedia;

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
  return gum !== null;
}
