// Insertable streams: a MediaStreamTrackProcessor reads a track's frames in page code micoff does not
// follow (a transform, often in a worker), so it counts as hearing that track (audibility.ts).
import { KEPT } from '../../shared/release-decision.ts';
import { replaceConstructor } from '../natives.ts';
import type { Originals, Realm, Track } from '../originals.ts';
import type { TrackRegistry } from '../track-registry.ts';

export function patchInsertable(w: Realm, o: Originals, reg: TrackRegistry): void {
  const read = new WeakSet<Track>();
  reg.addConsumers((t) => (read.has(t) ? [{ kind: 'sink', why: KEPT.unseen }] : []));
  const TrackC = w.MediaStreamTrack;
  if (!o.TrackProcessor) return;
  replaceConstructor(w, 'MediaStreamTrackProcessor', (Original, args, newTarget) => {
    const out = o.construct(Original as never, args, newTarget) as object;
    const t = (args[0] as { track?: unknown } | undefined)?.track;
    if (t instanceof TrackC) {
      read.add(t as Track);
      reg.markSeen(t as Track);
      reg.evaluateAll();
    }
    return out;
  });
}
