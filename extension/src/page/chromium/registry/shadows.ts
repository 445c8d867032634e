// Private streams behind media elements and recorders (shadows): the page's stream with the real tracks
// in place of the page-visible ones, so a reacquire can swap fresh tracks in where the page's objects
// cannot be touched. Also hides Chromium's `inactive` event from streams our release made inactive.
import type { Originals, Track } from '../../common/originals.ts';

/** A private stream a media element plays or a recorder records: the page's stream with real tracks. */
export interface Shadowed {
  page: MediaStream;
  shadow: MediaStream;
}

export interface ShadowsDeps {
  /** The real track behind a page-visible one (itself when it is not a member's). */
  realOf(t: Track): Track;
  /** Does the stream hold a managed track the page has not stopped? */
  liveIn(s: MediaStream): boolean;
}

export type Shadows = ReturnType<typeof createShadows>;

export function createShadows(o: Originals, deps: ShadowsDeps) {
  const shadows = new Set<Shadowed>();
  const shadowPage = new WeakMap<MediaStream, MediaStream>(); // shadow -> the page's stream
  const quiet = new WeakSet<MediaStream>();

  const makeShadow = (page: MediaStream) => new o.MediaStream(o.getTracks.call(page).map(deps.realOf));

  // Our release makes a stream of managed tracks inactive; Chromium's non-standard `inactive` event
  // must not leak. The listener goes on first wherever we can: streams getUserMedia hands out, streams
  // the page builds from managed tracks (constructor, clone) and, late but still, streams it adds one to.
  function hideInactive(stream: MediaStream): void {
    if (quiet.has(stream)) return;
    quiet.add(stream);
    o.addEventListener.call(stream, 'inactive', (e: Event) => {
      if (deps.liveIn(stream)) e.stopImmediatePropagation();
    });
  }

  /** A shadow of `page` kept in step with reacquires (until dropped or pruned). */
  function shadowed(page: MediaStream): MediaStream {
    const shadow = makeShadow(page);
    shadows.add({ page, shadow });
    shadowPage.set(shadow, page);
    return shadow;
  }

  function dropShadow(shadow: MediaStream): void {
    for (const s of shadows) if (s.shadow === shadow) shadows.delete(s);
  }

  /** Forget shadows whose page stream holds no live managed track any more. */
  function prune(): void {
    for (const sh of shadows) if (!deps.liveIn(sh.page)) shadows.delete(sh);
  }

  /** Put `next` in place of `old` in every shadow that holds `old`. */
  function swapTrack(old: Track, next: Track): void {
    for (const sh of shadows) {
      if (!o.getTracks.call(sh.shadow).includes(old)) continue;
      o.addTrack.call(sh.shadow, next);
      o.removeTrack.call(sh.shadow, old);
    }
  }

  return { shadowPage, makeShadow, hideInactive, shadowed, dropShadow, prune, swapTrack };
}
