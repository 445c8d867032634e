// e2e on the real-audio rig (e2e/rig/), in lanes (e2e/lanes.ts): the functional specs with several
// workers; the CPU specs and the timing specs one at a time. Retries only on CI (a retried pass is
// "flaky" in the JSON report; npm test names it). List + JSON reporters: the JSON is what
// scripts/test.sh counts (scripts/e2e-report.ts).
import { defineConfig } from '@playwright/test';
import { LANE_WORKERS, laneFilter, laneOf } from './lanes.ts';
import type { WorkerFixtures } from './rig/fixtures.ts';
import { onCi } from './rig/needs.ts';

const CI = onCi();
const lane = laneOf();

export default defineConfig<unknown, WorkerFixtures>({
  testDir: './tests',
  // One per lane: lanes run at the same time, and Playwright empties its output folder when it starts.
  outputDir: lane ? `./artifacts/test-results-${lane}` : './artifacts/test-results',
  workers: lane ? LANE_WORKERS[lane] : 1,
  fullyParallel: false,
  retries: CI ? 1 : 0,
  forbidOnly: CI,
  timeout: 90_000,
  expect: { timeout: 15_000 },
  reporter: [
    ['list'],
    ['json', { outputFile: process.env.PLAYWRIGHT_JSON_OUTPUT_NAME ?? './artifacts/results.json' }],
  ],
  projects: [
    { name: 'pulseaudio', use: { audioServer: 'pulseaudio' }, ...laneFilter(lane, 'pulseaudio') },
    { name: 'pipewire', use: { audioServer: 'pipewire' }, ...laneFilter(lane, 'pipewire') },
  ],
});
