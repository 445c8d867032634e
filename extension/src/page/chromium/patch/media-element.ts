// Media elements: `srcObject = stream` with a managed track plays a private shadow stream of the real
// tracks (swapped on reacquire); the page reads its own stream back. An element with a stream counts
// as hearing its tracks (audibility.ts), playing or not: play() needs no notice.
import { KEPT } from '../../../shared/release-decision.ts';
import { type Originals, type Realm, replaceAccessor } from '../../common/originals.ts';
import type { TrackRegistry } from '../track-registry.ts';

export function patchMediaElement(w: Realm, o: Originals, reg: TrackRegistry): void {
  const playing = new Map<unknown, MediaStream>(); // element -> the page's stream
  reg.addConsumers((t) =>
    [...playing.values()].some((s) => o.getTracks.call(s).includes(t))
      ? [{ kind: 'sink', why: KEPT.element }]
      : [],
  );
  reg.onPrune(() => {
    for (const [el, s] of playing) {
      if (o.getTracks.call(s).every((t) => reg.members.get(t)?.ended ?? o.isEnded(t))) playing.delete(el);
    }
  });
  replaceAccessor<MediaProvider | null>(w.HTMLMediaElement?.prototype, 'srcObject', (orig) => ({
    get(this: unknown) {
      const v = orig.get(this);
      return (v instanceof o.MediaStream && reg.shadowPage.get(v)) || v;
    },
    set(this: unknown, v: MediaProvider | null) {
      const prev = orig.get(this);
      if (prev instanceof o.MediaStream && reg.shadowPage.has(prev)) reg.dropShadow(prev);
      orig.set?.(this, v instanceof o.MediaStream && reg.managedIn(v).length > 0 ? reg.shadowed(v) : v);
      if (v instanceof o.MediaStream) playing.set(this, v);
      else playing.delete(this);
      reg.evaluateAll();
    },
  }));
}
