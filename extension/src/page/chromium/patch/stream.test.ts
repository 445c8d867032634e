// MediaStream against the fake realm: a stream of managed tracks stays active and quiet while the
// device is released; clones of it join the group.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { FakeStream, FakeTrack } from '../../fake-realm/realm.test-util.ts';
import { asTrack, MIC, openMic, pageWorld } from '../../fake-realm/realm.test-util.ts';
import { patchGetUserMedia } from './get-user-media.ts';
import { patchStream } from './stream.ts';
import { patchTrack } from './track.ts';

async function world() {
  const w = pageWorld({ patches: [patchGetUserMedia, patchTrack, patchStream] });
  const { stream, t, g } = await openMic(w);
  /** The page's `new MediaStream(...)` (through the replaced constructor). */
  const Stream = w.get<new (init?: unknown) => FakeStream>('MediaStream');
  return { ...w, stream, t, g, Stream };
}

/** How many `inactive` events reach the page's listener when the browser fires one. */
const inactiveHeard = (s: FakeStream) => {
  let heard = 0;
  s.addEventListener('inactive', () => heard++);
  s.dispatchEvent(new Event('inactive'));
  return heard;
};

test('active: true while released, false once the page stopped its tracks; plain streams as native', async () => {
  const w = await world();
  const plain = new w.Stream([new w.FakeTrack(MIC)]);
  assert.deepEqual([w.stream.active, plain.active], [true, true]);
  w.release(w.g);
  (plain.getTracks()[0] as FakeTrack).stop();
  assert.deepEqual([w.stream.active, plain.active], [true, false]);
  w.t.stop();
  assert.equal(w.stream.active, false);
});

test('the `inactive` event is hidden on every stream holding a managed track', async () => {
  const w = await world();
  const built = new w.Stream([w.t]);
  const added = new w.Stream([]);
  added.addTrack(w.t);
  const cloned = w.stream.clone();
  const plain = new w.Stream([new w.FakeTrack(MIC)]);
  const plainAdded = new w.Stream([]);
  plainAdded.addTrack(new w.FakeTrack(MIC));
  w.release(w.g);
  const rows: [string, FakeStream, number][] = [
    ['from getUserMedia', w.stream, 0],
    ['constructed', built, 0],
    ['added to', added, 0],
    ['cloned', cloned, 0],
    ['unmanaged', plain, 1],
    ['unmanaged, added to', plainAdded, 1],
  ];
  for (const [what, s, heard] of rows) assert.equal(inactiveHeard(s), heard, what);
});

test('clone: a managed stream’s copies are members of the group, even while released', async () => {
  const w = await world();
  w.release(w.g);
  const copy = w.stream.clone();
  const [c] = copy.getTracks();
  assert.notEqual(c, w.t);
  assert.equal(w.reg.members.get(asTrack(c as object))?.group, w.g);
  assert.equal(copy.active, true);
  const plain = new w.Stream([new w.FakeTrack(MIC)]).clone();
  assert.equal(w.reg.members.has(asTrack(plain.getTracks()[0] as object)), false);
});

test('the constructor keeps what native construction gives: instanceof, subclasses', async () => {
  const w = await world();
  class Sub extends (w.Stream as unknown as typeof w.FakeStream) {}
  const s = new Sub([w.t]);
  assert.ok(s instanceof Sub);
  assert.ok(s instanceof w.Stream);
  assert.equal(s.constructor, Sub);
  assert.equal(inactiveHeard(s), 0, 'still quiet while the track is live');
});
