// The way back from a release, against the fake realm: what is reopened with which constraints, what
// goes where after a success, and what is left after a refusal or a device lost between open and swap.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ENDED } from '../../../shared/release-decision.ts';
import type { Track } from '../../common/originals.ts';
import { asTrack, MIC, pageWorld, settle } from '../../fake-realm/realm.test-util.ts';
import { createReacquire, openRoots, reopenRoots, swapFresh } from './reacquire.ts';
import { RESTART_WAIT_MS } from './sender-restarts.ts';

/** One device with two getUserMedia roots: `a` and its clone `a2` on the first, `b` on the second. */
function twoRoots() {
  const world = pageWorld();
  const { reg, FakeTrack } = world;
  const a = world.adopt(MIC, { noiseSuppression: false });
  const b = world.adopt(MIC, { autoGainControl: false });
  const c = new FakeTrack(MIC);
  const a2 = reg.addMember(asTrack(c), asTrack(c), a.g, a.m.root, a.m);
  return { world, g: a.g, a: a.m, a2, b: b.m };
}

test('reopenRoots: one root per getUserMedia behind the live members, none for ended ones', () => {
  const { g, a, a2, b } = twoRoots();
  assert.deepEqual([...reopenRoots(g)], [a.root, b.root]);
  b.ended = true;
  assert.deepEqual([...reopenRoots(g)], [a.root]);
  a.ended = true;
  a2.ended = true;
  assert.deepEqual([...reopenRoots(g)], []);
});

test('success: each root reopened with its constraints; the first member gets the track, others a clone', async () => {
  const { world, g, a, a2, b } = twoRoots();
  const { devices, reg } = world;
  const oldReals = [a.real, a2.real, b.real];
  world.release(g);
  const swapped: unknown[] = [];
  reg.onSwapped((list) => swapped.push(list));
  assert.deepEqual(await world.reacquire(g), { ok: true });
  assert.deepEqual(devices._calls, [
    { audio: { noiseSuppression: false, deviceId: { exact: 'mic-1' } } },
    { audio: { autoGainControl: false, deviceId: { exact: 'mic-1' } } },
  ]);
  const [first, second] = devices._opened;
  assert.equal(a.real, first);
  assert.notEqual(a2.real, first, 'a clone of the fresh track');
  assert.equal((a2.real as unknown as { _device: unknown })._device, MIC);
  assert.equal(b.real, second);
  for (const m of [a, a2, b]) assert.equal(m.real.readyState, 'live');
  for (const [i, m] of [a, a2, b].entries()) {
    assert.equal(reg.byReal.get(m.real), m, 'the fresh track maps back to its member');
    assert.equal(reg.byReal.get(oldReals[i] as Track), m, 'and so does the old one');
  }
  assert.deepEqual(swapped, [[a, a2, b]]);
});

test('success: the fresh track carries the page’s enabled state and its last applyConstraints', async () => {
  const world = pageWorld();
  const { m, g } = world.adopt();
  m.enabled = false;
  m.applied = { echoCancellation: false };
  world.release(g);
  assert.deepEqual(await world.reacquire(g), { ok: true });
  const fresh = world.devices._opened[0];
  assert.equal(fresh?._enabled, false);
  assert.deepEqual(fresh?._applied, [{ echoCancellation: false }]);
});

test('success: a member the page stopped, or whose real track still runs, is left alone', async () => {
  const cases: [what: string, set: (w: ReturnType<typeof twoRoots>) => void, opened: number][] = [
    // b's root has no live member: not even opened.
    ['stopped by the page', (x) => (x.b.ended = true), 1],
    // b's real track was never stopped (it was added after the release): its fresh track is stopped.
    ['still live', (x) => (x.b.real = asTrack(new x.world.FakeTrack(MIC))), 2],
  ];
  for (const [what, set, opened] of cases) {
    const x = twoRoots();
    x.world.release(x.g);
    const before = x.b.real;
    set(x);
    const kept = x.b.real;
    assert.deepEqual(await x.world.reacquire(x.g), { ok: true }, what);
    assert.equal(x.world.devices._opened.length, opened, what);
    assert.equal(x.b.real, kept, what);
    assert.notEqual(x.a.real, before, what);
    if (opened === 2)
      assert.equal(x.world.devices._opened[1]?._state, 'ended', `${what}: unused fresh track stopped`);
  }
});

