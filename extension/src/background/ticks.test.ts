import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TICK_MS, TICKS_PORT } from '../shared/messages/content-background.ts';
import { acceptTicks, type IntervalTimers, type TickPortLike } from './ticks.ts';

function fakes() {
  let now = 0;
  const intervals = new Map<number, { cb: () => void; every: number; next: number }>();
  let id = 0;
  const timers: IntervalTimers = {
    setInterval: (cb, ms) => {
      intervals.set(++id, { cb, every: ms, next: now + ms });
      return id;
    },
    clearInterval: (h) => {
      intervals.delete(h as number);
    },
  };
  const advance = (ms: number) => {
    for (const end = now + ms; now < end; ) {
      now++;
      for (const t of [...intervals.values()]) {
        if (t.next <= now) {
          t.next += t.every;
          t.cb();
        }
      }
    }
  };
  const port = (name: string, fail = false) => {
    const disconnect: (() => void)[] = [];
    const p = {
      name,
      posted: [] as unknown[],
      postMessage(m: unknown) {
        if (fail) throw new Error('Attempting to use a disconnected port object');
        p.posted.push(m);
      },
      onDisconnect: { addListener: (cb: () => void) => disconnect.push(cb) },
      close: () => {
        for (const cb of disconnect) cb();
      },
    };
    return p satisfies TickPortLike;
  };
  return { timers, advance, port, intervals };
}

test('a ticks port gets a tick every TICK_MS until it closes; then nothing runs', () => {
  const { timers, advance, port, intervals } = fakes();
  const p = port(TICKS_PORT);
  assert.equal(acceptTicks(p, timers), true);
  advance(10 * TICK_MS);
  assert.equal(p.posted.length, 10);
  assert.deepEqual(p.posted[0], { type: 'tick' });
  p.close();
  assert.equal(intervals.size, 0);
  advance(10 * TICK_MS);
  assert.equal(p.posted.length, 10);
});

test('another port is not taken; a port that cannot be posted to stops its ticks', () => {
  const { timers, advance, port, intervals } = fakes();
  assert.equal(acceptTicks(port('micoff-popup'), timers), false);
  assert.equal(intervals.size, 0);
  assert.equal(acceptTicks(port(TICKS_PORT, true), timers), true);
  advance(TICK_MS);
  assert.equal(intervals.size, 0);
});
