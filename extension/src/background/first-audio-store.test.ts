import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { StorageAreaLike } from '../shared/settings.ts';
import { createFirstAudioStore, FIRST_AUDIO_KEY, MAX_ENTRIES } from './first-audio-store.ts';

/** A Map-backed storage area. */
function area(initial: Record<string, unknown> = {}) {
  const items = new Map(Object.entries(initial));
  const a: StorageAreaLike = {
    get: async (key) => (items.has(key) ? { [key]: items.get(key) } : {}),
    set: async (next) => {
      for (const [k, v] of Object.entries(next)) items.set(k, v);
    },
  };
  return { a, items };
}

const SITE = 'https://meet.example.com';

test('learned per site and device, written through, and loaded by the next life', async () => {
  const { a } = area();
  const s = createFirstAudioStore(a);
  await s.ready;
  s.learn(SITE, 'Noise-suppressed mic', { ms: 950, open_ms: 0, at_ms: 10 }, false);
  s.learn(SITE, 'Noise-suppressed mic', { ms: 30, open_ms: 0, at_ms: 20 }, true);
  s.learn('https://other.example', 'Noise-suppressed mic', { ms: 40, open_ms: 0, at_ms: 30 }, false);
  assert.deepEqual(s.get(SITE, 'Noise-suppressed mic'), {
    no_host: { ms: 950, open_ms: 0, at_ms: 10 },
    host: { ms: 30, open_ms: 0, at_ms: 20 },
  });
  assert.equal(s.get(SITE, 'Another mic'), null);
  await Promise.resolve();
  const next = createFirstAudioStore(a);
  await next.ready;
  assert.deepEqual(next.all(), s.all());
});

test('what is stored is checked: malformed entries are dropped, well-formed ones kept', async () => {
  const { a } = area({
    [FIRST_AUDIO_KEY]: {
      [`${SITE}\nmic`]: { no_host: { ms: 900, open_ms: 0, at_ms: 1 }, host: 'x' },
      [`${SITE}\nbad`]: { no_host: { ms: -5, open_ms: 0, at_ms: 1 } },
      [`${SITE}\nworse`]: 7,
    },
  });
  const s = createFirstAudioStore(a);
  await s.ready;
  assert.deepEqual(s.all(), { [`${SITE}\nmic`]: { no_host: { ms: 900, open_ms: 0, at_ms: 1 }, host: null } });
  const { a: junk } = area({ [FIRST_AUDIO_KEY]: 'junk' });
  const t = createFirstAudioStore(junk);
  await t.ready;
  assert.deepEqual(t.all(), {});
});

test('at most MAX_ENTRIES: the least recently measured goes first', async () => {
  const s = createFirstAudioStore(undefined);
  await s.ready;
  for (let i = 0; i <= MAX_ENTRIES; i++)
    s.learn(SITE, `mic ${i}`, { ms: 40, open_ms: 0, at_ms: i + 1 }, false);
  s.learn(SITE, 'mic 1', { ms: 41, open_ms: 0, at_ms: 1000 }, false); // measured again: now the newest
  s.learn(SITE, 'mic new', { ms: 42, open_ms: 0, at_ms: 1001 }, false);
  const keys = Object.keys(s.all());
  assert.equal(keys.length, MAX_ENTRIES);
  assert.ok(!keys.includes(`${SITE}\nmic 0`) && !keys.includes(`${SITE}\nmic 2`));
  assert.ok(keys.includes(`${SITE}\nmic 1`) && keys.includes(`${SITE}\nmic new`));
});
