// What the patched surfaces (patch/*.ts) hang on the registry: consumers to forget before a reacquire
// (prune), to rebuild on the fresh tracks after one (swapped), to close when a member ends for good
// (ended), what keeps a muted device open (holds), and who watches a device the page opened itself
// (opened). The registry calls them; it knows no patch.

export type Hooks<G, M> = ReturnType<typeof createHooks<G, M>>;

export function createHooks<G, M, T = unknown>() {
  const pruners: (() => void)[] = [];
  const openListeners: ((g: G, track: T) => void)[] = [];
  const swapListeners: ((swapped: M[]) => void)[] = [];
  const endListeners: ((m: M) => void)[] = [];
  const holds: ((g: G) => string | null)[] = [];
  const requestListeners: (() => void)[] = [];

  return {
    /** A patch's consumers to forget when they can no longer play the mic (runs before a reacquire). */
    onPrune(p: () => void): void {
      pruners.push(p);
    },
    prune(): void {
      for (const p of pruners) p();
    },
    /** A patch's consumers to rebuild on the fresh tracks after a reacquire. */
    onSwapped(l: (swapped: M[]) => void): void {
      swapListeners.push(l);
    },
    /** A listener that throws fails the reacquire (the group machine then ends the tracks). */
    swapped(list: M[]): void {
      for (const l of swapListeners) l(list);
    },
    /** A patch's consumers to close when a member ends for good. */
    onEnded(l: (m: M) => void): void {
      endListeners.push(l);
    },
    /** One listener's failure neither stops the others nor the end itself. */
    ended(m: M): void {
      for (const l of endListeners) {
        try {
          l(m);
        } catch {}
      }
    },
    /** The page asks for the microphone (patch/get-user-media.ts, before the browser answers). */
    onRequest(l: () => void): void {
      requestListeners.push(l);
    },
    requested(): void {
      for (const l of requestListeners) {
        try {
          l();
        } catch {}
      }
    },
    /** The page's own getUserMedia handed it `track` on `g`'s device (guards/first-audio.ts). */
    onOpened(l: (g: G, track: T) => void): void {
      openListeners.push(l);
    },
    opened(g: G, track: T): void {
      for (const l of openListeners) {
        try {
          l(g, track);
        } catch {}
      }
    },
    /** Something that keeps a muted device open (returns why, or null). */
    addHold(h: (g: G) => string | null): void {
      holds.push(h);
    },
    /** The first hold's reason, or null when nothing holds the device. */
    holdReason(g: G): string | null {
      for (const h of holds) {
        const why = h(g);
        if (why !== null) return why;
      }
      return null;
    },
  };
}
