// The stand-ins behind the page's processors, against the fake realm (real web streams underneath).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Originals } from '../../../common/originals.ts';
import { asTrack, type FakeTrack, pageWorld, settle } from '../../../fake-realm/realm.test-util.ts';
import { canStandIn, createStandIns } from './stand-ins.ts';

test('canStandIn: a generator, a processor, their stream getters, pipeTo and AbortController', () => {
  const keys: (keyof Originals)[] = [
    'TrackGenerator',
    'TrackProcessor',
    'generatorWritable',
    'processorReadable',
    'pipeTo',
    'AbortController',
  ];
  const { o } = pageWorld();
  assert.equal(canStandIn(o), true);
  for (const k of keys) assert.equal(canStandIn({ ...o, [k]: null }), false, k);
});

test('one stand-in per member, fed from its real track; none for an ended member; closed at the end', async () => {
  const w = pageWorld();
  const { m, g, t } = w.adopt();
  const standIns = createStandIns(w.o, w.reg, () => []);
  const s = standIns.standInFor(m) as unknown as InstanceType<typeof w.FakeGenerator>;
  assert.ok(s instanceof w.FakeGenerator);
  assert.equal(standIns.standInFor(m), asTrack(s), 'the same one again');
  await settle();
  t._emit(1);
  await settle();
  w.release(g);
  assert.deepEqual(await w.reacquire(g), { ok: true });
  await settle();
  (m.real as unknown as FakeTrack)._emit(2);
  await settle();
  assert.deepEqual(s._written, [1, 2]);
  assert.equal(s._state, 'live', 'the release never reached the stand-in');
  w.reg.markEnded(m);
  assert.equal(s._state, 'ended');
  assert.equal(standIns.standInFor(m), null);
});
