// A capture that stops delivering under an enabled, live track: after the audio server was stopped and
// resumed (a suspend, SIGSTOP/SIGCONT) a browser's capture can stay `live` and carry nothing, with no
// `ended` or `mute` for the page (docs/design/faults.md). While a device is on and a member's real
// track is enabled, its frame count (MediaStreamTrack.stats, as first-audio.ts reads it) is read every
// POLL_MS. A read whose new audio falls SUSPECT_MS or more short of the time since the previous read
// says when the frames stopped, if they did; a second read comes CONFIRM_MS later at least, and
// STALL_MS after that estimate at most. A track that has had audio and got no new frame for STALL_MS
// (by that estimate, with at least CONFIRM_MS between the reads) is stalled, and its device is reopened
// (group-machine.ts `restart`, which tries again while the reopen is refused and ends the page's tracks
// if it never comes back). Until the device has delivered without a stall for HEALTHY_MS after a
// restart, the reads come every FAST_POLL_MS, and a restart's fresh capture with no first frame
// RESTART_FIRST_FRAME_MS after it is in counts as stalled too. A device whose fresh capture stalls again
// waits a gap that doubles from FIRST_GAP_MS up to MAX_GAP_MS. Nothing runs while every device is
// released or muted. The read rate is what the unmuted call pays (docs/design/faults.md "The capture
// watch"). A hidden page's timers run at most once a second (Chromium, 10 s after the tab went to the
// background, unless it plays audio): there the watch says its schedule (`onSchedule`: its period, and
// a read wanted sooner than that), the page asks the background for wake-ups on it, and a `poke` runs
// the pending read when it is due. Pure: the page supplies the clock, timers and the reads, so it runs
// under `node --test`.

/** How often a watched track's frame count is read ... */
export const POLL_MS = 400;
/** ... and after a restart, until the device is healthy again. */
export const FAST_POLL_MS = 100;
/** No new frame for this long (a capture delivers every 10 ms): the capture is stalled. */
export const STALL_MS = 400;
/** A read whose new audio is this much less than the time since the previous read: the frames may
 * have stopped in between (a capture delivers in fragments of 10 to 60 ms). */
export const SUSPECT_MS = 100;
/** A stall is only called on a read at least this long after the last one that saw a new frame. */
export const CONFIRM_MS = 150;
/** After a restart that put fresh tracks in, the next one of the same device waits at least this long,
 * doubling each time. */
export const FIRST_GAP_MS = 2000;
export const MAX_GAP_MS = 60_000;
/** A restart's fresh capture with no frame this long after it is in is stalled too (the audio server
 * can take a reopen made while it was stopped and never feed it). Only after a restart: a first open's
 * slow start is first-audio.ts's. */
export const RESTART_FIRST_FRAME_MS = 600;
/** A poke this much before the pending read is due runs it: the background's period and the page's
 * reads drift apart by the ticks' trip (a few ms), and a tick just early would put the read off a whole
 * period. */
export const POKE_EARLY_MS = 50;
/** A capture delivering this long clears the device's past restarts. */
export const HEALTHY_MS = 10_000;

/** What a watched device's capture has delivered: through which track, and how much audio (ms). */
export interface Delivered<T> {
  track: T;
  audioMs: number;
}

export interface CaptureWatchDeps<G, T> {
  now(): number;
  setTimer(cb: () => void, ms: number): unknown;
  clearTimer(handle: unknown): void;
  /** The devices to watch now: on, with an enabled live track (none: the watch sleeps). */
  watched(): Iterable<G>;
  /** What `g`'s capture has delivered so far, or null when it cannot tell now (the only enabled track
   * held back, muted by the system, or no frame count in this browser). */
  read(g: G): Delivered<T> | null;
  /** `g`'s capture is stalled: reopen the device. */
  stalled(g: G): void;
  /** After each read and start: the period the watch reads at now (null: it stopped), and when its
   * next read is due if that is sooner than the period (a read that fell short wants a second one). */
  onSchedule?(everyMs: number | null, soonMs: number | null): void;
}

export interface CaptureWatch {
  /** A device may have turned on or off, or a track been enabled: wake the watch if it sleeps. */
  changed(): void;
  /** A wake-up from outside the page's timers, on the schedule `onSchedule` said: the pending read
   * runs now if it is due (POKE_EARLY_MS early at most); a page whose own timer ran it already (not
   * throttled) reads no more for the pokes. */
  poke(): void;
}

