import assert from 'node:assert/strict';
import { test } from 'node:test';
import { onCi, unmetNeed } from './needs.ts';

test('a met need does nothing; an unmet one skips locally and fails under CI, saying why', () => {
  assert.equal(unmetNeed(null, false), null);
  assert.equal(unmetNeed(null, true), null);
  const why = '/usr/bin/firefox-esr is not installed';
  assert.deepEqual(unmetNeed(why, false), { skip: why });
  assert.deepEqual(unmetNeed(why, true), { fail: `CI must run this test, but ${why}` });
});

test('CI is whatever sets CI, as for the Playwright config (retries, forbidOnly)', () => {
  assert.equal(onCi({}), false);
  assert.equal(onCi({ CI: '' }), false);
  assert.equal(onCi({ CI: 'true' }), true);
  assert.equal(onCi({ CI: '1' }), true);
});
