// The whole interposition in one fake realm: the group machine, the registry and every patch wired by
// install(), driven as a page drives a call: mute, wait out the delay, unmute; and a device that cannot
// be reopened; a capture that stalls.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type FakeTrack, fakeBridge, fakeRealm, settle } from '../fake-realm/realm.test-util.ts';
import { install } from './interpose.ts';

async function call(keepSending: boolean | null = true, janus = false, stats = false) {
  const realm = fakeRealm({ stats });
  if (janus)
    Object.assign(realm.w, {
      Janus: Object.assign(() => {}, { init: () => {}, isWebrtcSupported: () => true }),
    });
  const { bridge, reports } = fakeBridge(3000, keepSending);
  assert.equal(install(realm.w, { bridge, realm: 0 }), true);
  assert.equal(install(realm.w, { bridge, realm: 0 }), false, 'once per realm');
  const gum = realm.FakeMediaDevices.prototype.getUserMedia as (
    c: unknown,
  ) => Promise<InstanceType<typeof realm.FakeStream>>;
  const stream = await gum.call(realm.devices, { audio: true });
  const t = stream.getAudioTracks()[0] as FakeTrack;
  const pc = new (realm.get<typeof realm.FakePeerConnection>('RTCPeerConnection'))();
  const sender = pc.addTrack(t);
  const state = () => reports.at(-1)?.map((g) => g.state);
  return { ...realm, t, stream, sender, state };
}

async function muteReleaseUnmute(keepSending: boolean | null, janus = false) {
  const c = await call(keepSending, janus);
  assert.deepEqual(c.state(), ['capturing']);
  c.t.enabled = false;
  c.timers.advance(2999);
  await settle();
  assert.equal(c.t._state, 'live', 'not before the delay');
  c.timers.advance(1);
  await settle();
  assert.deepEqual(c.state(), ['released']);
  assert.equal(c.t._state, 'ended', 'the device is released');
  assert.deepEqual(
    [c.t.readyState, c.t.enabled, c.stream.active],
    ['live', false, true],
    'the page sees no change',
  );
  assert.equal(c.sender.track, c.t, 'the page reads its own while released');
  const released = c.sender._track as FakeTrack | null;
  const releasedState = released?._state;
  c.t.enabled = true;
  await settle();
  assert.deepEqual(c.state(), ['capturing']);
  const fresh = c.devices._opened[1];
  assert.ok(fresh && fresh._state === 'live');
  assert.equal(c.sender._track, fresh, 'the fresh track is on the wire');
  assert.equal(c.sender.track, c.t, 'the page reads its own');
  return { c, released, releasedState };
}

test('mute, delay, release; unmute, reacquire: the page sees one live track throughout', async () => {
  const { c, released, releasedState } = await muteReleaseUnmute(true);
  assert.notEqual(released, c.t, 'while released the sender sends a stand-in’s silence');
  assert.equal(releasedState, 'live');
  assert.equal(released?._state, 'ended', 'the stand-in stopped at the reacquire');
  assert.deepEqual(c.sender._sets, [], 'the RTP clock ran on: no restart');
});

test('without keep_sending: the stopped track on the sender, the RTP stream restarted', async () => {
  const { c, released } = await muteReleaseUnmute(false);
  assert.equal(released, c.t, 'the stopped device track stays on the sender');
  assert.deepEqual(c.sender._sets, [[false], [true]], 'the RTP stream restarted');
});

test('no answer for the site: a stand-in where the page holds janus.js, none elsewhere', async () => {
  const withJanus = await muteReleaseUnmute(null, true);
  assert.notEqual(withJanus.released, withJanus.c.t, 'janus.js: the stand-in');
  assert.deepEqual(withJanus.c.sender._sets, []);
  const without = await muteReleaseUnmute(null, false);
  assert.equal(without.released, without.c.t, 'no janus.js: the stopped track, as before');
  assert.deepEqual(without.c.sender._sets, [[false], [true]]);
});

