// The e2e suite's two lanes (docs/test-rig.md#two-lanes): the quiet specs measure CPU and run alone,
// one worker, after everything else; the rest are functional and share the machine with several
// workers. `MICOFF_E2E_LANE` (functional | quiet) picks one; unset, a run takes every spec.

/** The specs that must have the machine to themselves: they measure CPU, or compare micoff with the
 * plain flip to a few ms or dB, which the functional lane's load swamps (docs/test-rig.md#two-lanes). */
export const QUIET_SPECS = [
  'capture-latency-cpu.spec.ts',
  'firefox-quiet.spec.ts',
  'release-cpu.spec.ts',
  'release-paths-cpu.spec.ts',
  'release-echo.spec.ts',
  'release-first-words.spec.ts',
  'release-gap.spec.ts',
  'release-timing.spec.ts',
] as const;

export type Lane = 'functional' | 'quiet';

/** Workers for the functional lane: its specs mostly wait on browsers and audio servers. */
export const FUNCTIONAL_WORKERS = 3;

export function laneOf(env: NodeJS.ProcessEnv = process.env): Lane | null {
  const lane = env.MICOFF_E2E_LANE;
  if (lane === undefined || lane === '') return null;
  if (lane === 'functional' || lane === 'quiet') return lane;
  throw new Error(`MICOFF_E2E_LANE=${lane}: expected functional or quiet`);
}

/** Playwright's testMatch / testIgnore for a lane (file names under e2e/tests/). */
export function laneFilter(lane: Lane | null): { testMatch?: string[]; testIgnore?: string[] } {
  const quiet = QUIET_SPECS.map((f) => `**/${f}`);
  if (lane === 'quiet') return { testMatch: quiet };
  if (lane === 'functional') return { testIgnore: quiet };
  return {};
}
