// getUserMedia against the fake realm: what becomes a member, with which constraints to reopen it,
// the latency guard, the legacy callback forms, and that the page's call answers as without micoff.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { FakeStream } from '../../fake-realm/realm.test-util.ts';
import { asTrack, DEFAULT, HEADSET, MIC, pageWorld, settle } from '../../fake-realm/realm.test-util.ts';
import { guardReason } from '../guards/latency-guard.ts';
import type { TrackRegistry } from '../track-registry.ts';
import { patchGetUserMedia } from './get-user-media.ts';

const world = () => pageWorld({ patches: [patchGetUserMedia] });

test('each audio track becomes a member of its device’s group, reopened with the page’s constraints', async () => {
  const w = world();
  const cases: [asked: MediaStreamConstraints, device: string, root: MediaTrackConstraints][] = [
    [{ audio: true }, 'mic-1', { deviceId: { exact: 'mic-1' } }],
    [
      { audio: { deviceId: 'mic-2', noiseSuppression: false } },
      'mic-2',
      { deviceId: { exact: 'mic-2' }, noiseSuppression: false },
    ],
    [
      { audio: { autoGainControl: false } },
      'mic-1',
      { autoGainControl: false, deviceId: { exact: 'mic-1' } },
    ],
  ];
  for (const [asked, device, root] of cases) {
    const stream = await w.getUserMedia(asked as never);
    const [t] = stream.getAudioTracks();
    const m = w.reg.members.get(asTrack(t as object));
    assert.ok(m, JSON.stringify(asked));
    assert.equal(m.page, m.real, 'a getUserMedia track is its own real track');
    assert.equal(m.group.deviceId, device);
    assert.deepEqual(m.root.constraints, root);
  }
  assert.deepEqual(
    [...w.reg.groups.values()].map((g) => [g.deviceId, g.label, g.members.size]),
    [
      ['mic-1', 'Built-in Mic', 2],
      ['mic-2', 'USB Headset', 1],
    ],
  );
  assert.deepEqual(
    w.evaluated.map((g) => g.deviceId),
    ['mic-1', 'mic-1', 'mic-2', 'mic-1', 'mic-2'],
    'every group decides again after each adoption',
  );
});

test('Chromium’s "default" is pinned to its concrete device before the group may release', async () => {
  const w = world();
  w.devices._inputs = [DEFAULT, MIC, HEADSET];
  const stream = await w.getUserMedia();
  const m = w.reg.members.get(asTrack(stream.getAudioTracks()[0] as object));
  assert.equal(m?.group.deviceId, 'default');
  await m?.root.pinned;
  assert.deepEqual(m?.root.constraints, { deviceId: { exact: 'mic-1' } });
});

test('the latency guard: the browser is asked for echo cancellation, the page reads its own request', async () => {
  const w = world();
  const stream = await w.getUserMedia({ audio: { latency: 0.04 } as MediaTrackConstraints });
  assert.deepEqual(w.devices._calls, [{ audio: { latency: 0.04, echoCancellation: true } }]);
  const m = w.reg.members.get(asTrack(stream.getAudioTracks()[0] as object));
  assert.equal(m?.guard, guardReason('40 ms'));
  assert.deepEqual(m?.constraints, { latency: 0.04 }, 'the added key masked');
  assert.deepEqual(
    m?.root.constraints,
    { latency: 0.04, echoCancellation: true, deviceId: { exact: 'mic-1' } },
    'a reacquired track stays processed',
  );
  // Unguarded: the page's object itself reaches the browser.
  const asked = { audio: { echoCancellation: false } };
  await w.getUserMedia(asked);
  assert.equal(w.devices._calls[1], asked);
});

test('not adopted: video tracks, ended tracks, tracks already members', async () => {
  const w = world();
  const stream = await w.getUserMedia();
  const [t] = stream.getAudioTracks();
  const video = new w.FakeTrack(MIC, 'video');
  const ended = new w.FakeTrack(MIC);
  ended.stop();
  const before = w.evaluated.length;
  // The browser hands back a stream holding them (the same track again, a video one, an ended one).
  w.devices._plan = [{ stream: new w.FakeStream([t as never, video, ended]) }];
  const again = await w.getUserMedia();
  assert.equal(again.getTracks().length, 3);
  assert.equal(w.reg.members.has(asTrack(video)), false);
  assert.equal(w.reg.members.has(asTrack(ended)), false);
  assert.equal(w.evaluated.length, before, 'nothing new: no decision');
});

test('the page’s call answers as without micoff: same stream, same refusal, same looks', async () => {
  const w = world();
  const original = w.o.getUserMedia;
  const proto = w.FakeMediaDevices.prototype;
  assert.notEqual(proto.getUserMedia, original, 'replaced');
  assert.equal(proto.getUserMedia.name, 'getUserMedia');
  assert.equal(proto.getUserMedia.length, original.length);
  assert.equal(Object.getPrototypeOf(proto.getUserMedia), Function.prototype, 'not an AsyncFunction');
  const denied = new Error('NotAllowedError');
  w.devices._plan = [denied];
  await assert.rejects(w.getUserMedia(), (e) => e === denied);
  const stream = await w.getUserMedia();
  assert.ok(stream instanceof w.FakeStream);
  assert.equal(w.devices._opened[0], stream.getTracks()[0], 'the browser’s own track');
});

test('a failure in the bookkeeping never reaches the page', async () => {
  const w = pageWorld();
  const broken = {
    ...w.reg,
    groupFor: () => {
      throw new Error('bookkeeping failed');
    },
  } as TrackRegistry;
  patchGetUserMedia(w.w, w.o, broken);
  const stream = await w.getUserMedia();
  assert.equal(stream.getTracks().length, 1);
});

test('legacy callback forms go through the same wrapper', async () => {
  const w = world();
  const nav = { mediaDevices: w.devices };
  type Legacy = (this: unknown, c: unknown, ok: (s: FakeStream) => void, fail: (e: unknown) => void) => void;
  const legacy = (w.FakeNavigator.prototype as unknown as { webkitGetUserMedia: Legacy }).webkitGetUserMedia;
  assert.equal(legacy.name, 'webkitGetUserMedia');
  const got: unknown[] = [];
  /** The page's legacy call: the stream or the error lands in `got`. */
  const ask = async () => {
    legacy.call(
      nav,
      { audio: true },
      (s: FakeStream) => got.push(s),
      (e: unknown) => got.push(e),
    );
    await settle();
  };
  await ask();
  const [stream] = got as FakeStream[];
  assert.ok(w.reg.members.has(asTrack(stream?.getTracks()[0] as object)));
  const denied = new Error('NotAllowedError');
  w.devices._plan = [denied];
  await ask();
  assert.equal(got[1], denied);
});

test('without a getUserMedia to replace it says so (nothing else is patched)', () => {
  const w = pageWorld();
  delete (w.FakeMediaDevices.prototype as Partial<typeof w.FakeMediaDevices.prototype>).getUserMedia;
  assert.equal(patchGetUserMedia(w.w, w.o, w.reg), false);
  const ok = pageWorld();
  assert.equal(patchGetUserMedia(ok.w, ok.o, ok.reg), true);
});
