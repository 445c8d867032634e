// The e2e suite's lanes (docs/test-rig.md#lanes): the functional specs first, several at a time and
// alone on the machine; then the CPU lane beside the timing lane and, once the timing lane and the
// builds are done, the echo lane; one spec each at a time (each compares micoff with a control in the
// same run, so one light call beside it loads both sides alike; a second one does not:
// docs/test-rig.md#lanes). `MICOFF_E2E_LANE` picks a lane; unset, a run takes every spec with one
// worker.

import type { AudioServerKind } from './rig/audio-rig.ts';

/** The specs that measure CPU. */
export const CPU_SPECS = [
  'background-cpu.spec.ts',
  'capture-latency-cpu.spec.ts',
  'firefox-quiet.spec.ts',
  'release-cpu.spec.ts',
  'release-paths-cpu.spec.ts',
] as const;

/** Timing specs that run in the CPU lane, to even the lanes out (either lane gives a spec the same
 * surroundings: one spec beside it). */
export const SHORT_TIMING_SPECS = [
  'capture-latency-guard.spec.ts',
  'firefox-quiet-unmute.spec.ts',
  'release-gap.spec.ts',
] as const;

/** The specs that compare micoff with the plain flip to a few milliseconds: never beside the
 * functional lane's load (under it, first words read 14.2 ms behind the flip against a 10 ms bar,
 * release-rules' delay rule 1567 ms against 1500). */
export const TIMING_SPECS = [
  'release-first-words.spec.ts',
  'release-rules.spec.ts',
  'release-timing.spec.ts',
] as const;

/** The specs that compare echo cancellation, micoff's with the plain flip's or one capture latency's
 * with another's, to a few decibels: after the timing lane, once the builds beside the lanes are done
 * (docs/test-rig.md#lanes says what they read beside them). */
export const ECHO_SPECS = ['capture-latency-aec.spec.ts', 'release-echo.spec.ts'] as const;

/** Timing specs that run in the echo lane, after the builds: a far end whose own mixer and jitter buffer
 * the builds' load slows unevenly (Janus's AudioBridge read micoff 564 / plain 517 ms there, against
 * 146-173 / 245-251 without them: docs/test-rig.md#lanes); the fault cells of npm test (audio back
 * within 1 s of a fault, micoff against the plain flip). */
export const AFTER_BUILDS_TIMING_SPECS = [
  'release-far-end-janus.spec.ts',
  'faults.spec.ts',
  'firefox-faults.spec.ts',
] as const;

/** Specs whose run on one server goes to another lane than their kind's, to even the lanes out (either
 * lane gives a spec the same surroundings: one spec beside it). On PipeWire capture-latency-aec runs in
 * the CPU lane, which runs its PulseAudio specs first, so it comes long after the builds there too, as
 * does release-timing (both servers) at its end; on PulseAudio firefox-quiet-unmute runs in the echo
 * lane, after the builds. Not the timing lane's first minutes: the builds run beside
 * them (docs/test-rig.md#lanes). */
export const MOVED_ON: Record<AudioServerKind, Readonly<Record<string, Exclude<Lane, 'functional'>>>> = {
  pulseaudio: { 'firefox-quiet-unmute.spec.ts': 'echo', 'release-timing.spec.ts': 'cpu' },
  pipewire: {
    'capture-latency-aec.spec.ts': 'cpu',
    'release-timing.spec.ts': 'cpu',
  },
};

export const LANES = ['functional', 'cpu', 'timing', 'echo'] as const;
export type Lane = (typeof LANES)[number];

/** Workers per lane: the functional specs mostly wait on browsers and audio servers, and have the
 * machine to themselves; the CPU, timing and echo lanes one spec each (docs/test-rig.md#lanes). */
export const LANE_WORKERS: Record<Lane, number> = { functional: 3, cpu: 1, timing: 1, echo: 1 };

export function laneOf(env: NodeJS.ProcessEnv = process.env): Lane | null {
  const lane = env.MICOFF_E2E_LANE;
  if (lane === undefined || lane === '') return null;
  if ((LANES as readonly string[]).includes(lane)) return lane as Lane;
  throw new Error(`MICOFF_E2E_LANE=${lane}: expected one of ${LANES.join(', ')}`);
}

/** The specs of the lanes after the functional one, by the lane their kind runs in. */
const BY_KIND: Record<Exclude<Lane, 'functional'>, readonly string[]> = {
  cpu: [...CPU_SPECS, ...SHORT_TIMING_SPECS],
  timing: TIMING_SPECS,
  echo: [...ECHO_SPECS, ...AFTER_BUILDS_TIMING_SPECS],
};

/** Playwright's testMatch / testIgnore for a lane on one audio server's project (file names under
 * e2e/tests/). */
export function laneFilter(
  lane: Lane | null,
  server: AudioServerKind,
): { testMatch?: string[]; testIgnore?: string[] } {
  const glob = (files: readonly string[]) => files.map((f) => `**/${f}`);
  if (lane === null) return {};
  const placed = Object.entries(BY_KIND).flatMap(([kind, files]) =>
    files.map((f) => [f, MOVED_ON[server][f] ?? kind] as const),
  );
  if (lane === 'functional') return { testIgnore: glob(placed.map(([f]) => f)) };
  return { testMatch: glob(placed.filter(([, l]) => l === lane).map(([f]) => f)) };
}
