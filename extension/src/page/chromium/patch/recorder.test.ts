// MediaRecorder against the fake realm: a recorder on a managed stream records a shadow and holds the
// device while it records; one started while released records live stand-ins fed once the device is
// back.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { KEPT } from '../../../shared/release-decision.ts';
import type { FakeStream, FakeTrack } from '../../fake-realm/realm.test-util.ts';
import { asTrack, MIC, openMic, pageWorld, settle } from '../../fake-realm/realm.test-util.ts';
import { patchGetUserMedia } from './get-user-media.ts';
import { patchRecorder } from './recorder.ts';

async function world(without: string[] = []) {
  const w = pageWorld({ patches: [patchGetUserMedia, patchRecorder], without });
  const { stream, t, m } = await openMic(w);
  const Recorder =
    w.get<new (s: unknown) => InstanceType<typeof w.FakeRecorder> & { stream: FakeStream }>('MediaRecorder');
  return { ...w, stream, t, m, g: m.group, Recorder };
}

test('a recorder on a managed stream records a shadow, and the page reads its own stream', async () => {
  const w = await world();
  const rec = new w.Recorder(w.stream);
  assert.ok(rec instanceof w.FakeRecorder);
  assert.equal(rec.stream, w.stream);
  assert.notEqual(rec._stream, w.stream);
  assert.deepEqual(rec._stream.getTracks(), [w.t]);
  const plain = new w.FakeStream([new w.FakeTrack(MIC)]);
  assert.equal(new w.Recorder(plain)._stream, plain, 'an unmanaged stream is recorded as it is');
});

test('recording holds the device; a stop lets it go', async () => {
  const w = await world();
  const rec = new w.Recorder(w.stream);
  assert.equal(w.reg.holdReason(w.g), null, 'made, not started');
  rec.start();
  assert.equal(w.reg.holdReason(w.g), KEPT.recording);
  assert.equal(w.reg.audibility(w.g, true).hears, KEPT.recording, 'and it hears the track');
  rec.stop();
  assert.equal(w.reg.holdReason(w.g), null);
  assert.deepEqual(w.unheld, [[w.g, KEPT.recording]]);
});

test('started while released: live stand-ins instead of the dead track, fed once the device is back', async () => {
  const w = await world();
  w.release(w.g);
  const rec = new w.Recorder(w.stream);
  rec.start(); // natively it would throw on the dead track
  assert.equal(rec.state, 'recording');
  const [standIn] = rec._stream.getTracks() as InstanceType<typeof w.FakeGenerator>[];
  assert.ok(standIn instanceof w.FakeGenerator);
  assert.equal(w.reg.holdReason(w.g), KEPT.recording);
  assert.deepEqual(await w.reacquire(w.g), { ok: true });
  await settle();
  (w.m.real as unknown as FakeTrack)._emit('frame 1');
  await settle();
  assert.deepEqual(standIn?._written, ['frame 1'], 'the device’s frames reach the recording');
  rec.stop();
  await settle();
  assert.deepEqual(rec._stream.getTracks(), [w.m.real], 'the member’s track is back in the recording');
  assert.equal(standIn?._state, 'ended');
  (w.m.real as unknown as FakeTrack)._emit('frame 2');
  await settle();
  assert.deepEqual(standIn?._written, ['frame 1'], 'the feed ended with the recording');
});

test('without generators a recorder started while released throws as it would natively', async () => {
  const w = await world(['MediaStreamTrackGenerator']);
  w.release(w.g);
  const rec = new w.Recorder(w.stream);
  assert.throws(() => rec.start(), /NotSupportedError/);
});

test('a recorder on an unmanaged stream hears its tracks while it records, and decides again on stop', async () => {
  const w = await world();
  const derived = new w.FakeTrack(MIC);
  const rec = new w.Recorder(new w.FakeStream([derived]));
  const next = () => {
    const v = w.reg.trackVertex(asTrack(derived));
    return v.kind === 'track' ? v.next() : null;
  };
  assert.deepEqual(next(), []);
  rec.start();
  assert.deepEqual(next(), [{ kind: 'sink', why: KEPT.recording }]);
  w.evaluated.length = 0;
  rec.stop();
  assert.deepEqual(next(), []);
  assert.deepEqual(w.evaluated, [w.g]);
});
