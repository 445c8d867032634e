import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FakeTimers } from '../../../background/fakes.test-util.ts';
import { createEchoGuard, FAR_END_LEVEL, GUARD_MS, HANGOVER_MS, loudest, POLL_MS } from './echo-guard.ts';

function setup() {
  const timers = new FakeTimers();
  const world = { level: 0, log: [] as string[] };
  const guard = createEchoGuard<string>({
    now: () => timers.now,
    setTimer: (cb, ms) => timers.setTimeout(cb, ms),
    clearTimer: (h) => timers.clearTimeout(h),
    farEndLevel: () => world.level,
    hold: (m, on) => world.log.push(`${m} ${on ? 'held' : 'through'}`),
  });
  return { timers, world, guard };
}

test('far end quiet: the fresh capture goes through untouched', () => {
  const { timers, world, guard } = setup();
  guard.opened(['mic']);
  timers.advance(GUARD_MS + POLL_MS);
  assert.deepEqual(world.log, []);
  assert.equal(guard.guarded(), 0);
  assert.equal(timers.pending(), 0, 'no polling once the guard is over');
});

test('far end talking: held back while audible and HANGOVER_MS after, within GUARD_MS only', () => {
  const { timers, world, guard } = setup();
  world.level = FAR_END_LEVEL;
  guard.opened(['mic']);
  assert.deepEqual(world.log, ['mic held']);
  timers.advance(1000);
  world.level = 0;
  timers.advance(HANGOVER_MS - POLL_MS);
  assert.deepEqual(world.log, ['mic held'], 'the echo of what just played is still coming');
  timers.advance(POLL_MS);
  assert.deepEqual(world.log, ['mic held', 'mic through']);
  world.level = 0.2;
  timers.advance(POLL_MS);
  assert.deepEqual(world.log, ['mic held', 'mic through', 'mic held']);
  timers.advance(GUARD_MS);
  assert.deepEqual(world.log, ['mic held', 'mic through', 'mic held', 'mic through'], 'converged: through');
  assert.equal(timers.pending(), 0);
});

test('below the level is quiet; an unreadable level is quiet', () => {
  const { timers, world, guard } = setup();
  world.level = FAR_END_LEVEL / 2;
  guard.opened(['mic']);
  timers.advance(POLL_MS * 3);
  assert.deepEqual(world.log, []);
});

test('drop lifts the hold and stops polling when nothing is young', () => {
  const { timers, world, guard } = setup();
  world.level = 1;
  guard.opened(['a', 'b']);
  guard.drop('a');
  assert.deepEqual(world.log, ['a held', 'b held', 'a through']);
  guard.drop('b');
  assert.equal(timers.pending(), 0);
});

test('loudest: the loudest source heard recently', () => {
  const now = 1_000_000;
  assert.equal(loudest([], now), 0);
  assert.equal(
    loudest(
      [
        { audioLevel: 0.3, timestamp: now - 1000 },
        { audioLevel: 0.05, timestamp: now - 10 },
        { timestamp: now },
        { audioLevel: Number.NaN, timestamp: now },
      ],
      now,
    ),
    0.05,
  );
});
