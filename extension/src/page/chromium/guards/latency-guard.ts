// The latency-constraint trap, page world (docs/design/capture-latency.md "The latency-constraint
// trap"): a page's ideal `latency` above Chromium's processed 10 ms, with `echoCancellation` left
// unconstrained, can make Chromium pick the unprocessed path and turn echo cancellation, noise
// suppression and gain control off unasked. The guard pins `echoCancellation: true` (ideal) on such a
// request, and adds it to an `advanced` set only the unprocessed path meets; getConstraints() still
// reports the page's own constraints. A page that asks about echo cancellation, or requires a latency
// that excludes 10 ms, is left alone. micoff never adds a `latency` constraint. Runs on every
// getUserMedia call: pure and allocation-light.

/** The latency of Chromium's processed capture (kFallbackAudioLatencyMs on desktop), seconds. */
export const PROCESSED_LATENCY_S = 0.01;
/** Closer than this to PROCESSED_LATENCY_S counts as asking for it. */
const SAME_LATENCY_S = 0.0005;

export interface GuardResult {
  /** What to hand the browser (the page's object itself when nothing changes). */
  constraints: MediaStreamConstraints | undefined;
  /** True when micoff pinned echo cancellation on. */
  guarded: boolean;
  /** What the page asked that would have cost echo cancellation ("40 ms", "at least 20 ms"), when
   * guarded. */
  asked: string | null;
}

/** MediaTrackConstraints with `latency` (the DOM typings lack it). */
type AudioConstraints = MediaTrackConstraints & { latency?: ConstrainDouble };
type ConstraintSet = Record<string, unknown>;

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const isNum = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const ms = (s: number) => `${Math.round(s * 1000)} ms`;
/** Above the processed path's 10 ms: the unprocessed path (never below 10 ms on Linux, its buffer is
 * 1024 frames) can be the closer or the only match. Below 10 ms the processed path is always closer
 * (measured: an ideal 5 ms keeps echo cancellation on). */
const above = (s: number) => s > PROCESSED_LATENCY_S + SAME_LATENCY_S;

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

/** In an advanced set every value is required (a bare number is `exact`, `ideal` is ignored): what
 * the set asks when only the unprocessed path can meet it (a `min` above 10 ms), else null. Measured,
 * left alone: an exact value (neither 40 ms nor the device buffer's own 23.2 ms was met by any choice;
 * Chromium skipped the set and echo cancellation stayed on), a `max` below 10 ms (met by none). */
function advancedUnprocessedOnly(latency: unknown): string | null {
  if (!isObject(latency) || latency.exact !== undefined) return null;
  const { min } = latency;
  return isNum(min) && above(min) ? `at least ${ms(min)}` : null;
}

export function guardLatency(constraints: MediaStreamConstraints | undefined): GuardResult {
  const unchanged: GuardResult = { constraints, guarded: false, asked: null };
  if (!isObject(constraints)) return unchanged;
  const audio = constraints.audio;
  if (!isObject(audio)) return unchanged;
  const advanced = (audio as { advanced?: unknown }).advanced;
  const sets: unknown[] = Array.isArray(advanced) ? advanced : [];
  // The page asked about echo cancellation (on, off, a mode), anywhere: its choice stands.
  if ((audio as MediaTrackConstraints).echoCancellation !== undefined) return unchanged;
  if (sets.some((s) => isObject(s) && s.echoCancellation !== undefined)) return unchanged;

  let asked: string | null = null;
  let out: ConstraintSet = audio;
  const ideal = guardableIdeal((audio as AudioConstraints).latency);
  if (ideal !== null && above(ideal)) {
    out = { ...out, echoCancellation: true };
    asked = ms(ideal);
  }
  if (Array.isArray(advanced)) {
    let changed = false;
    const guardedSets = advanced.map((s: unknown) => {
      const what = isObject(s) ? advancedUnprocessedOnly(s.latency) : null;
      if (what === null) return s;
      changed = true;
      asked ??= what;
      return { ...(s as ConstraintSet), echoCancellation: true };
    });
    if (changed) out = { ...out, advanced: guardedSets };
  }
  if (asked === null) return unchanged;
  return { constraints: { ...constraints, audio: out as MediaTrackConstraints }, guarded: true, asked };
}

/** What the page sees from getConstraints() on a guarded track: the browser's view less the keys the
 * guard added (a guarded request never mentioned echo cancellation, so every such key is micoff's). */
export function unguardedConstraints(c: MediaTrackConstraints): MediaTrackConstraints {
  const { echoCancellation: _added, ...rest } = c;
  const advanced = (rest as { advanced?: unknown }).advanced;
  if (!Array.isArray(advanced)) return rest;
  return {
    ...rest,
    advanced: advanced.map((s: unknown) => {
      if (!isObject(s) || !('echoCancellation' in s)) return s;
      const { echoCancellation: _set, ...set } = s;
      return set;
    }),
  } as MediaTrackConstraints;
}

/** The popup's sentence for a guarded track. */
export function guardReason(asked: string | null): string {
  return `The page asked for ${asked ?? 'a'} capture latency without turning echo cancellation off; micoff kept echo cancellation on (for such a request Chromium picks its unprocessed path, without echo cancellation, whenever the device buffer fits it better).`;
}
