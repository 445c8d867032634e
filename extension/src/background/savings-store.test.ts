import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { StorageAreaLike } from '../shared/settings.ts';
import { createSavingsStore, SAVED_KEY } from './savings-store.ts';

/** A Map-backed storage area; `failWrites` makes every set reject. */
function area(initial: Record<string, unknown> = {}, failWrites = false) {
  const items = new Map(Object.entries(initial));
  const a: StorageAreaLike = {
    get: async (key) => (items.has(key) ? { [key]: items.get(key) } : {}),
    set: async (next) => {
      if (failWrites) throw new Error('quota');
      for (const [k, v] of Object.entries(next)) items.set(k, v);
    },
  };
  return { a, items };
}

test('load reads a stored finite number, anything else as 0', async () => {
  const cases: [stored: unknown, loaded: number][] = [
    [12.5, 12.5],
    [0, 0],
    [undefined, 0],
    ['12', 0],
    [Number.NaN, 0],
    [Number.POSITIVE_INFINITY, 0],
    [null, 0],
  ];
  for (const [stored, loaded] of cases) {
    const { a } = area(stored === undefined ? {} : { [SAVED_KEY]: stored });
    assert.equal(await createSavingsStore(a).load(), loaded, String(stored));
  }
});

test('save writes under the one key, and the next life loads it', async () => {
  const { a, items } = area();
  createSavingsStore(a).save(3.25);
  await Promise.resolve();
  assert.deepEqual([...items], [[SAVED_KEY, 3.25]]);
  assert.equal(await createSavingsStore(a).load(), 3.25);
});

test('a failed write is swallowed; without storage.session nothing is kept', async () => {
  const { a, items } = area({}, true);
  const failing = createSavingsStore(a);
  failing.save(1); // an unhandled rejection would fail this test
  await new Promise((r) => setTimeout(r, 0));
  assert.equal(items.size, 0);
  const none = createSavingsStore(undefined);
  none.save(5);
  assert.equal(await none.load(), 0);
});