test('a device that cannot be reopened: the page’s track ends as on unplug', async () => {
  const c = await call();
  c.t.enabled = false;
  c.timers.advance(3000);
  await settle();
  assert.deepEqual(c.state(), ['released']);
  let ended = 0;
  c.t.addEventListener('ended', () => ended++);
  c.devices._plan = [new Error('NotFoundError')];
  c.t.enabled = true;
  await settle();
  assert.deepEqual([c.t.readyState, ended], ['ended', 1]);
  assert.deepEqual(c.state(), ['ended']);
});

test('a capture that stalls under the unmuted page is reopened behind it; one that delivers is left alone', async () => {
  const c = await call(true, false, true);
  let ended = 0;
  c.t.addEventListener('ended', () => ended++);
  // Delivering for a minute: never touched.
  for (let t = 0; t < 60_000; t += 250) {
    c.t._framesMs += 250;
    c.timers.advance(250);
  }
  await settle();
  assert.equal(c.devices._opened.length, 1);
  // Stalled: no frame between two reads a second apart: reopened, the page's objects as before.
  c.timers.advance(2000);
  await settle();
  assert.equal(c.devices._opened.length, 2, 'the device reopened');
  const fresh = c.devices._opened[1];
  assert.equal(c.t._state, 'ended', 'the stalled capture stopped');
  assert.equal(fresh?._state, 'live');
  assert.equal(c.sender._track, fresh, 'the fresh track is on the wire');
  assert.deepEqual([c.t.readyState, c.t.enabled, c.sender.track, ended], ['live', true, c.t, 0]);
  assert.deepEqual(c.state(), ['capturing']);
  // The fresh capture delivers: left alone.
  for (let t = 0; t < 10_000; t += 250) {
    if (fresh) fresh._framesMs += 250;
    c.timers.advance(250);
  }
  await settle();
  assert.equal(c.devices._opened.length, 2);
});

test('a stalled capture whose device cannot be reopened: tried again twice a second, the page’s track live; after a minute it ends', async () => {
  const c = await call(true, false, true);
  c.t._framesMs = 500;
  c.timers.advance(250);
  let ended = 0;
  c.t.addEventListener('ended', () => ended++);
  c.devices._plan = Array.from({ length: 400 }, () => new Error('NotReadableError'));
  while (c.devices._plan.length === 400) {
    c.timers.advance(100);
    await settle();
  }
  assert.equal(c.devices._plan.length, 399, 'one reopen tried');
  assert.deepEqual([c.t.readyState, ended], ['live', 0], 'the page’s track as it was');
  for (let t = 0; t < 58_000; t += 250) {
    c.timers.advance(250);
    await settle();
  }
  assert.deepEqual([c.t.readyState, ended], ['live', 0], 'still trying');
  assert.ok(c.devices._plan.length < 400 - 100 && c.devices._plan.length > 400 - 125, 'about two a second');
  c.devices._plan = [];
  c.timers.advance(1000);
  await settle();
  assert.deepEqual([c.t.readyState, ended, c.state()], ['live', 0, ['capturing']], 'back once it can');
  assert.equal(c.sender._track, c.devices._opened.at(-1));
  // And refused for good: ended after the minute.
  const fresh = c.devices._opened.at(-1);
  if (fresh) fresh._framesMs = 300;
  c.timers.advance(250);
  c.devices._plan = Array.from({ length: 400 }, () => new Error('NotReadableError'));
  for (let t = 0; t < 63_000; t += 250) {
    c.timers.advance(250);
    await settle();
  }
  assert.deepEqual([c.t.readyState, ended, c.state()], ['ended', 1, ['ended']]);
});

test('muted, or the system muted the track: a capture that delivers nothing is not reopened', async () => {
  const c = await call(true, false, true);
  c.t._framesMs = 500;
  c.t._muted = true;
  c.timers.advance(10_000);
  await settle();
  assert.equal(c.devices._opened.length, 1, 'muted by the system: left alone');
  c.t._muted = false;
  c.t.enabled = false; // the page mutes: released, never restarted
  c.timers.advance(2999);
  await settle();
  assert.equal(c.devices._opened.length, 1);
  c.timers.advance(1);
  await settle();
  assert.deepEqual(c.state(), ['released']);
  assert.equal(c.devices._opened.length, 1);
});
