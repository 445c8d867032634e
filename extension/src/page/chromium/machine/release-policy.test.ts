import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decideGroup, releaseWaitMs } from './release-policy.ts';

test('releaseWaitMs follows max(0, delay - time since on)', () => {
  const cases: [delay: number, now: number, lastOn: number, wait: number][] = [
    [3000, 1000, 1000, 3000], // disabled the moment it came on: full delay
    [3000, 2000, 1000, 2000],
    [3000, 3999, 1000, 1],
    [3000, 4000, 1000, 0], // on for exactly `delay`: at once
    [3000, 60_000, 1000, 0], // long on: at once
    [0, 1000, 1000, 0], // delay 0: always at once
    [10_000, 1500, 1000, 9500],
    [3000, 900, 1000, 3000], // clock before lastOn (never negative time since on)
  ];
  for (const [delay, now, lastOn, wait] of cases) {
    assert.equal(releaseWaitMs(delay, now, lastOn), wait, `delay ${delay} now ${now} lastOn ${lastOn}`);
  }
});

test('decideGroup with the graph: release when nothing hears and something is silenced', () => {
  const on = { enabled: true, ended: false };
  const cases: [
    heard: { hears: string | null; silenced: boolean },
    kind: string,
    listening?: string | null,
  ][] = [
    [{ hears: null, silenced: true }, 'release'],
    [{ hears: 'x', silenced: false }, 'on', null],
    [{ hears: 'x', silenced: true }, 'on', 'x'],
    [{ hears: null, silenced: false }, 'on', null],
  ];
  for (const [heard, kind, listening] of cases) {
    const a = decideGroup([on], 3000, 3500, 1000, heard);
    assert.equal(a.kind, kind, JSON.stringify(heard));
    if (a.kind === 'on') assert.equal(a.listening, listening);
  }
  assert.equal(
    decideGroup([{ enabled: true, ended: true }], 0, 0, 0, { hears: 'x', silenced: true }).kind,
    'idle',
  );
});

test('decideGroup: release only when every live track is disabled', () => {
  const on = { enabled: true, ended: false };
  const off = { enabled: false, ended: false };
  const endedOn = { enabled: true, ended: true };
  const cases: [members: (typeof on)[], kind: string, wait?: number][] = [
    [[on], 'on'],
    [[off], 'release', 500],
    [[off, on], 'on'], // an enabled clone keeps the device on
    [[off, off], 'release', 500],
    [[off, endedOn], 'release', 500], // a stopped track does not count, even if enabled
    [[endedOn], 'idle'],
    [[], 'idle'],
  ];
  for (const [members, kind, wait] of cases) {
    const a = decideGroup(members, 3000, 3500, 1000);
    assert.equal(a.kind, kind, JSON.stringify(members));
    if (a.kind === 'release') assert.equal(a.waitMs, wait);
  }
});
