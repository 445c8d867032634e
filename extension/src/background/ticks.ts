// Ticks for the capture watch of hidden tabs (page/chromium/guards/capture-watch.ts `poke`): Chromium runs
// a hidden page's timers at most once a second, a service worker's it does not. While a frame's content
// script holds a TICKS_PORT open, a tick goes to it on the schedule it asks for (the watch's period, and
// single ticks for a read wanted sooner); nothing runs while no port is open, or before it asks.
import { parseTickRequest, TICKS_PORT } from '../shared/messages/content-background.ts';

/** A port as runtime.onConnect hands it over. */
export interface TickPortLike {
  name: string;
  postMessage(message: unknown): void;
  onMessage: { addListener(cb: (message: unknown) => void): void };
  onDisconnect: { addListener(cb: () => void): void };
}

export interface TickTimers {
  setInterval(cb: () => void, ms: number): unknown;
  clearInterval(handle: unknown): void;
  setTimeout(cb: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const globalTimers: TickTimers = {
  setInterval: (cb, ms) => setInterval(cb, ms),
  clearInterval: (h) => clearInterval(h as ReturnType<typeof setInterval>),
  setTimeout: (cb, ms) => setTimeout(cb, ms),
  clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
};

/** Serves `port` if it was opened for ticks (returns false for any other port), until it closes or a
 * tick cannot be posted (the frame went away). */
export function acceptTicks(port: TickPortLike, timers: TickTimers = globalTimers): boolean {
  if (port.name !== TICKS_PORT) return false;
  let every: unknown = null;
  let once: unknown = null;
  let open = true;
  const stop = () => {
    open = false;
    if (every !== null) timers.clearInterval(every);
    if (once !== null) timers.clearTimeout(once);
    every = once = null;
  };
  const tick = () => {
    try {
      port.postMessage({ type: 'tick' });
    } catch {
      stop();
    }
  };
  port.onMessage.addListener((raw) => {
    const request = parseTickRequest(raw);
    if (!open || !request) return;
    if ('every_ms' in request) {
      if (every !== null) timers.clearInterval(every);
      every = timers.setInterval(tick, request.every_ms);
    } else {
      // The latest single tick replaces one still pending: the watch asks for the read it wants next.
      if (once !== null) timers.clearTimeout(once);
      once = timers.setTimeout(() => {
        once = null;
        tick();
      }, request.once_ms);
    }
  });
  port.onDisconnect.addListener(stop);
  return true;
}
