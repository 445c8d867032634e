import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sampleReport } from './e2e-report.sample.ts';
import { type E2eTally, specDurations, tallyE2e, tallyLines } from './e2e-report.ts';

test('a test that passed only on a retry counts as passed and is named as such', () => {
  const want: E2eTally = {
    passed: 2,
    failed: 1,
    skipped: 2,
    onRetry: ['release-cpu.spec.ts › overhead bar [pulseaudio]'],
    skippedWhy: [
      'firefox.spec.ts › Firefox ESR: reaches the host [pulseaudio]: /usr/bin/firefox-esr is not installed\n(Debian)',
      'firefox.spec.ts › no reason [pipewire]: no reason given',
    ],
  };
  assert.deepEqual(tallyE2e(sampleReport()), want);
});

test('the lines for scripts/test-tally.sh: counts first, one line per named test', () => {
  assert.deepEqual(tallyLines(tallyE2e(sampleReport())), [
    'counts 2 1 2',
    'retried release-cpu.spec.ts › overhead bar [pulseaudio]',
    'skipped firefox.spec.ts › Firefox ESR: reaches the host [pulseaudio]: /usr/bin/firefox-esr is not installed (Debian)',
    'skipped firefox.spec.ts › no reason [pipewire]: no reason given',
  ]);
});

test('a skip reason on the last result counts too (Playwright puts runtime skips there)', () => {
  const r = sampleReport();
  const skippedTest = r.suites[1]?.specs[1]?.tests[0];
  assert.ok(skippedTest);
  skippedTest.results[0]?.annotations.push({ type: 'skip', description: 'Xvfb is not installed' });
  assert.equal(tallyE2e(r).skippedWhy[1], 'firefox.spec.ts › no reason [pipewire]: Xvfb is not installed');
});

test('the time per spec file and project, retries counted, slowest first', () => {
  assert.deepEqual(specDurations(sampleReport()), [
    // flaky 1 + 2 s, and the describe's test failed twice: 1 + 2 s.
    { spec: 'release-cpu.spec.ts [pulseaudio]', ms: 6000 },
    { spec: 'firefox.spec.ts [pipewire]', ms: 1000 },
    { spec: 'firefox.spec.ts [pulseaudio]', ms: 1000 },
    { spec: 'release-cpu.spec.ts [pipewire]', ms: 1000 },
  ]);
});
