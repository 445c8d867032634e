// Same-origin child frames reached (iframe.contentWindow / contentDocument) before their own page.js
// ran: patched from here, through `onChildRealm`.
import { type Realm, replaceAccessor } from '../../common/originals.ts';

export function patchFrames(w: Realm, onChildRealm: ((child: Realm) => void) | undefined): void {
  for (const [proto, key] of [
    [w.HTMLIFrameElement?.prototype, 'contentWindow'],
    [w.HTMLIFrameElement?.prototype, 'contentDocument'],
  ] as const) {
    replaceAccessor<unknown>(proto, key, (o) => ({
      get(this: unknown) {
        const v = o.get(this);
        try {
          const child = (key === 'contentWindow' ? v : (v as Document | null)?.defaultView) as Realm | null;
          if (child && onChildRealm) onChildRealm(child);
        } catch {} // cross-origin: its own page.js covers it
        return v;
      },
    }));
  }
}
