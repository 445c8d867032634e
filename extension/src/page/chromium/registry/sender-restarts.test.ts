import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FakeTimers } from '../../../background/fakes.test-util.ts';
import { settle } from '../../fake-realm/realm.test-util.ts';
import type { Vertex } from '../graph/audibility.ts';
import { RESTART_WAIT_MS, restartStarved } from './sender-restarts.ts';

const track = (next: Vertex[]): Vertex => ({
  kind: 'track',
  key: {},
  enabled: false,
  seen: true,
  unseen: 'u',
  next: () => next,
});

test('restarts the sending senders behind the roots, at once, and settles when they are done', async () => {
  const timers = new FakeTimers();
  const started: string[] = [];
  const finish: (() => void)[] = [];
  const restart = (name: string) => () => {
    started.push(name);
    return new Promise<void>((r) => finish.push(r));
  };
  const roots = [
    track([
      { kind: 'sender', sending: true, why: 's', restart: restart('a') },
      { kind: 'sender', sending: false, why: 's', restart: restart('paused') },
    ]),
    track([{ kind: 'sender', sending: true, why: 's', restart: restart('b') }]),
  ];
  let done = false;
  void restartStarved(
    () => roots,
    (cb, ms) => timers.setTimeout(cb, ms),
  ).then(() => {
    done = true;
  });
  assert.deepEqual(started, ['a', 'b']);
  finish[0]?.();
  await settle();
  assert.equal(done, false, 'waits for every restart');
  finish[1]?.();
  await settle();
  assert.equal(done, true);
});

test('settles at once without senders or when the graph cannot be read; after the wait at most', async () => {
  const timers = new FakeTimers();
  const set = (cb: () => void, ms: number) => timers.setTimeout(cb, ms);
  const none = restartStarved(() => [track([])], set);
  const unreadable = restartStarved(() => {
    throw new Error('a graph we cannot read');
  }, set);
  await Promise.all([none, unreadable]);
  assert.equal(timers.pending(), 0, 'no timer for nothing');
  let done = false;
  void restartStarved(
    () => [track([{ kind: 'sender', sending: true, why: 's', restart: () => new Promise(() => {}) }])],
    set,
  ).then(() => {
    done = true;
  });
  timers.advance(RESTART_WAIT_MS - 1);
  await settle();
  assert.equal(done, false);
  timers.advance(1);
  await settle();
  assert.equal(done, true);
});
