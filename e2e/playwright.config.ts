// e2e on the real-audio rig (e2e/rig/): one worker (the rig, Chromium and the CPU figures share two
// cores), retries only on CI (a retried pass shows up as "flaky" in the JSON report; npm test counts
// and names it as passed on retry), list + JSON reporters; e2e/artifacts/results.json is what
// scripts/test.sh counts (scripts/e2e-report.ts).
import { defineConfig } from '@playwright/test';
import type { WorkerFixtures } from './rig/fixtures.ts';
import { onCi } from './rig/needs.ts';

const CI = onCi();

export default defineConfig<unknown, WorkerFixtures>({
  testDir: './tests',
  outputDir: './artifacts/test-results',
  workers: 1,
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
    { name: 'pulseaudio', use: { audioServer: 'pulseaudio' } },
    { name: 'pipewire', use: { audioServer: 'pipewire' } },
  ],
});
