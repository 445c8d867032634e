import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RateLimiter } from './rate-limit.ts';

test('RateLimiter: a burst, then the refill rate, per key', () => {
  let now = 0;
  const r = new RateLimiter({ burst: 3, perSecond: 2 }, () => now);
  assert.deepEqual([r.take('a'), r.take('a'), r.take('a'), r.take('a')], [true, true, true, false]);
  assert.equal(r.take('b'), true); // another frame has its own bucket
  assert.equal(r.waitMs('a'), 500);
  now = 499;
  assert.equal(r.take('a'), false);
  now = 500;
  assert.equal(r.take('a'), true);
  now = 100_000; // refills up to the burst, no further
  assert.deepEqual([r.take('a'), r.take('a'), r.take('a'), r.take('a')], [true, true, true, false]);
  r.forget('a');
  assert.equal(r.take('a'), true);
});
