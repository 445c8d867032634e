// A fresh track going in behind a member: onto the senders that still carry the old one, into the
// shadow streams that hold it, and nowhere the page moved away from it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { asTrack, MIC, pageWorld } from '../../fake-realm/realm.test-util.ts';
import { swapIn, swapSenders } from './swap.ts';

const asSender = (s: object) => s as unknown as RTCRtpSender;

test('senders: only one still carrying the old track gets the fresh one; the others are forgotten', async () => {
  type Case = [what: string, carries: 'old' | 'next' | 'other' | 'none', replaced: boolean, kept: boolean];
  const cases: Case[] = [
    ['carries the old track', 'old', true, true],
    ['already carries the fresh one', 'next', false, true],
    ['moved by the page to another track', 'other', false, false],
    ['emptied by the page (removeTrack, replaceTrack(null))', 'none', false, false],
  ];
  for (const [what, carries, replaced, kept] of cases) {
    const world = pageWorld();
    const { m, t } = world.adopt();
    const next = new world.FakeTrack(MIC);
    const other = new world.FakeTrack(MIC);
    const carried = { old: t, next, other, none: null }[carries];
    const sender = new world.FakeSender(carried);
    m.senders.add(asSender(sender));
    swapSenders(world.o, m, asTrack(t), asTrack(next));
    assert.deepEqual(sender._replaced, replaced ? [next] : [], what);
    assert.equal(sender._track, replaced ? next : carried, what);
    assert.equal(m.senders.has(asSender(sender)), kept, what);
  }
});

test('swapIn: rebinds the member, carries enabled and the applied constraints, moves senders and shadows', () => {
  for (const [enabled, applied] of [
    [false, { echoCancellation: false }],
    [true, null],
  ] as const) {
    const world = pageWorld();
    const { m, t } = world.adopt();
    const sender = new world.FakeSender(t);
    m.senders.add(asSender(sender));
    m.enabled = enabled;
    m.applied = applied;
    const next = new world.FakeTrack(MIC);
    const log: string[] = [];
    swapIn(
      world.o,
      {
        rebind: (mm, n) => log.push(`rebind ${mm === m} ${n === asTrack(next)}`),
        swapTrack: (old, n) => log.push(`shadows ${old === asTrack(t)} ${n === asTrack(next)}`),
      },
      m,
      asTrack(next),
    );
    assert.deepEqual(log, ['rebind true true', 'shadows true true']);
    assert.equal(next._enabled, enabled);
    assert.deepEqual(next._applied, applied ? [applied] : []);
    assert.equal(sender._track, next);
  }
});

test('after a reacquire, shadows and senders carry the fresh track; the page’s own stream does not change', async () => {
  const world = pageWorld();
  const { reg, FakeStream, FakeSender } = world;
  const { m, g, t } = world.adopt();
  const page = new FakeStream([t]);
  const shadow = reg.shadowed(page as unknown as MediaStream) as unknown as InstanceType<typeof FakeStream>;
  const sender = new FakeSender(t);
  m.senders.add(asSender(sender));
  world.release(g);
  assert.deepEqual(await world.reacquire(g), { ok: true });
  const fresh = world.devices._opened[0];
  assert.deepEqual(shadow.getTracks(), [fresh]);
  assert.equal(sender._track, fresh);
  assert.deepEqual(page.getTracks(), [t], 'the page keeps its own track object');
});
