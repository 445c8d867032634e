// Media elements: `srcObject = stream` with a managed track plays a private shadow stream of the real
// tracks (swapped on reacquire); the page reads its own stream back.
import { replaceAccessor } from '../natives.ts';
import type { Originals, Realm } from '../originals.ts';
import type { TrackRegistry } from '../track-registry.ts';

export function patchMediaElement(w: Realm, o: Originals, reg: TrackRegistry): void {
  replaceAccessor<MediaProvider | null>(w.HTMLMediaElement?.prototype, 'srcObject', (orig) => ({
    get(this: unknown) {
      const v = orig.get(this);
      return (v instanceof o.MediaStream && reg.shadowPage.get(v)) || v;
    },
    set(this: unknown, v: MediaProvider | null) {
      const prev = orig.get(this);
      if (prev instanceof o.MediaStream && reg.shadowPage.has(prev)) reg.dropShadow(prev);
      orig.set?.(this, v instanceof o.MediaStream && reg.managedIn(v).length > 0 ? reg.shadowed(v) : v);
    },
  }));
}
