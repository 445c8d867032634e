import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { sampleReport } from './e2e-report.sample.ts';

const TALLY = fileURLToPath(new URL('./test-tally.sh', import.meta.url));

/** `script` run by bash after sourcing scripts/test-tally.sh, in a scratch folder: its status,
 * stdout and stderr. */
function tally(script: string, files: Record<string, string> = {}, env: Record<string, string> = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'micoff-tally-'));
  const base = { ...process.env };
  delete base.CI;
  try {
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
    const r = spawnSync('bash', ['-c', `set -uo pipefail; source '${TALLY}'; ${script}`], {
      cwd: dir,
      encoding: 'utf8',
      env: { ...base, ...env },
    });
    return { status: r.status, stdout: r.stdout, stderr: r.stderr };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const line = (...args: number[]) => tally(`summary_line ${args.join(' ')}`).stdout;

test('the last line: passed, failed; the retried passes and the skipped only when there are some', () => {
  assert.equal(line(12, 0), '12 passed, 0 failed\n');
  assert.equal(line(12, 0, 0, 0), '12 passed, 0 failed\n');
  assert.equal(line(12, 1, 3), '12 passed, 1 failed, 3 skipped\n');
  assert.equal(line(12, 0, 0, 2), '12 passed (2 on retry), 0 failed\n');
  assert.equal(line(12, 1, 3, 2), '12 passed (2 on retry), 1 failed, 3 skipped\n');
});

test('an e2e pass on retry is named above the last line and counted as such; skips with their reason', () => {
  const r = tally('count_playwright_json results.json 1; print_summary', {
    'results.json': JSON.stringify(sampleReport()),
  });
  assert.equal(r.stdout, '2 passed (1 on retry), 1 failed, 2 skipped\n', r.stderr);
  assert.notEqual(r.status, 0);
  assert.match(
    r.stderr,
    /Passed only on retry[^\n]*\n {2}- e2e: release-cpu\.spec\.ts › overhead bar \[pulseaudio\]\n/,
  );
  assert.match(
    r.stderr,
    /- e2e: firefox\.spec\.ts › Firefox ESR: reaches the host \[pulseaudio\]: \/usr\/bin\/firefox-esr is not installed \(Debian\)\n/,
  );
  assert.match(r.stderr, /Failed:\n {2}- e2e \(1 failed\)\n/);
});

test('all green on the first try: no retry in the last line, status 0', () => {
  const report = sampleReport();
  report.suites = report.suites.slice(0, 1);
  const first = report.suites[0];
  assert.ok(first);
  first.suites = [];
  for (const t of first.specs[0]?.tests ?? []) t.status = 'expected';
  const r = tally('count_playwright_json results.json 0; print_summary', {
    'results.json': JSON.stringify(report),
  });
  assert.equal(r.stdout, '2 passed, 0 failed\n', r.stderr);
  assert.equal(r.status, 0);
  assert.doesNotMatch(r.stderr, /retry/);
});

test('cargo test: ignored tests are skipped, named with their reason', () => {
  const log = [
    'test tests::a_link_planted_by_another_user_is_not_followed ... ignored, needs root',
    'test tests::plain ... ok',
    'test result: ok. 5 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.01s',
    'test result: ok. 2 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s',
  ].join('\n');
  const r = tally('count_cargo_log cargo.log 0; print_summary', { 'cargo.log': `${log}\n` });
  assert.equal(r.stdout, '7 passed, 0 failed, 1 skipped\n', r.stderr);
  assert.equal(r.status, 0);
  assert.match(r.stderr, /- rust: tests::a_link_planted_by_another_user_is_not_followed: needs root\n/);
  // Under CI an ignored test (it needs root; CI runs them as root) did not run: a failure.
  const ci = tally('count_cargo_log cargo.log 0; print_summary', { 'cargo.log': `${log}\n` }, { CI: 'true' });
  assert.equal(ci.stdout, '7 passed, 1 failed, 1 skipped\n', ci.stderr);
  assert.notEqual(ci.status, 0);
  assert.match(ci.stderr, /- cargo test: 1 test\(s\) ignored under CI/);
});

test('node --test: TAP totals as node 20 writes them, skips named, a cancelled test failed', () => {
  // What `node --test --test-reporter=tap` prints (its totals say `skipped`, not `skip`).
  const tap = (cancelled: number) =>
    [
      '# Subtest: parses',
      'ok 1 - parses # SKIP no network',
      '# Subtest: other',
      'ok 2 - other',
      '# tests 3',
      '# suites 0',
      '# pass 1',
      '# fail 0',
      `# cancelled ${cancelled}`,
      '# skipped 1',
      '# todo 0',
    ].join('\n');
  const r = tally('count_tap_log "ts unit tests" tap.log 0; print_summary', { 'tap.log': `${tap(0)}\n` });
  assert.equal(r.stdout, '1 passed, 0 failed, 1 skipped\n', r.stderr);
  assert.match(r.stderr, /- ts: parses: no network\n/);
  const c = tally('count_tap_log "ts unit tests" tap.log 1; print_summary', { 'tap.log': `${tap(1)}\n` });
  assert.equal(c.stdout, '1 passed, 1 failed, 1 skipped\n', c.stderr);
});

test('a runner that exits non-zero without a failed test, or runs none, is one failure; no report is one', () => {
  assert.equal(tally('count_from x 3 0 2; print_summary').stdout, '3 passed, 1 failed\n');
  assert.equal(tally('count_from x 0 0 0; print_summary').stdout, '0 passed, 1 failed\n');
  const r = tally('count_playwright_json missing.json 1; print_summary');
  assert.equal(r.stdout, '0 passed, 1 failed\n');
  assert.match(r.stderr, /e2e \(no report\) \(exit 1\)/);
});