interface Seen<T> {
  track: T;
  audioMs: number;
  /** now() when this count was first read: no frame came since. */
  since: number;
  /** When the last frame came, as far as the reads tell (at most `since`). */
  lastFrameAt: number;
  /** now() at the last read. */
  readAt: number;
  /** now() since when this track has delivered without a stall. */
  steady: number;
}

export function createCaptureWatch<G, T>(d: CaptureWatchDeps<G, T>): CaptureWatch {
  const seen = new Map<G, Seen<T>>();
  const restarts = new Map<G, { atMs: number; gapMs: number }>();
  let timer: unknown = null;
  /** When the pending read is due (a throttled timer fires later). */
  let dueAt = 0;
  const arm = (ms: number) => {
    dueAt = d.now() + ms;
    timer = d.setTimer(tick, ms);
  };

  /** Reads `g`; returns when it wants its next read (ms from now), if sooner than the poll. */
  function look(g: G, now: number): number | null {
    let r: Delivered<T> | null = null;
    try {
      r = d.read(g);
    } catch {}
    if (!r || !Number.isFinite(r.audioMs)) {
      seen.delete(g);
      return null;
    }
    const s = seen.get(g);
    if (!s || s.track !== r.track) {
      seen.set(g, {
        track: r.track,
        audioMs: r.audioMs,
        since: now,
        lastFrameAt: now,
        readAt: now,
        steady: now,
      });
      return null;
    }
    if (r.audioMs !== s.audioMs) {
      if (now - s.lastFrameAt >= STALL_MS) s.steady = now; // it had stalled before this frame
      // The frames came after the previous read: if they ran out short of now, they stopped then.
      const lastFrameAt = Math.min(now, s.readAt + Math.max(0, r.audioMs - s.audioMs));
      s.audioMs = r.audioMs;
      s.since = now;
      s.readAt = now;
      s.lastFrameAt = lastFrameAt;
      if (now - s.steady >= HEALTHY_MS) restarts.delete(g);
      return now - lastFrameAt >= SUSPECT_MS ? Math.max(CONFIRM_MS, lastFrameAt + STALL_MS - now) : null;
    }
    s.readAt = now;
    const past = restarts.get(g);
    // A track that never had audio is first-audio.ts's (a slow first frame is not a stall), unless a
    // restart put it in.
    const quietMs = now - s.since;
    const stalled =
      r.audioMs <= 0
        ? past !== undefined && quietMs >= RESTART_FIRST_FRAME_MS
        : quietMs >= CONFIRM_MS && now - s.lastFrameAt >= STALL_MS;
    if (!stalled)
      return r.audioMs > 0 ? Math.max(CONFIRM_MS - quietMs, s.lastFrameAt + STALL_MS - now) : null;
    if (past && now - past.atMs < past.gapMs) return null;
    restarts.set(g, { atMs: now, gapMs: past ? Math.min(past.gapMs * 2, MAX_GAP_MS) : FIRST_GAP_MS });
    seen.delete(g);
    d.stalled(g);
    return null;
  }

  /** Fast while a watched device is recovering from a restart. */
  const every = (groups: Set<G>) => ([...groups].some((g) => restarts.has(g)) ? FAST_POLL_MS : POLL_MS);

  function tick(): void {
    timer = null;
    const now = d.now();
    const groups = new Set(d.watched());
    for (const g of seen.keys()) if (!groups.has(g)) seen.delete(g);
    const period = every(groups);
    let next = period;
    for (const g of groups) {
      const soon = look(g, now);
      if (soon !== null) next = Math.min(next, Math.max(1, soon));
    }
    if (groups.size > 0 && timer === null) arm(next);
    if (timer === null) d.onSchedule?.(null, null);
    else d.onSchedule?.(every(groups), next < period ? next : null);
  }

  return {
    changed() {
      if (timer !== null) return;
      const groups = new Set(d.watched());
      if (groups.size === 0) return;
      arm(every(groups));
      d.onSchedule?.(every(groups), null);
    },
    poke() {
      if (timer === null || d.now() < dueAt - POKE_EARLY_MS) return;
      d.clearTimer(timer);
      tick();
    },
  };
}
