// The groups as the bridge reports them, against the fake realm.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { KEPT } from '../../../shared/release-decision.ts';
import { MIC, pageWorld } from '../../fake-realm/realm.test-util.ts';
import type { Member } from './members.ts';
import { echoCancellationOf } from './report.ts';

test('state, reason and counts per group', () => {
  type Case = [what: string, set: (g: ReturnType<typeof world>) => void, fields: unknown[]];
  const world = () => {
    const w = pageWorld();
    const a = w.adopt();
    const b = w.adopt();
    return { w, g: a.g, a: a.m, b: b.m };
  };
  const cases: Case[] = [
    ['capturing', () => {}, ['capturing', null, 2, 2]],
    ['one muted', (x) => (x.a.enabled = false), ['capturing', null, 2, 1]],
    ['kept by a hold', (x) => (x.g.kept = KEPT.recording), ['not_released', KEPT.recording, 2, 2]],
    ['listening while muted', (x) => (x.g.listening = KEPT.analyser), ['not_released', KEPT.analyser, 2, 2]],
    ['released', (x) => (x.g.state = 'off'), ['released', null, 2, 2]],
    ['one stopped', (x) => (x.b.ended = true), ['capturing', null, 1, 1]],
  ];
  for (const [what, set, fields] of cases) {
    const x = world();
    set(x);
    const [r] = x.w.reg.report();
    assert.deepEqual([r?.state, r?.reason, r?.tracks, r?.enabled], fields, what);
    assert.equal(r?.id, '7.1', what);
    assert.equal(r?.label, 'Built-in Mic', what);
  }
});

test('since_ms moves when the state changes only; an ended group is reported once, then forgotten', async () => {
  const { reg, adopt } = pageWorld();
  const { m, g } = adopt();
  const [first] = reg.report();
  await new Promise((r) => setTimeout(r, 5));
  assert.equal(reg.report()[0]?.since_ms, first?.since_ms, 'same state: same since');
  g.state = 'off';
  const [released] = reg.report();
  assert.ok((released?.since_ms ?? 0) > (first?.since_ms ?? 0));
  m.ended = true;
  assert.deepEqual(
    reg.report().map((r) => r.state),
    ['ended'],
  );
  assert.deepEqual(reg.report(), []);
  assert.equal(reg.groups.size, 0);
});

test('label cut to 200 characters; the latency guard’s reason from any live member', () => {
  const { reg, adopt } = pageWorld();
  const long = { ...MIC, label: 'x'.repeat(300) };
  const a = adopt(long);
  const b = adopt(long);
  b.m.guard = 'kept echo cancellation on';
  const [r] = reg.report();
  assert.equal(r?.label.length, 200);
  assert.equal(r?.latency_guard, 'kept echo cancellation on');
  b.m.ended = true;
  assert.equal(reg.report()[0]?.latency_guard, null, 'a stopped member no longer counts');
  assert.ok(a);
});

test('echo cancellation: off if any is off, on if all are on, else unknown', () => {
  const m = (echoCancellation: unknown) => ({ settings: { echoCancellation } }) as unknown as Member;
  const cases: [values: unknown[], expected: boolean | null][] = [
    [[true, true], true],
    [[true, false], false],
    [[undefined, false], false],
    [[true, undefined], null],
    [[], null],
    [['remote-only'], null],
  ];
  for (const [values, expected] of cases) {
    assert.equal(echoCancellationOf(values.map(m)), expected, JSON.stringify(values));
  }
});
