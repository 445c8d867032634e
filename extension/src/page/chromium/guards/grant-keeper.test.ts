import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FakeTimers } from '../../../background/fakes.test-util.ts';
import { DEFAULT_SETTINGS } from '../../../shared/settings.ts';
import { createGrantKeeper } from './grant-keeper.ts';

const KEEPALIVE_EVERY_MS = DEFAULT_SETTINGS.grantKeepaliveMs;

/** A page with one device: `released` and `hidden` as the test sets them; a keepalive captures until
 * the test releases again. */
function page(state: PermissionState | null = 'prompt') {
  const timers = new FakeTimers();
  const world = {
    hidden: false,
    released: false,
    capturing: true,
    everyMs: KEEPALIVE_EVERY_MS,
    keepalives: [] as number[],
  };
  const keeper = createGrantKeeper<string>({
    now: () => timers.now,
    setTimer: (cb, ms) => timers.setTimeout(cb, ms),
    clearTimer: (h) => timers.clearTimeout(h),
    everyMs: () => world.everyMs,
    hidden: () => world.hidden,
    released: () => (world.released ? ['mic'] : []),
    capturing: () => world.capturing,
    keepalive: () => {
      world.keepalives.push(timers.now);
      world.released = false;
      world.capturing = true;
      keeper.changed();
    },
  });
  keeper.requested(state);
  keeper.changed();
  const set = (patch: Partial<typeof world>) => {
    Object.assign(world, patch);
    keeper.changed();
  };
  return { timers, world, keeper, set, start: timers.now };
}

test('hidden and released: a keepalive every KEEPALIVE_EVERY_MS after the last capture ended', () => {
  const { timers, world, set, keeper } = page();
  timers.advance(10_000);
  set({ released: true, capturing: false }); // muted, released
  const releasedAt = timers.now;
  set({ hidden: true }); // another tab in front
  timers.advance(KEEPALIVE_EVERY_MS - 1);
  assert.deepEqual(world.keepalives, []);
  timers.advance(1);
  assert.deepEqual(world.keepalives, [releasedAt + KEEPALIVE_EVERY_MS]);
  timers.advance(300);
  set({ released: true, capturing: false }); // the keepalive's hold ran out
  const endedAt = timers.now;
  timers.advance(KEEPALIVE_EVERY_MS);
  assert.deepEqual(world.keepalives, [releasedAt + KEEPALIVE_EVERY_MS, endedAt + KEEPALIVE_EVERY_MS]);
  assert.equal(keeper.count(), 2);
});

test('nothing while visible, capturing, or with nothing released; visibility resumes the schedule', () => {
  const { timers, world, set } = page();
  set({ released: true, capturing: false });
  timers.advance(KEEPALIVE_EVERY_MS * 3);
  assert.deepEqual(world.keepalives, [], 'visible: the timer of the grant does not run');
  set({ hidden: true, released: false, capturing: true }); // hidden while unmuted
  timers.advance(KEEPALIVE_EVERY_MS * 3);
  assert.deepEqual(world.keepalives, [], 'capturing');
  set({ released: true, capturing: false });
  timers.advance(KEEPALIVE_EVERY_MS);
  assert.equal(world.keepalives.length, 1);
});

test('a grant that existed before the page asked is taken as for good: no keepalive', () => {
  const { timers, world, set, keeper } = page('granted');
  set({ released: true, capturing: false, hidden: true });
  timers.advance(KEEPALIVE_EVERY_MS * 3);
  assert.deepEqual(world.keepalives, []);
  assert.equal(keeper.mayExpire(), false);
});

test('unknown permission state counts as may expire; only the first request decides', () => {
  const { keeper } = page(null);
  assert.equal(keeper.mayExpire(), true);
  keeper.requested('granted');
  assert.equal(keeper.mayExpire(), true);
});

test('the interval comes from the config: a shorter one (a test) applies at the next change', () => {
  const { timers, world, set } = page();
  set({ released: true, capturing: false, hidden: true });
  const releasedAt = timers.now;
  set({ everyMs: 10_000 }); // a new config re-decides every group, which tells the keeper
  timers.advance(10_000);
  assert.deepEqual(world.keepalives, [releasedAt + 10_000]);
  timers.advance(300);
  set({ released: true, capturing: false }); // the keepalive's hold ran out
  const endedAt = timers.now;
  set({ everyMs: KEEPALIVE_EVERY_MS }); // back to the default, counted from the end of the last capture
  timers.advance(KEEPALIVE_EVERY_MS - 1);
  assert.deepEqual(world.keepalives, [releasedAt + 10_000]);
  timers.advance(1);
  assert.deepEqual(world.keepalives, [releasedAt + 10_000, endedAt + KEEPALIVE_EVERY_MS]);
});
