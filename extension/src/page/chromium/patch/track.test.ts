// MediaStreamTrack against the fake realm: a member's page track reads as the page left it whether the
// device is on, released or back; enabling, stopping and cloning feed the group machine.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { FakeTrack } from '../../fake-realm/realm.test-util.ts';
import { asTrack, HEADSET, MIC, openMic, pageWorld } from '../../fake-realm/realm.test-util.ts';
import { patchGetUserMedia } from './get-user-media.ts';
import { patchTrack } from './track.ts';

/** A realm with getUserMedia and the track patched, and one microphone track from the page's call. */
async function world() {
  const w = pageWorld({ patches: [patchGetUserMedia, patchTrack] });
  const { t, m } = await openMic(w, { audio: { noiseSuppression: false } } as never);
  w.evaluated.length = 0;
  return { ...w, t, m, g: m.group };
}

test('enabled: the page reads what it set; the member and its real track follow; the group decides', async () => {
  const w = await world();
  w.t.enabled = false;
  assert.deepEqual([w.t.enabled, w.m.enabled], [false, false]);
  assert.deepEqual(w.evaluated, [w.g]);
  // Released: the page still reads and sets its own state.
  w.release(w.g);
  w.t.enabled = true;
  assert.deepEqual([w.t.enabled, w.m.enabled], [true, true]);
  // After a reacquire the real track is another one: it follows the page's.
  assert.deepEqual(await w.reacquire(w.g), { ok: true });
  const fresh = w.m.real as unknown as FakeTrack;
  assert.notEqual(fresh, w.t);
  w.t.enabled = false;
  assert.deepEqual([w.t.enabled, fresh._enabled], [false, false]);
  // Stopped by the page: its real track is left alone.
  w.t.stop();
  w.t.enabled = true;
  assert.equal(fresh._enabled, false);
});

/** A clone of the page's track (a member of its own: its page track is its real one). */
const t2 = (w: Awaited<ReturnType<typeof world>>) => w.t.clone() as FakeTrack;

test('enabled on a track that is no member (a derived one) decides every group again', async () => {
  const w = await world();
  const derived = new w.FakeTrack(MIC);
  derived.enabled = false;
  assert.equal(derived.enabled, false);
  assert.deepEqual(w.evaluated, [w.g]);
});

test('readyState, muted, settings, capabilities, constraints: as the page left them while released', async () => {
  const w = await world();
  w.t._muted = true;
  type Read = [readyState: string, muted: boolean, deviceId: unknown, ec: unknown, ns: unknown];
  const read = (): Read => [
    w.t.readyState,
    w.t.muted,
    w.t.getSettings().deviceId,
    w.t.getCapabilities().deviceId,
    w.t.getConstraints().noiseSuppression,
  ];
  assert.deepEqual(read(), ['live', true, 'mic-1', 'mic-1', false], 'on: the real track’s');
  w.release(w.g);
  assert.equal(w.t._state, 'ended', 'the real track stopped');
  assert.deepEqual(read(), ['live', false, 'mic-1', 'mic-1', false], 'released: the saved ones');
  w.t.stop();
  assert.deepEqual(read().slice(0, 1), ['ended'], 'stopped by the page');
});

test('after a reacquire onto the pinned device, the page still reads its own deviceId and groupId', async () => {
  const w = await world();
  w.m.settings = { ...w.m.settings, deviceId: 'default', groupId: 'page-group' };
  w.m.root.constraints = { deviceId: { exact: 'mic-2' } }; // pinned to another concrete device
  w.release(w.g);
  assert.deepEqual(await w.reacquire(w.g), { ok: true });
  assert.equal((w.m.real as unknown as FakeTrack)._device, HEADSET);
  assert.deepEqual(
    [w.t.getSettings().deviceId, w.t.getSettings().groupId, w.t.getCapabilities().groupId],
    ['default', 'page-group', 'page-group'],
  );
});

test('applyConstraints: on, applied to the real track; released, kept and applied on reacquire', async () => {
  const w = await world();
  await w.t.applyConstraints({ autoGainControl: false });
  assert.deepEqual(w.m.applied, { autoGainControl: false });
  assert.deepEqual(w.t.getConstraints(), { autoGainControl: false }, 'on and applied: the real track’s');
  w.release(w.g);
  await w.t.applyConstraints({ echoCancellation: false });
  assert.deepEqual(w.t.getConstraints(), { echoCancellation: false }, 'released: the page’s latest');
  assert.deepEqual(await w.reacquire(w.g), { ok: true });
  const fresh = w.m.real as unknown as FakeTrack;
  assert.deepEqual(fresh._applied, [{ echoCancellation: false }]);
  assert.deepEqual(w.t.getConstraints(), { echoCancellation: false });
});

test('stop: the member ends for good, its current real track stops too, the group decides', async () => {
  const w = await world();
  w.release(w.g);
  assert.deepEqual(await w.reacquire(w.g), { ok: true });
  const fresh = w.m.real as unknown as FakeTrack;
  const clone = t2(w);
  w.evaluated.length = 0;
  w.t.stop();
  assert.deepEqual([w.m.ended, w.t.readyState, fresh._state], [true, 'ended', 'ended']);
  assert.deepEqual(w.evaluated, [w.g]);
  w.t.stop();
  assert.equal(w.evaluated.length, 1, 'a second stop changes nothing');
  assert.equal(clone.readyState, 'live', 'a clone stays');
});

test('clone: of a member joins its group (also while released); of a derived track is recorded', async () => {
  const w = await world();
  w.m.applied = { autoGainControl: false };
  w.release(w.g);
  const clone = t2(w);
  const cm = w.reg.members.get(asTrack(clone));
  assert.equal(cm?.group, w.g);
  assert.equal(cm?.root, w.m.root);
  assert.deepEqual(cm?.applied, { autoGainControl: false });
  assert.equal(clone.readyState, 'live', 'a clone of a released track reads live');
  assert.deepEqual(await w.reacquire(w.g), { ok: true });
  assert.equal(
    (cm?.real as unknown as FakeTrack | undefined)?._state,
    'live',
    'live again after the reacquire',
  );
  // A derived track's clones are what the graph follows.
  const derived = new w.FakeTrack(MIC);
  const copy = derived.clone();
  assert.equal(w.reg.members.has(asTrack(copy)), false);
  const v = w.reg.trackVertex(asTrack(derived));
  assert.ok(v.kind === 'track');
  assert.deepEqual(
    v.clones?.().map((c) => (c.kind === 'track' ? c.key : null)),
    [copy],
  );
  // A clone of a stopped member is the browser's plain clone.
  clone.stop();
  const late = clone.clone();
  assert.equal(w.reg.members.has(asTrack(late)), false);
  assert.equal(late.readyState, 'ended');
});
