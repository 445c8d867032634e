// MediaStreamTrack: a member's page-visible track reads as the page left it (enabled, live, its own
// settings and constraints) whether the device is on, released or being reopened; enabling, stopping
// and cloning it feed the group machine. Other tracks (derived ones: a WebAudio destination's, a
// generator's) feed the audio graph (audibility.ts): enabling one decides again, and a clone of one is
// one more consumer of it.
import type { Originals, Realm, Track } from '../../common/originals.ts';
import { replaceAccessor, replaceMethod } from '../../common/originals.ts';
import { applyEnabled } from '../registry/members.ts';
import type { Member, TrackRegistry } from '../track-registry.ts';

export function patchTrack(_w: Realm, o: Originals, reg: TrackRegistry): void {
  const { members } = reg;
  const TrackProto = o.TrackProto;
  const clonesOf = new WeakMap<Track, Track[]>();
  reg.setClones((t) => clonesOf.get(t) ?? []);
  replaceAccessor<boolean>(TrackProto, 'enabled', (orig) => ({
    get(this: unknown) {
      const m = members.get(this as Track);
      return m ? m.enabled : orig.get(this);
    },
    set(this: unknown, v: boolean) {
      orig.set?.(this, v);
      const m = members.get(this as Track);
      if (!m) {
        reg.evaluateAll();
        return;
      }
      m.enabled = o.getEnabled.call(this as Track);
      applyEnabled(o, m);
      reg.evaluate(m.group);
    },
  }));
  replaceAccessor<string>(TrackProto, 'readyState', (orig) => ({
    get(this: unknown) {
      const m = members.get(this as Track);
      return m ? (m.ended ? 'ended' : 'live') : orig.get(this);
    },
  }));
  replaceAccessor<boolean>(TrackProto, 'muted', (orig) => ({
    get(this: unknown) {
      const m = members.get(this as Track);
      if (!m || m.ended) return orig.get(this);
      return m.group.state === 'on' ? orig.get(m.real) : false;
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
          reg.markEnded(m);
          if (m.real !== this) original.call(m.real);
          reg.evaluate(m.group);
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
          if (!m || m.ended) {
            const c = original.call(this);
            if (!m) {
              const list = clonesOf.get(this) ?? [];
              list.push(c);
              clonesOf.set(this, list);
            }
            return c;
          }
          const c = original.call(m.real);
          try {
            reg.addMember(c, c, m.group, m.root, m);
            reg.evaluate(m.group);
          } catch {}
          return c;
        },
      }).clone,
  );
  // While released (or the real track is dead), what the page read before; once on, the real track's.
  // After a reacquire the real track is on the pinned concrete device; the page asked for (and saw)
  // its own deviceId, e.g. "default".
  const deviceReads = [
    ['getSettings', (m: Member) => m.settings],
    ['getCapabilities', (m: Member) => m.capabilities],
  ] as const;
  for (const [key, saved] of deviceReads) {
    replaceMethod(TrackProto, key, (original) => {
      const read = original as (this: Track) => object;
      const { method } = {
        method(this: Track) {
          const m = members.get(this);
          if (!m || m.ended) return read.call(this);
          if (m.group.state !== 'on' || o.isEnded(m.real)) return { ...saved(m) };
          return { ...read.call(m.real), deviceId: m.settings.deviceId, groupId: m.settings.groupId };
        },
      };
      return method as Track[typeof key];
    });
  }
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
          if (!m.applied || m.group.state !== 'on' || o.isEnded(m.real))
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
          if (m.group.state === 'on' && !o.isEnded(m.real)) {
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
}
