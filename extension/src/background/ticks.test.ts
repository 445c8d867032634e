import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TICKS_PORT } from '../shared/messages/content-background.ts';
import { TICK_MAX_MS, TICK_MIN_MS } from '../shared/messages/page-content.ts';
import { acceptTicks, type TickPortLike, type TickTimers } from './ticks.ts';

function fakes() {
  let now = 0;
  const timers_ = new Map<number, { cb: () => void; every: number | null; next: number }>();
  let id = 0;
  const timers: TickTimers = {
    setInterval: (cb, ms) => {
      timers_.set(++id, { cb, every: ms, next: now + ms });
      return id;
    },
    clearInterval: (h) => {
      timers_.delete(h as number);
    },
    setTimeout: (cb, ms) => {
      timers_.set(++id, { cb, every: null, next: now + ms });
      return id;
    },
    clearTimeout: (h) => {
      timers_.delete(h as number);
    },
  };
  const advance = (ms: number) => {
    for (const end = now + ms; now < end; ) {
      now++;
      for (const [k, t] of [...timers_.entries()]) {
        if (t.next > now) continue;
        if (t.every === null) timers_.delete(k);
        else t.next += t.every;
        t.cb();
      }
    }
  };
  const port = (name: string, fail = false) => {
    const disconnect: (() => void)[] = [];
    const message: ((m: unknown) => void)[] = [];
    const p = {
      name,
      posted: [] as unknown[],
      postMessage(m: unknown) {
        if (fail) throw new Error('Attempting to use a disconnected port object');
        p.posted.push(m);
      },
      onMessage: { addListener: (cb: (m: unknown) => void) => message.push(cb) },
      onDisconnect: { addListener: (cb: () => void) => disconnect.push(cb) },
      /** The content script posts `m`. */
      ask: (m: unknown) => {
        for (const cb of message) cb(m);
      },
      close: () => {
        for (const cb of disconnect) cb();
      },
    };
    return p satisfies TickPortLike;
  };
  return { timers, advance, port, pending: timers_ };
}

test('a ticks port gets nothing until it asks, then a tick per period; a new period replaces the old; closed, nothing runs', () => {
  const { timers, advance, port, pending } = fakes();
  const p = port(TICKS_PORT);
  assert.equal(acceptTicks(p, timers), true);
  advance(2000);
  assert.equal(p.posted.length, 0);
  p.ask({ every_ms: 400 });
  advance(4000);
  assert.equal(p.posted.length, 10);
  assert.deepEqual(p.posted[0], { type: 'tick' });
  p.ask({ every_ms: 100 });
  advance(1000);
  assert.equal(p.posted.length, 20);
  assert.equal(pending.size, 1, 'one period at a time');
  p.close();
  assert.equal(pending.size, 0);
  advance(1000);
  assert.equal(p.posted.length, 20);
});

test('a single tick comes once, after its delay; a later one replaces it', () => {
  const { timers, advance, port, pending } = fakes();
  const p = port(TICKS_PORT);
  acceptTicks(p, timers);
  p.ask({ once_ms: 150 });
  advance(149);
  assert.equal(p.posted.length, 0);
  advance(1);
  assert.equal(p.posted.length, 1);
  advance(1000);
  assert.equal(p.posted.length, 1);
  p.ask({ once_ms: 300 });
  advance(100);
  p.ask({ once_ms: 300 });
  advance(1000);
  assert.equal(p.posted.length, 2);
  assert.equal(pending.size, 0);
});

test('requests out of bounds or of another shape start nothing', () => {
  const { timers, advance, port, pending } = fakes();
  const p = port(TICKS_PORT);
  acceptTicks(p, timers);
  for (const bad of [
    { every_ms: TICK_MIN_MS - 1 },
    { every_ms: TICK_MAX_MS + 1 },
    { once_ms: 0 },
    { every_ms: '400' },
    { type: 'tick' },
    null,
    'every_ms',
  ])
    p.ask(bad);
  assert.equal(pending.size, 0);
  advance(TICK_MAX_MS);
  assert.equal(p.posted.length, 0);
});

test('another port is not taken; a port that cannot be posted to stops its ticks', () => {
  const { timers, advance, port, pending } = fakes();
  assert.equal(acceptTicks(port('micoff-popup'), timers), false);
  assert.equal(pending.size, 0);
  const p = port(TICKS_PORT, true);
  assert.equal(acceptTicks(p, timers), true);
  p.ask({ every_ms: 200 });
  p.ask({ once_ms: 500 });
  advance(200);
  assert.equal(pending.size, 0);
  p.ask({ every_ms: 200 });
  assert.equal(pending.size, 0, 'a stopped port takes no new period');
});
