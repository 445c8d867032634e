// The release and the end against the fake realm: what stops, what the page keeps reading, who hears
// `ended`.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { asTrack, MIC, pageWorld } from '../../fake-realm/realm.test-util.ts';

test('stopTracks: the live real tracks stop; what the page reads is saved first, with its own ids', () => {
  const world = pageWorld();
  const { reg, FakeTrack } = world;
  const { m, g, t } = world.adopt();
  m.settings = { ...m.settings, deviceId: 'default', groupId: 'page-group' }; // what the page saw
  t._constraints = { echoCancellation: false }; // the real track's settings changed since adoption
  const gone = reg.addMember(asTrack(new FakeTrack(MIC)), asTrack(new FakeTrack(MIC)), g, m.root, m);
  gone.ended = true;
  const goneReal = gone.real as unknown as InstanceType<typeof FakeTrack>;
  world.release(g);
  assert.equal(t._state, 'ended', 'the device is released');
  assert.equal(goneReal._state, 'live', 'a member the page stopped is not touched');
  assert.deepEqual(m.settings, { deviceId: 'default', groupId: 'page-group', echoCancellation: false });
  assert.deepEqual(m.capabilities, {
    deviceId: 'default',
    groupId: 'page-group',
    channelCount: { min: 1, max: 2 },
  });
  assert.equal(m.ended, false, 'the page-visible track stays live');
});

test('stopTracks: a real track whose settings cannot be read is stopped all the same', () => {
  const world = pageWorld();
  const { m, g, t } = world.adopt();
  const saved = m.settings;
  Object.defineProperty(t, '_device', {
    get() {
      throw new Error('the browser cannot read it');
    },
  });
  world.release(g);
  assert.equal(t._state, 'ended');
  assert.equal(m.settings, saved, 'what the page read before stays');
});

test('endTracks: every live member ends for good, its page track fires `ended` once, patches hear', () => {
  const world = pageWorld();
  const { reg, FakeTrack } = world;
  const { m, g, t } = world.adopt();
  const page = new FakeTrack(MIC);
  const clone = reg.addMember(asTrack(page), asTrack(new FakeTrack(MIC)), g, m.root, m);
  const ended: unknown[] = [];
  reg.onEnded((x) => ended.push(x));
  const fired: unknown[] = [];
  for (const x of [t, page]) x.addEventListener('ended', () => fired.push(x));
  reg.endTracks(g);
  assert.deepEqual([m.ended, clone.ended], [true, true]);
  assert.deepEqual(ended, [m, clone]);
  assert.deepEqual(fired, [t, page]);
  assert.equal((clone.real as unknown as InstanceType<typeof FakeTrack>)._state, 'ended');
  reg.endTracks(g);
  assert.equal(fired.length, 2, 'ended members are left alone');
});
