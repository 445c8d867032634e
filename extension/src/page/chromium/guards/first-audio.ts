// How long a freshly opened microphone takes to deliver its first audio (shared/first-words.ts): after
// the page's own getUserMedia and after each reopen, a tap on the fresh track (an enabled clone, whose
// frame count the browser keeps: MediaStreamTrack.stats) is read every POLL_MS until its first frame
// arrives or FIRST_AUDIO_WINDOW_MS pass, then stopped. Nothing runs otherwise. A release cuts a tap
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

/** A listener of one fresh track: its frames so far (null once it cannot tell), and its end. */
export interface Tap {
  frames(): number | null;
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
    const finish = (report: 'always' | 'if_slow' | 'never') => {
      if (timer !== null) d.clearTimer(timer);
      timer = null;
      running.delete(g);
      try {
        t.stop();
      } catch {}
      const sample = {
        ms: Math.max(openMs, Math.round(d.now() - startMs)),
        open_ms: openMs,
        at_ms: d.dateNow(),
      };
      if (report === 'always' || (report === 'if_slow' && waitAfterOpen(sample) > FIRST_AUDIO_SLOW_MS)) {
        d.measured(g, sample);
      }
    };
    const tick = () => {
      timer = null;
      let frames: number | null = null;
      try {
        frames = t.frames();
      } catch {}
      if (frames === null) finish('never');
      else if (frames > 0 || d.now() - openedMs >= FIRST_AUDIO_WINDOW_MS) finish('always');
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
