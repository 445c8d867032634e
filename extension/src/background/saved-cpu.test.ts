import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createSavedCpu } from './saved-cpu.ts';
import type { SavingsStore } from './savings-store.ts';

function store(stored: number) {
  const saves: number[] = [];
  const s: SavingsStore = { load: async () => stored, save: (v) => saves.push(v) };
  return { s, saves };
}

const settle = () => new Promise<void>((r) => setTimeout(r, 0));

test('the total is what earlier lives saved plus this host, kept after each figure from the host', async () => {
  const { s, saves } = store(2);
  const saved = createSavedCpu(s);
  await settle();
  assert.equal(saved.total(), 2);
  saved.fromHost(0.5);
  saved.fromHost(0.5); // unchanged: not written again
  await settle();
  assert.deepEqual(saves, [2.5]);
  saved.hostGone(); // a reconnect: the next host starts at 0
  saved.fromHost(0.25);
  await settle();
  assert.equal(saved.total(), 2.75);
  assert.deepEqual(saves, [2.5, 2.75]);
});

test('a figure from the host before the stored one is loaded still adds up', async () => {
  let resolve = (_: number) => {};
  const saves: number[] = [];
  const saved = createSavedCpu({ load: () => new Promise((r) => (resolve = r)), save: (v) => saves.push(v) });
  saved.fromHost(1);
  resolve(3);
  await settle();
  assert.equal(saved.total(), 4);
  assert.deepEqual(saves, [4]);
});
