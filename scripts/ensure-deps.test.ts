import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ENSURE_DEPS = fileURLToPath(new URL('./ensure-deps.sh', import.meta.url));

/** ensure-deps --with-firefox without apt and the nightly part, Firefox and Xvfb where `env` says. */
function ensureDeps(env: Record<string, string>) {
  const base = { ...process.env };
  delete base.CI;
  const r = spawnSync('bash', [ENSURE_DEPS, '--with-firefox'], {
    env: { ...base, MICOFF_SKIP_APT: '1', ...env },
    encoding: 'utf8',
  });
  return { status: r.status, stderr: r.stderr };
}

// Any executable stands for an installed one.
const THERE = process.execPath;
const GONE = '/nonexistent/firefox-esr';

test('a missing firefox-esr is said in a block at the end; locally the run goes on (status 0)', () => {
  const r = ensureDeps({ MICOFF_FIREFOX: GONE, MICOFF_XVFB: THERE });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stderr, /NOT INSTALLED \(the tests that need it skip here, and FAIL under CI\):\n/);
  assert.match(r.stderr, /- firefox-esr \(\/nonexistent\/firefox-esr; for the Firefox e2e tests[^)]*\): /);
  assert.doesNotMatch(r.stderr, /- xvfb/);
});

test('under CI a missing firefox-esr or Xvfb is a failure: status 3, which npm test counts', () => {
  for (const env of [
    { MICOFF_FIREFOX: GONE, MICOFF_XVFB: THERE },
    { MICOFF_FIREFOX: THERE, MICOFF_XVFB: '/nonexistent/Xvfb' },
  ]) {
    const r = ensureDeps({ ...env, CI: 'true' });
    assert.equal(r.status, 3, r.stderr);
    assert.match(r.stderr, /CI is set: the tests above must run here/);
  }
});

test('with both there: no NOT INSTALLED block for them, status 0 under CI too', () => {
  const r = ensureDeps({ MICOFF_FIREFOX: THERE, MICOFF_XVFB: THERE, CI: 'true' });
  assert.equal(r.status, 0, r.stderr);
  assert.doesNotMatch(r.stderr, /skip here, and FAIL under CI/);
  // npm test's fuzz run needs no nightly toolchain: it is neither installed nor mentioned.
  assert.doesNotMatch(r.stderr, /nightly toolchain/);
});

test('--fuzz-tools (npm run bench:fuzz) says when the nightly tools are not installed, without failing', () => {
  const base = { ...process.env };
  delete base.CI;
  const r = spawnSync('bash', [ENSURE_DEPS, '--fuzz-tools'], {
    env: { ...base, MICOFF_SKIP_APT: '1', MICOFF_SKIP_NIGHTLY: '1' },
    encoding: 'utf8',
  });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stderr, /- nightly toolchain \+ cargo-fuzz: MICOFF_SKIP_NIGHTLY=1/);
});
