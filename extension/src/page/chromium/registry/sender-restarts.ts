// While a released device reopens, the senders the release left without frames restart their RTP
// stream (audibility.ts starvedSenders), so the fresh capture's first packet carries the pause in its
// timestamp rather than arriving late by it.
import { starvedSenders, type Vertex } from '../graph/audibility.ts';

/** The longest a reacquire waits for the senders' restarts (two setParameters, a few ms measured). */
export const RESTART_WAIT_MS = 1000;

/** Starts the restarts now. Settles when they are done, or after RESTART_WAIT_MS at most: the fresh
 * audio never waits longer on a sender that does not answer (a restart that ends later still steps
 * the clock). `roots` are the group's paths (graph.ts roots). */
export function restartStarved(
  roots: () => Vertex[],
  setTimer: (cb: () => void, ms: number) => unknown,
): Promise<unknown> {
  try {
    const restarts = starvedSenders(roots()).map((restart) => restart());
    if (restarts.length === 0) return Promise.resolve();
    return Promise.race([
      Promise.allSettled(restarts),
      new Promise<void>((resolve) => setTimer(resolve, RESTART_WAIT_MS)),
    ]);
  } catch {
    return Promise.resolve(); // a graph we cannot read: the senders stay as they are
  }
}
