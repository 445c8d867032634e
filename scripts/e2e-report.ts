// Playwright's JSON report (e2e/artifacts/results.json) as npm test counts it: passed (on the first try
// or only on a retry), failed, skipped, and by name which tests passed only on retry and which were
// skipped, with the reason the test gave, and how long each spec took. Run as a script (scripts/test-tally.sh),
// it prints `counts PASSED FAILED SKIPPED`, one `retried NAME` or `skipped NAME: WHY` line per test,
// then one `duration MS SPEC [PROJECT]` line per spec file and project, slowest first.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { JSONReport, JSONReportSuite, JSONReportTest } from '@playwright/test/reporter';

export interface E2eTally {
  /** Passed, on the first try or on a retry (Playwright's `expected` + `flaky`). */
  passed: number;
  failed: number;
  skipped: number;
  /** The tests that passed only on a retry (Playwright's `flaky`), by name. */
  onRetry: string[];
  /** The skipped tests by name, each with the reason it gave (`name: why`). */
  skippedWhy: string[];
}

/** `file › title [project]` (the file as the report names it, relative to the test folder). */
function testName(file: string, title: string, test: JSONReportTest): string {
  return `${file} › ${title} [${test.projectName}]`;
}

/** Why a test was skipped: its skip annotation (on the test, or on its last result). */
function skipReason(test: JSONReportTest): string {
  const annotations = [...test.annotations, ...(test.results.at(-1)?.annotations ?? [])];
  return annotations.find((a) => a.type === 'skip')?.description || 'no reason given';
}

export function tallyE2e(report: JSONReport): E2eTally {
  const out: E2eTally = { passed: 0, failed: 0, skipped: 0, onRetry: [], skippedWhy: [] };
  const walk = (suite: JSONReportSuite) => {
    for (const spec of suite.specs) {
      for (const test of spec.tests) {
        const name = testName(spec.file, spec.title, test);
        switch (test.status) {
          case 'expected':
            out.passed++;
            break;
          case 'flaky':
            out.passed++;
            out.onRetry.push(name);
            break;
          case 'unexpected':
            out.failed++;
            break;
          case 'skipped':
            out.skipped++;
            out.skippedWhy.push(`${name}: ${skipReason(test)}`);
            break;
        }
      }
    }
    for (const child of suite.suites ?? []) walk(child);
  };
  for (const suite of report.suites) walk(suite);
  return out;
}

/** The time each spec file took per project, every result counted (retries too), slowest first. */
export function specDurations(report: JSONReport): { spec: string; ms: number }[] {
  const ms = new Map<string, number>();
  const walk = (suite: JSONReportSuite) => {
    for (const spec of suite.specs) {
      for (const test of spec.tests) {
        const key = `${spec.file} [${test.projectName}]`;
        const took = test.results.reduce((sum, r) => sum + (r.duration ?? 0), 0);
        ms.set(key, (ms.get(key) ?? 0) + took);
      }
    }
    for (const child of suite.suites ?? []) walk(child);
  };
  for (const suite of report.suites) walk(suite);
  return [...ms]
    .map(([spec, took]) => ({ spec, ms: took }))
    .sort((a, b) => b.ms - a.ms || a.spec.localeCompare(b.spec));
}

/** The lines scripts/test-tally.sh reads (one per item, no line breaks inside one). */
export function tallyLines(t: E2eTally): string[] {
  const oneLine = (s: string) => s.replace(/\s*\n\s*/g, ' ');
  return [
    `counts ${t.passed} ${t.failed} ${t.skipped}`,
    ...t.onRetry.map((n) => `retried ${oneLine(n)}`),
    ...t.skippedWhy.map((n) => `skipped ${oneLine(n)}`),
  ];
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const file = process.argv[2];
  if (!file) {
    console.error('usage: node --import tsx scripts/e2e-report.ts RESULTS.json');
    process.exit(2);
  }
  const report = JSON.parse(readFileSync(file, 'utf8')) as JSONReport;
  for (const line of tallyLines(tallyE2e(report))) console.log(line);
  for (const d of specDurations(report)) console.log(`duration ${d.ms} ${d.spec}`);
}
