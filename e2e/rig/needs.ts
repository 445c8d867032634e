// What a test needs from this machine that may not be there (Firefox ESR, Chromium, Xvfb, root with the
// mount tools), and the one rule for a need that is not met: locally the test skips, saying why (in
// the report, which `npm test` lists by name, and on stderr); under CI (CI set, as for Playwright's
// retries) it FAILS, because there a skip would leave a run green that did not test (a missing
// firefox-esr once turned ten Firefox tests into skips). Each `...Missing()` of the rig says why or
// returns null; a test calls `need(thatMissing())` first thing (or in a beforeEach hook).
import { test } from '@playwright/test';

/** Whether this run is CI's: the same test as e2e/playwright.config.ts's (retries, forbidOnly). */
export function onCi(env: NodeJS.ProcessEnv = process.env): boolean {
  return !!env.CI;
}

export type UnmetNeed = { skip: string } | { fail: string } | null;

/** What to do when `missing` says why a need is not met (null: it is met). */
export function unmetNeed(missing: string | null, ci: boolean): UnmetNeed {
  if (missing === null) return null;
  return ci ? { fail: `CI must run this test, but ${missing}` } : { skip: missing };
}

/**
 * Inside a test or a beforeEach hook: nothing when `missing` is null; else the running test is
 * skipped with `missing` as its reason (said on stderr too) or, under CI, failed with it.
 */
export function need(missing: string | null): void {
  const unmet = unmetNeed(missing, onCi());
  if (!unmet) return;
  if ('fail' in unmet) throw new Error(unmet.fail);
  const info = test.info();
  console.error(`skipped: ${info.titlePath.join(' › ')} [${info.project.name}]: ${unmet.skip}`);
  test.skip(true, unmet.skip);
}
