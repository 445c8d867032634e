// A Playwright JSON report as Playwright writes it (file suites holding specs, a describe nested in
// one), with one test of each status: for the tests of scripts/e2e-report.ts and scripts/test-tally.sh.
import type { JSONReport } from '@playwright/test/reporter';

type Status = 'expected' | 'unexpected' | 'flaky' | 'skipped';

/** One test of a report: its project, its status, its results' statuses, its annotations. */
function t(projectName: string, status: Status, results: string[], skip?: string) {
  return {
    projectName,
    status,
    annotations: skip ? [{ type: 'skip', description: skip }] : [],
    // Each result took 1 s per retry number plus one (1 s, then 2 s on a retry).
    results: results.map((s, retry) => ({ status: s, retry, annotations: [], duration: 1000 * (retry + 1) })),
  };
}

/** Passed: 1 + 1 on retry; failed: 1; skipped: 2 (one giving no reason). */
export function sampleReport(): JSONReport {
  return {
    config: { rootDir: '/x/e2e/tests' },
    suites: [
      {
        title: 'release-cpu.spec.ts',
        file: 'release-cpu.spec.ts',
        specs: [
          {
            title: 'overhead bar',
            file: 'release-cpu.spec.ts',
            tests: [t('pulseaudio', 'flaky', ['failed', 'passed']), t('pipewire', 'expected', ['passed'])],
          },
        ],
        suites: [
          {
            title: 'a describe',
            file: 'release-cpu.spec.ts',
            specs: [
              {
                title: 'fails twice',
                file: 'release-cpu.spec.ts',
                tests: [t('pulseaudio', 'unexpected', ['failed', 'failed'])],
              },
            ],
          },
        ],
      },
      {
        title: 'firefox.spec.ts',
        file: 'firefox.spec.ts',
        specs: [
          {
            title: 'Firefox ESR: reaches the host',
            file: 'firefox.spec.ts',
            tests: [
              t('pulseaudio', 'skipped', ['skipped'], '/usr/bin/firefox-esr is not installed\n(Debian)'),
            ],
          },
          {
            title: 'no reason',
            file: 'firefox.spec.ts',
            tests: [t('pipewire', 'skipped', ['skipped'])],
          },
        ],
      },
    ],
    errors: [],
    stats: { startTime: '', duration: 0, expected: 1, unexpected: 1, flaky: 1, skipped: 2 },
  } as unknown as JSONReport;
}
