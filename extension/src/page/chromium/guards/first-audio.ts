// How long a freshly opened microphone takes to deliver its first audio (shared/first-words.ts): after
// the page's own getUserMedia and after each reopen, a tap on the fresh track (an enabled clone, whose
// audio the browser counts: MediaStreamTrack.stats) is read every POLL_MS until its first frame arrives
// or FIRST_AUDIO_WINDOW_MS pass, then stopped. The first frame is placed at the read's time less the
// audio had by then (capture delivers in real time), so a read that a busy page delays does not make
// the device look slow. Nothing runs otherwise. A release cuts a tap
// short (the clone would hold the device open): a wait already past FIRST_AUDIO_SLOW_MS is reported as
// the lower bound it is, a shorter one says nothing. Pure apart from `tap`, so it runs under `node --test`.
import {
  FIRST_AUDIO_SLOW_MS,
  FIRST_AUDIO_WINDOW_MS,
  type FirstAudio,
  waitAfterOpen,
} from '../../../shared/first-words.ts';

/** How often a tap's frame count is read. */
export const POLL_MS = 10;

/** A listener of one fresh track: how much audio (ms) it has had so far (null once it cannot tell),
 * and its end. */
export interface Tap {
  audioMs(): number | null;
  stop(): void;
}

export interface FirstAudioDeps<G, T> {
  now(): number;
  dateNow(): number;
  setTimer(cb: () => void, ms: number): unknown;
  clearTimer(handle: unknown): void;
  /** A tap on `track`, or null where the browser keeps no frame count. */
  tap(track: T): Tap | null;
  /** The device's measurement is in. */
  measured(g: G, sample: FirstAudio): void;
}

export interface FirstAudioWatch<G, T> {
  /** `track` was opened on `g`'s device, the open having started at `startMs` (now()); the track has
   * been in hand since `openedMs` (default: now). */
  watch(g: G, track: T, startMs: number, openedMs?: number): void;
  /** The device is being released or ended: stop its tap. */
  cut(g: G): void;
}

export function createFirstAudio<G, T>(d: FirstAudioDeps<G, T>): FirstAudioWatch<G, T> {
  const running = new Map<G, (report: 'always' | 'if_slow' | 'never') => void>();

  function watch(g: G, track: T, startMs: number, openedMs = d.now()): void {
    running.get(g)?.('never'); // a newer open supersedes
    const openMs = Math.max(0, Math.round(openedMs - startMs));
    let tap: Tap | null = null;
    try {
      tap = d.tap(track);
    } catch {}
    if (!tap) return;
    const t = tap;
    let timer: unknown = null;
    /** `heardMs`: the audio had by now, so the first frame came that long ago. */
    const finish = (report: 'always' | 'if_slow' | 'never', heardMs = 0) => {
      if (timer !== null) d.clearTimer(timer);
      timer = null;
      running.delete(g);
      try {
        t.stop();
      } catch {}
      const sample = {
        ms: Math.max(openMs, Math.round(d.now() - heardMs - startMs)),
        open_ms: openMs,
        at_ms: d.dateNow(),
      };
      if (report === 'always' || (report === 'if_slow' && waitAfterOpen(sample) > FIRST_AUDIO_SLOW_MS)) {
        d.measured(g, sample);
      }
    };
    const tick = () => {
      timer = null;
      let heard: number | null = null;
      try {
        heard = t.audioMs();
      } catch {}
      if (heard === null || !Number.isFinite(heard)) finish('never');
      else if (heard > 0) finish('always', Math.min(heard, d.now() - openedMs));
      else if (d.now() - openedMs >= FIRST_AUDIO_WINDOW_MS) finish('always');
      else timer = d.setTimer(tick, POLL_MS);
    };
    running.set(g, finish);
    tick();
  }

  return {
    watch,
    cut(g) {
      running.get(g)?.('if_slow');
    },
  };
}
