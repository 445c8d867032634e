// Members and groups against the fake realm: who stands for whom, one group per device, what a clone
// inherits, and what reaches the page's track when the device goes away.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { asTrack, DEFAULT, HEADSET, MIC, pageWorld } from '../../fake-realm/realm.test-util.ts';

test('groups: one per deviceId, numbered within the realm, label and clock from the first track', () => {
  const world = pageWorld();
  const { reg } = world;
  world.timers.now = 5000;
  const a = world.adopt(MIC);
  const b = world.adopt(MIC);
  const c = world.adopt(HEADSET);
  assert.equal(a.g, b.g);
  assert.notEqual(a.g, c.g);
  assert.deepEqual(
    [...reg.groups.values()].map((g) => [g.id, g.deviceId, g.label, g.members.size, g.state, g.lastOnMs]),
    [
      ['7.1', 'mic-1', 'Built-in Mic', 2, 'on', 5000],
      ['7.2', 'mic-2', 'USB Headset', 1, 'on', 5000],
    ],
  );
});

test('addMember: from getUserMedia it reads the track; as a clone it copies its source', () => {
  const world = pageWorld();
  const { reg, FakeTrack } = world;
  const { m, g, t } = world.adopt(MIC, { echoCancellation: false });
  t.enabled = false;
  const fresh = reg.addMember(asTrack(t), asTrack(t), g, m.root);
  assert.deepEqual(
    [fresh.enabled, fresh.settings.deviceId, fresh.constraints, fresh.applied, fresh.guard],
    [false, 'mic-1', { echoCancellation: false }, null, null],
  );
  m.enabled = true;
  m.applied = { autoGainControl: false };
  m.guard = 'guarded';
  const c = new FakeTrack(HEADSET); // a clone's own settings are not read: the source's are copied
  const clone = reg.addMember(asTrack(c), asTrack(c), g, m.root, m);
  assert.deepEqual(
    [clone.enabled, clone.settings.deviceId, clone.applied, clone.guard, clone.root === m.root],
    [true, 'mic-1', { autoGainControl: false }, 'guarded', true],
  );
  clone.settings.deviceId = 'changed';
  assert.equal(m.settings.deviceId, 'mic-1', 'a copy, not shared');
  assert.equal(reg.members.get(asTrack(c)), clone);
  assert.equal(reg.byReal.get(asTrack(c)), clone);
});

test('managedIn / liveIn / realOf: a stream’s members, whether one is live, the real track behind one', () => {
  const world = pageWorld();
  const { reg, FakeStream, FakeTrack } = world;
  const { m, t } = world.adopt();
  const other = new FakeTrack(MIC);
  const s = new FakeStream([t, other]) as unknown as MediaStream;
  assert.deepEqual(reg.managedIn(s), [m]);
  assert.equal(reg.liveIn(s), true);
  assert.equal(reg.realOf(asTrack(other)), asTrack(other));
  const real = new FakeTrack(MIC);
  m.real = asTrack(real);
  assert.equal(reg.realOf(asTrack(t)), asTrack(real));
  m.ended = true;
  assert.equal(reg.liveIn(s), false);
  assert.equal(reg.liveIn(new FakeStream([other]) as unknown as MediaStream), false);
});

test('the device goes away: the member ends, the page’s track fires `ended`, the group decides again', () => {
  const world = pageWorld();
  const { reg, FakeTrack, evaluated } = world;
  const { m, g } = world.adopt();
  // A clone: its page track differs from the real one.
  const page = new FakeTrack(MIC);
  const real = new FakeTrack(MIC);
  const clone = reg.addMember(asTrack(page), asTrack(real), g, m.root, m);
  const ended: unknown[] = [];
  reg.onEnded((x) => ended.push(x));
  reg.onEnded(() => {
    throw new Error('one patch fails');
  });
  reg.onEnded((x) => ended.push(x));
  let fired = 0;
  page.addEventListener('ended', () => fired++);
  real._lose();
  assert.equal(clone.ended, true);
  assert.equal(fired, 1, 'the page track hears `ended` once');
  assert.deepEqual(ended, [clone, clone], 'every listener, past the one that threw');
  assert.deepEqual(evaluated, [g]);
  real.dispatchEvent(new Event('ended'));
  assert.equal(fired, 1, 'an ended member is not ended again');
  // A getUserMedia track is its own real track: it hears the browser's `ended`, not a second one.
  const own = world.adopt();
  let heard = 0;
  own.t.addEventListener('ended', () => heard++);
  own.t._lose();
  assert.deepEqual([own.m.ended, heard], [true, 1]);
});

test('mute / unmute reach the page track from the current real track only', async () => {
  const world = pageWorld();
  const { reg, FakeTrack } = world;
  const { m, g } = world.adopt();
  const page = new FakeTrack(MIC);
  const real = new FakeTrack(MIC);
  const clone = reg.addMember(asTrack(page), asTrack(real), g, m.root, m);
  const heard: string[] = [];
  for (const type of ['mute', 'unmute', 'ended']) page.addEventListener(type, () => heard.push(type));
  real.dispatchEvent(new Event('mute'));
  world.release(g);
  assert.deepEqual(await world.reacquire(g), { ok: true });
  const fresh = clone.real as unknown as InstanceType<typeof FakeTrack>;
  assert.notEqual(fresh, real);
  real.dispatchEvent(new Event('unmute')); // the old real track: no longer the page's
  real._lose();
  fresh.dispatchEvent(new Event('unmute'));
  assert.deepEqual(heard, ['mute', 'unmute']);
  assert.equal(clone.ended, false);
});

test('pinDevice: Chromium’s "default" is pinned to the concrete input of the same groupId', async () => {
  const cases: [settings: MediaTrackSettings, inputs: (typeof MIC)[], exact: string][] = [
    [{ deviceId: 'default', groupId: 'grp-1' }, [DEFAULT, MIC, HEADSET], 'mic-1'],
    [{ deviceId: 'default', groupId: 'grp-9' }, [DEFAULT, MIC], 'default'], // Linux: no match, left alone
    [{ deviceId: 'mic-2', groupId: 'grp-2' }, [DEFAULT, MIC, HEADSET], 'default'], // concrete: not asked
  ];
  for (const [settings, inputs, exact] of cases) {
    const world = pageWorld();
    world.devices._inputs = inputs;
    const root = { constraints: { deviceId: { exact: 'default' } }, pinned: Promise.resolve() };
    await world.reg.pinDevice(root, settings);
    assert.deepEqual(root.constraints, { deviceId: { exact } }, JSON.stringify(settings));
  }
});
