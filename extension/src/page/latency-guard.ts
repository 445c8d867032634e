// The latency-constraint trap, page world. Chromium scores its audio processing choices per
// getUserMedia call; the processed path (echo cancellation, noise suppression, gain control) always
// captures in 10 ms buffers, while the unprocessed path offers the device's buffer (1024 frames on
// Linux, 21.3 ms at 48 kHz). A page that asks an ideal `latency` other than 10 ms and leaves
// `echoCancellation` unconstrained makes the unprocessed path score higher: echo cancellation, noise
// suppression and gain control go off without the page asking (media_stream_constraints_util_audio.cc).
// The guard pins `echoCancellation: true` (ideal) on such a request, which keeps the processed path
// winning; the page's own constraints stay what getConstraints() reports (interpose masks the key).
// Never touched: a page that asks about echo cancellation at all (`echoCancellation: false` is how music
// and DAW pages ask for unprocessed audio, and they get exactly that), a required latency the processed
// path cannot meet (exact, or min/max excluding 10 ms: the page's own strict request), advanced sets.
// micoff itself never adds a `latency` constraint anywhere.
// Pure and allocation-light: it runs on every getUserMedia call, before the browser's.

/** The latency of Chromium's processed capture (kFallbackAudioLatencyMs on desktop), seconds. */
export const PROCESSED_LATENCY_S = 0.01;
/** Closer than this to PROCESSED_LATENCY_S counts as asking for it. */
const SAME_LATENCY_S = 0.0005;

export interface GuardResult {
  /** What to hand the browser (the page's object itself when nothing changes). */
  constraints: MediaStreamConstraints | undefined;
  /** True when micoff pinned echo cancellation on. */
  guarded: boolean;
  /** The ideal latency the page asked (seconds), when guarded. */
  latency_s: number | null;
}

/** MediaTrackConstraints with `latency` (the DOM typings lack it). */
type AudioConstraints = MediaTrackConstraints & { latency?: ConstrainDouble };

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const isNum = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/** The ideal latency of a ConstrainDouble when its required part (exact/min/max) admits 10 ms;
 * null when there is none or the page requires something the processed path cannot give. */
function guardableIdeal(latency: unknown): number | null {
  if (isNum(latency)) return latency;
  if (!isObject(latency)) return null;
  const { ideal, exact, min, max } = latency;
  if (exact !== undefined) return null;
  if (min !== undefined && (!isNum(min) || min > PROCESSED_LATENCY_S + SAME_LATENCY_S)) return null;
  if (max !== undefined && (!isNum(max) || max < PROCESSED_LATENCY_S - SAME_LATENCY_S)) return null;
  return isNum(ideal) ? ideal : null;
}

export function guardLatency(constraints: MediaStreamConstraints | undefined): GuardResult {
  const unchanged: GuardResult = { constraints, guarded: false, latency_s: null };
  if (!isObject(constraints)) return unchanged;
  const audio = constraints.audio;
  if (!isObject(audio)) return unchanged;
  // The page asked about echo cancellation (on, off, a mode): its choice stands.
  if ((audio as MediaTrackConstraints).echoCancellation !== undefined) return unchanged;
  const ideal = guardableIdeal((audio as AudioConstraints).latency);
  if (ideal === null || Math.abs(ideal - PROCESSED_LATENCY_S) <= SAME_LATENCY_S) return unchanged;
  return {
    constraints: { ...constraints, audio: { ...audio, echoCancellation: true } },
    guarded: true,
    latency_s: ideal,
  };
}

/** What the page sees from getConstraints() on a guarded track: the browser's view less the key the
 * guard added. */
export function unguardedConstraints(c: MediaTrackConstraints): MediaTrackConstraints {
  const { echoCancellation: _added, ...rest } = c;
  return rest;
}

/** The popup's sentence for a guarded track. */
export function guardReason(latencyS: number | null): string {
  const ms = latencyS === null ? 'a' : `${Math.round(latencyS * 1000)} ms`;
  return `The page asked for ${ms} capture latency without turning echo cancellation off; micoff kept echo cancellation on (Chromium would have switched it off).`;
}
