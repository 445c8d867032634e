// Media elements against the fake realm: a managed stream plays through a shadow that follows the
// reacquire; the page reads its own stream back; an element with a stream hears its tracks.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { KEPT } from '../../../shared/release-decision.ts';
import { asTrack, type FakeStream, MIC, openMic, pageWorld } from '../../fake-realm/realm.test-util.ts';
import { patchGetUserMedia } from './get-user-media.ts';
import { patchMediaElement } from './media-element.ts';

async function world() {
  const w = pageWorld({ patches: [patchGetUserMedia, patchMediaElement] });
  const { stream, t, m } = await openMic(w);
  const el = new w.FakeMediaElement() as InstanceType<typeof w.FakeMediaElement> & { srcObject: unknown };
  return { ...w, stream, t, m, g: m.group, el };
}

test('a managed stream plays through a shadow of the real tracks, swapped at the reacquire', async () => {
  const w = await world();
  w.el.srcObject = w.stream;
  assert.equal(w.el.srcObject, w.stream, 'the page reads its own stream');
  const playing = w.el._src as FakeStream;
  assert.notEqual(playing, w.stream);
  assert.deepEqual(playing.getTracks(), [w.t]);
  w.release(w.g);
  assert.deepEqual(await w.reacquire(w.g), { ok: true });
  assert.deepEqual(playing.getTracks(), [w.m.real], 'the element plays the fresh track');
  assert.deepEqual(w.stream.getTracks(), [w.t], 'the page’s stream is untouched');
});

test('srcObject replaced: the old shadow is dropped; an unmanaged stream or null is set as it is', async () => {
  const w = await world();
  w.el.srcObject = w.stream;
  const shadow = w.el._src as FakeStream;
  const plain = new w.FakeStream([new w.FakeTrack(MIC)]);
  w.el.srcObject = plain;
  assert.equal(w.el._src, plain);
  assert.equal(w.el.srcObject, plain);
  w.release(w.g);
  assert.deepEqual(await w.reacquire(w.g), { ok: true });
  assert.deepEqual(shadow.getTracks(), [w.t], 'a dropped shadow no longer follows');
  w.el.srcObject = null;
  assert.equal(w.el.srcObject, null);
});

test('an element with a stream hears its tracks; without one, or once they ended, it does not', async () => {
  const w = await world();
  w.reg.markSeen(asTrack(w.t)); // handed to a recorded consumer once
  const heard = () => w.reg.audibility(w.g, true).hears;
  assert.equal(heard(), null, 'seen, and nothing plays it now');
  w.el.srcObject = w.stream;
  assert.equal(heard(), KEPT.element);
  w.el.srcObject = null;
  assert.equal(heard(), null);
  // A derived track (say a WebAudio destination's) played by an element: a consumer of it.
  const derived = new w.FakeTrack(MIC);
  w.el.srcObject = new w.FakeStream([derived]);
  const v = w.reg.trackVertex(asTrack(derived));
  assert.deepEqual(v.kind === 'track' ? v.next() : null, [{ kind: 'sink', why: KEPT.element }]);
  w.evaluated.length = 0;
  w.el.srcObject = w.stream;
  assert.deepEqual(w.evaluated, [w.g], 'every change decides again');
});
