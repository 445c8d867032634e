// MediaStream: a stream holding a managed track stays `active` (and fires no `inactive`) while the
// device is released; clones go through the patched track clone so they join the group.
import type { Originals, Realm, Track } from '../../common/originals.ts';
import { followMethod, replaceAccessor, replaceConstructor, replaceMethod } from '../../common/originals.ts';
import type { TrackRegistry } from '../track-registry.ts';

export function patchStream(w: Realm, o: Originals, reg: TrackRegistry): void {
  const StreamProto = o.StreamProto;
  const TrackProto = o.TrackProto;
  replaceAccessor<boolean>(StreamProto, 'active', (orig) => ({
    get(this: unknown) {
      return orig.get(this) || reg.liveIn(this as MediaStream);
    },
  }));
  replaceMethod(
    StreamProto,
    'clone',
    (original) =>
      ({
        clone(this: MediaStream) {
          if (reg.managedIn(this).length === 0) return original.call(this);
          // Through the patched track clone, so clones of released tracks are covered too.
          const copy = new o.MediaStream(o.getTracks.call(this).map((t) => TrackProto.clone.call(t)));
          reg.hideInactive(copy);
          return copy;
        },
      }).clone,
  );
  followMethod(StreamProto, 'addTrack', (stream, [t]) => {
    if (reg.members.has(t as Track)) reg.hideInactive(stream);
  });
  replaceConstructor<typeof MediaStream>(w, 'MediaStream', (Original, args, newTarget) => {
    const stream = o.construct(Original, args, newTarget) as MediaStream;
    if (reg.managedIn(stream).length > 0) reg.hideInactive(stream);
    return stream;
  });
}
