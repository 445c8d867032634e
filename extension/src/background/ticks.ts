// Ticks for the capture watch of hidden tabs (page/chromium/guards/capture-watch.ts `poke`): Chromium runs
// a hidden page's timers at most once a second, a service worker's it does not. While a frame's content
// script holds a TICKS_PORT open, a tick goes to it every TICK_MS; nothing runs while no port is open.
import { TICK_MS, TICKS_PORT } from '../shared/messages/content-background.ts';

/** A port as runtime.onConnect hands it over. */
export interface TickPortLike {
  name: string;
  postMessage(message: unknown): void;
  onDisconnect: { addListener(cb: () => void): void };
}

export interface IntervalTimers {
  setInterval(cb: () => void, ms: number): unknown;
  clearInterval(handle: unknown): void;
}

const globalTimers: IntervalTimers = {
  setInterval: (cb, ms) => setInterval(cb, ms),
  clearInterval: (h) => clearInterval(h as ReturnType<typeof setInterval>),
};

/** Serves `port` if it was opened for ticks (returns false for any other port): a tick every TICK_MS
 * until it closes, or until a tick cannot be posted (the frame went away). */
export function acceptTicks(port: TickPortLike, timers: IntervalTimers = globalTimers): boolean {
  if (port.name !== TICKS_PORT) return false;
  let handle: unknown = null;
  const stop = () => {
    if (handle === null) return;
    timers.clearInterval(handle);
    handle = null;
  };
  handle = timers.setInterval(() => {
    try {
      port.postMessage({ type: 'tick' });
    } catch {
      stop();
    }
  }, TICK_MS);
  port.onDisconnect.addListener(stop);
  return true;
}
