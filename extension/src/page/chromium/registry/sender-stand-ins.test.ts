// The silent stand-in on released senders: put on at the release (only with keepSending), read as the
// member's track, taken off by the reacquire, the page's own moves and the end; one graph per realm,
// closed with the last stand-in.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { asTrack, MIC, pageWorld } from '../../fake-realm/realm.test-util.ts';

const asSender = (s: object) => s as unknown as RTCRtpSender;

function released(keepSending = true, senders = 1) {
  const world = pageWorld();
  const { m, g, t } = world.adopt();
  const all = Array.from({ length: senders }, () => new world.FakeSender(t));
  for (const s of all) m.senders.add(asSender(s));
  world.reg.stopTracks(g, keepSending);
  g.state = 'off';
  return { world, m, g, t, senders: all };
}

test('release with keepSending: each sender that carried the device sends from a silent stand-in', async () => {
  const { world, m, t, senders } = released(true, 2);
  assert.equal(t._state, 'ended', 'the device is released all the same');
  const [a, b] = senders as [InstanceType<typeof world.FakeSender>, InstanceType<typeof world.FakeSender>];
  assert.notEqual(a._track, t);
  assert.notEqual(a._track, b._track, 'a clone per sender');
  for (const s of [a, b]) {
    assert.equal(s._track?._state, 'live');
    assert.equal(world.reg.byReal.get(asTrack(s._track as object)), m, 'read as the member’s track');
    assert.equal(world.reg.standInOn(asSender(s)), asTrack(s._track as object));
  }
  const contexts = world.FakeAudioContext._all;
  assert.equal(contexts.length, 1, 'one graph for the realm');
  assert.deepEqual(contexts[0]?._options, {
    latencyHint: 'playback',
    sampleRate: 48_000,
    sinkId: { type: 'none' },
  });
  assert.equal(contexts[0]?.state, 'running');
});

test('release without keepSending: the senders keep the stopped track (nothing sent)', () => {
  const { world, t, senders } = released(false);
  assert.equal(senders[0]?._track, t);
  assert.equal(world.FakeAudioContext._all.length, 0);
});

test('a sender the page had moved to another track before the release gets no stand-in', () => {
  const world = pageWorld();
  const { m, g } = world.adopt();
  const other = new world.FakeTrack(MIC);
  const s = new world.FakeSender(other);
  m.senders.add(asSender(s));
  world.reg.stopTracks(g, true);
  assert.equal(s._track, other);
  assert.equal(world.FakeAudioContext._all.length, 0, 'no graph for nothing');
});

test('reacquire: the fresh track replaces the stand-in; the graph closes with the last one', async () => {
  const { world, g, senders } = released(true, 2);
  const standIns = senders.map((s) => s._track);
  assert.deepEqual(await world.reacquire(g), { ok: true });
  await new Promise((r) => setImmediate(r));
  const fresh = world.devices._opened[0];
  assert.equal(senders[0]?._track, fresh);
  assert.notEqual(senders[1]?._track, undefined);
  for (const t of standIns) assert.equal(t?._state, 'ended', 'each stand-in stopped');
  assert.equal(world.FakeAudioContext._all[0]?.state, 'closed');
  for (const s of senders) assert.equal(world.reg.standInOn(asSender(s)), null);
});

test('the page moves a released sender to its own track: the stand-in goes at the next prune', async () => {
  const { world, g, senders } = released(true);
  const s = senders[0] as InstanceType<typeof world.FakeSender>;
  const standIn = s._track;
  const own = new world.FakeTrack(MIC);
  await s.replaceTrack(own);
  world.reg.pruneStandIns();
  assert.equal(standIn?._state, 'ended');
  assert.equal(world.FakeAudioContext._all[0]?.state, 'closed');
  assert.deepEqual(await world.reacquire(g), { ok: true });
  assert.equal(s._track, own, 'the page’s choice stays');
});

test('the device ends while released: its stand-ins stop', () => {
  const { world, g, senders } = released(true);
  const standIn = senders[0]?._track;
  world.reg.endTracks(g);
  assert.equal(standIn?._state, 'ended');
  assert.equal(world.FakeAudioContext._all[0]?.state, 'closed');
});

test('a realm without WebAudio: the release is as without keepSending', () => {
  const world = pageWorld({ without: ['ConstantSourceNode'] });
  const { m, g, t } = world.adopt();
  const s = new world.FakeSender(t);
  m.senders.add(asSender(s));
  world.reg.stopTracks(g, true);
  assert.equal(s._track, t);
  assert.equal(t._state, 'ended');
});
