// The Firefox page world against a fake realm (Node has no MediaStreamTrack): what it reports, and that
// the page's own calls answer exactly as without it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type FakeStream, type FakeTrack, fakeBridge, fakeRealm } from '../fake-realm/realm.test-util.ts';
import { observeMutes } from './mute-observer.ts';

const DENIED = new Error('NotAllowedError');

/** A fake realm (fake-realm/realm.test-util.ts) watched by the Firefox page world. */
function realm() {
  const r = fakeRealm();
  const { bridge, reports, last } = fakeBridge(0);
  const originals = {
    gum: r.FakeMediaDevices.prototype.getUserMedia,
    enabled: Object.getOwnPropertyDescriptor(r.FakeTrack.prototype, 'enabled'),
  };
  assert.equal(observeMutes(r.w, bridge), true);
  return {
    w: r.w,
    devices: r.devices,
    reports,
    last,
    originals,
    FakeTrack: r.FakeTrack,
    FakeMediaDevices: r.FakeMediaDevices,
  };
}

type Track = FakeTrack;
type Stream = FakeStream;
const gum = (devices: { getUserMedia(c: unknown): Promise<FakeStream> }) =>
  devices.getUserMedia({ audio: true }) as Promise<Stream>;

test('reports the frame’s microphone tracks: muted since the last one was disabled, clones counted', async () => {
  const { devices, last } = realm();
  const stream = await gum(devices);
  const [track] = stream.getAudioTracks() as [Track];
  assert.deepEqual(
    last().map((g) => [g.label, g.tracks, g.enabled, g.muted_since_ms]),
    [['Built-in Mic', 1, 1, null]],
  );
  const before = Date.now();
  track.enabled = false;
  const since = last()[0]?.muted_since_ms;
  assert.ok(typeof since === 'number' && since >= before, 'muted since the disable');
  assert.equal(track.enabled, false, 'the page reads back what it set');

  // An enabled copy (a "you are talking" detector) keeps Firefox's device on: not muted.
  const copy = track.clone();
  copy.enabled = true;
  assert.deepEqual(
    last().map((g) => [g.tracks, g.enabled, g.muted_since_ms]),
    [[2, 1, null]],
  );
  copy.enabled = false;
  assert.equal(last()[0]?.enabled, 0);
  assert.equal(typeof last()[0]?.muted_since_ms, 'number');

  // MediaStream.clone() copies every track without MediaStreamTrack.clone(): still counted.
  track.enabled = true;
  const streamCopy = stream.clone();
  assert.equal(last()[0]?.tracks, 3);
  for (const t of [track, copy, ...streamCopy.getAudioTracks()]) t.enabled = false;
  assert.equal(last()[0]?.enabled, 0);

  // Stopped and lost tracks leave; the last one takes the device out of the report.
  copy.stop();
  assert.equal(last()[0]?.tracks, 2);
  (streamCopy.getAudioTracks()[0] as Track)._lose();
  assert.equal(last()[0]?.tracks, 1);
  track.stop();
  assert.deepEqual(last(), []);
});

test('the page’s calls answer as without micoff: same results, same errors, same looks', async () => {
  const { w, devices, originals, FakeTrack, FakeMediaDevices } = realm();
  const proto = FakeMediaDevices.prototype;
  // Names, lengths and source text of what was replaced are the originals'.
  assert.notEqual(proto.getUserMedia, originals.gum, 'replaced');
  assert.equal(proto.getUserMedia.name, 'getUserMedia');
  assert.equal(proto.getUserMedia.length, originals.gum.length);
  assert.equal(
    Function.prototype.toString.call(proto.getUserMedia),
    Function.prototype.toString.call(originals.gum),
  );
  const enabled = Object.getOwnPropertyDescriptor(FakeTrack.prototype, 'enabled');
  assert.equal(enabled?.get, originals.enabled?.get, 'the getter is the browser’s own');
  assert.equal(enabled?.set?.name, originals.enabled?.set?.name);
  assert.equal('prototype' in (enabled?.set ?? {}), false, 'not a constructor');
  // A refusal reaches the page as it is.
  devices._plan = [DENIED]; // the browser refuses
  await assert.rejects(gum(devices), (e) => e === DENIED);
  // The setter throws what the browser's throws for a wrong receiver.
  assert.throws(() => enabled?.set?.call({}, false), TypeError);
  // The page's own stream object, untouched.
  const stream = await gum(devices);
  assert.ok(stream instanceof (w.MediaStream as unknown as new () => FakeStream));
  assert.deepEqual(Object.keys(stream), ['_tracks']);
});

test('a page that patches built-ins after document_start does not reach micoff’s bookkeeping', async () => {
  const { devices, last, FakeTrack } = realm();
  const saved = FakeTrack.prototype.getSettings;
  FakeTrack.prototype.getSettings = () => {
    throw new Error('page patch reached');
  };
  try {
    const stream = await gum(devices);
    assert.equal(last()[0]?.tracks, 1);
    (stream.getAudioTracks()[0] as Track).enabled = false;
    assert.equal(last()[0]?.enabled, 0);
  } finally {
    FakeTrack.prototype.getSettings = saved;
  }
});