test('refused: nothing swapped, what opened before the refusal stopped, the browser’s error kept', async () => {
  const { world, g, a, b } = twoRoots();
  const denied = new Error('NotAllowedError');
  world.devices._plan = ['ok', denied];
  world.release(g);
  const reals = [a.real, b.real];
  const swapped: unknown[] = [];
  world.reg.onSwapped((l) => swapped.push(l));
  const reacquire = createReacquire(world.o, {
    prune: () => {},
    restartStarved: () => Promise.resolve(),
    open: (root) => world.o.getUserMedia.call(world.o.mediaDevices, { audio: root.constraints }),
    swapIn: () => assert.fail('nothing may be swapped in'),
    swapped: () => assert.fail('no swap to tell'),
  });
  assert.deepEqual(await reacquire(g), { kind: 'refused', error: denied });
  assert.equal(world.devices._opened[0]?._state, 'ended', 'the first root’s fresh track stopped');
  // Through the registry: the group machine reads false.
  world.devices._plan = [denied];
  assert.equal((await world.reacquire(g)).ok, false);
  assert.deepEqual([a.real, b.real], reals);
  assert.deepEqual(swapped, []);
});

test('lost between open and swap: swapped in, then reported lost; the patches are not told', async () => {
  const world = pageWorld();
  const { m, g } = world.adopt();
  world.devices._plan = ['lost'];
  world.release(g);
  const swapped: unknown[] = [];
  world.reg.onSwapped((l) => swapped.push(l));
  const outcome = await createReacquire(world.o, {
    prune: () => {},
    restartStarved: () => Promise.resolve(),
    open: (root) => world.o.getUserMedia.call(world.o.mediaDevices, { audio: root.constraints }),
    swapIn: (mm, next) => {
      mm.real = next;
    },
    swapped: (l) => swapped.push(l),
  })(g);
  assert.deepEqual(outcome, { kind: 'lost', members: [m] });
  assert.deepEqual(swapped, []);
  world.devices._plan = ['lost'];
  m.real.stop();
  assert.deepEqual(
    await world.reacquire(g),
    { ok: false, why: ENDED.gone },
    'the registry reports the loss as a failure, and why',
  );
});

test('order: prune, then the restarts start, then the device opens; the swap waits for the restarts', async () => {
  const world = pageWorld();
  const { g } = world.adopt();
  world.release(g);
  const log: string[] = [];
  let restarted: () => void = () => {};
  const reacquire = createReacquire(world.o, {
    prune: () => log.push('prune'),
    restartStarved: () => {
      log.push('restart');
      return new Promise<void>((r) => {
        restarted = r;
      });
    },
    open: (root) => {
      log.push('open');
      return world.o.getUserMedia.call(world.o.mediaDevices, { audio: root.constraints });
    },
    swapIn: (m, next) => {
      log.push('swap');
      m.real = next;
    },
    swapped: () => log.push('swapped'),
  });
  const done = reacquire(g);
  assert.deepEqual(log, ['prune', 'restart', 'open'], 'all before the first await');
  await settle();
  assert.deepEqual(log, ['prune', 'restart', 'open'], 'the swap waits for the restarts');
  restarted();
  await done;
  assert.deepEqual(log, ['prune', 'restart', 'open', 'swap', 'swapped']);
});

test('a sender that never answers its restart holds the swap for RESTART_WAIT_MS at most', async () => {
  const world = pageWorld();
  const { m, g, t } = world.adopt();
  // A sending sender whose restart never settles.
  world.reg.addConsumers((track) =>
    track === asTrack(t)
      ? [{ kind: 'sender', sending: true, why: 'sends', restart: () => new Promise(() => {}) }]
      : [],
  );
  world.release(g);
  let ok: boolean | null = null;
  void world.reacquire(g).then((v) => {
    ok = v.ok;
  });
  await settle();
  assert.equal(ok, null);
  assert.equal(m.real, asTrack(t), 'not swapped yet');
  world.timers.advance(RESTART_WAIT_MS - 1);
  await settle();
  assert.equal(ok, null);
  world.timers.advance(1);
  await settle();
  assert.equal(ok, true);
  assert.equal(m.real, world.devices._opened[0]);
});

test('openRoots / swapFresh as steps: a root whose stream has no audio track swaps nothing', async () => {
  const world = pageWorld();
  const { m, g } = world.adopt();
  world.release(g);
  const empty = new world.FakeStream([]);
  const opened = await openRoots(world.o, [m.root], () => Promise.resolve(empty as unknown as MediaStream));
  assert.ok(opened.ok);
  assert.deepEqual(
    swapFresh(world.o, g, opened.fresh, () => assert.fail('no track to swap in')),
    [],
  );
});
