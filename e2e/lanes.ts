// The e2e suite's lanes (docs/test-rig.md#lanes): the functional specs share the machine with several
// workers (beside the builds and unit tests); then the CPU specs, one at a time, beside the timing
// specs, two at a time (each compares micoff with a control in the same run, so the light calls beside
// it load both sides alike). `MICOFF_E2E_LANE` picks a lane; unset, a run takes every spec with one
// worker.

/** The specs that measure CPU. */
export const CPU_SPECS = [
  'capture-latency-cpu.spec.ts',
  'firefox-quiet.spec.ts',
  'release-cpu.spec.ts',
  'release-paths-cpu.spec.ts',
] as const;

/** The specs that compare micoff with the plain flip, or one capture latency with another, to a few
 * milliseconds or decibels: beside the CPU lane, not beside the functional lane's load (under it,
 * capture-latency-guard's echo cancellation read -21 dB against -88; docs/test-rig.md#lanes). */
export const TIMING_SPECS = [
  'capture-latency-aec.spec.ts',
  'capture-latency-guard.spec.ts',
  'firefox-quiet-unmute.spec.ts',
  'release-echo.spec.ts',
  'release-first-words.spec.ts',
  'release-gap.spec.ts',
  'release-rules.spec.ts',
  'release-timing.spec.ts',
] as const;

export const LANES = ['functional', 'cpu', 'timing'] as const;
export type Lane = (typeof LANES)[number];

/** Workers per lane: the functional specs mostly wait on browsers and audio servers; the timing specs
 * two at a time beside the one CPU spec, which ends the CPU lane no later than the timing lane
 * (docs/test-rig.md#lanes has the figures). */
export const LANE_WORKERS: Record<Lane, number> = { functional: 2, cpu: 1, timing: 2 };

export function laneOf(env: NodeJS.ProcessEnv = process.env): Lane | null {
  const lane = env.MICOFF_E2E_LANE;
  if (lane === undefined || lane === '') return null;
  if ((LANES as readonly string[]).includes(lane)) return lane as Lane;
  throw new Error(`MICOFF_E2E_LANE=${lane}: expected one of ${LANES.join(', ')}`);
}

/** Playwright's testMatch / testIgnore for a lane (file names under e2e/tests/). */
export function laneFilter(lane: Lane | null): { testMatch?: string[]; testIgnore?: string[] } {
  const glob = (files: readonly string[]) => files.map((f) => `**/${f}`);
  if (lane === 'cpu') return { testMatch: glob(CPU_SPECS) };
  if (lane === 'timing') return { testMatch: glob(TIMING_SPECS) };
  if (lane === 'functional') return { testIgnore: glob([...CPU_SPECS, ...TIMING_SPECS]) };
  return {};
}
