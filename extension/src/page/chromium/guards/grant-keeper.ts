// One-time permissions ("Allow this time") survive releases (docs/design/release-on-mute.md "One-time
// grants"): Chromium takes a one-time grant back once the site captured nothing for 5 minutes with all
// its tabs in the background, and a release counts as capturing nothing. So while the page is hidden
// and a device released, micoff reopens one for KEEPALIVE_HOLD_MS every `everyMs()` after the last
// capture (the site's config: Settings.grantKeepaliveMs, 3 minutes unless a test shortens it), only
// where the grant may be a one-time one (the browser prompted in this document).
// Pure apart from its deps, so the schedule runs under `node --test`.

export const KEEPALIVE_HOLD_MS = 300;

export interface GrantKeeperDeps<G> {
  now(): number;
  setTimer(cb: () => void, ms: number): unknown;
  clearTimer(handle: unknown): void;
  /** The interval from the end of the last capture to a keepalive, read at each (re)schedule. */
  everyMs(): number;
  /** Is the page hidden (a background tab, a minimized window)? */
  hidden(): boolean;
  /** The page's released devices right now, and whether any device captures. */
  released(): G[];
  capturing(): boolean;
  /** Reopen `g` for KEEPALIVE_HOLD_MS (group-machine prime). */
  keepalive(g: G): void;
}

export interface GrantKeeper {
  /** The page asks for the microphone; `state` is the permission before the browser answers. */
  requested(state: PermissionState | null): void;
  /** Something changed: a device captured, was released or reopened, the page's visibility, or the
   * interval. */
  changed(): void;
  /** May the site's grant be a one-time one (the popup says so)? */
  mayExpire(): boolean;
  /** Keepalives done so far. */
  count(): number;
}

export function createGrantKeeper<G>(deps: GrantKeeperDeps<G>): GrantKeeper {
  let asked = false;
  let mayExpire = false;
  let lastCaptureMs = deps.now();
  let timer: unknown = null;
  let count = 0;
  let wasCapturing = false;

  function cancel(): void {
    if (timer !== null) deps.clearTimer(timer);
    timer = null;
  }

  function wanted(): G | null {
    if (!mayExpire || !deps.hidden() || deps.capturing()) return null;
    return deps.released()[0] ?? null;
  }

  function fire(): void {
    timer = null;
    const g = wanted();
    if (g === null) return;
    count++;
    lastCaptureMs = deps.now();
    deps.keepalive(g);
  }

  return {
    requested(state) {
      if (asked) return;
      asked = true;
      // Unknown (no Permissions API, a failed query) counts as "may expire": the safe side.
      mayExpire = state !== 'granted';
    },
    changed() {
      // The timer runs from the end of the last capture.
      const capturing = deps.capturing();
      if (capturing || wasCapturing) lastCaptureMs = deps.now();
      wasCapturing = capturing;
      cancel();
      if (wanted() === null) return;
      timer = deps.setTimer(fire, Math.max(0, lastCaptureMs + deps.everyMs() - deps.now()));
    },
    mayExpire: () => mayExpire,
    count: () => count,
  };
}
