// The Firefox page world against a fake realm (Node has no MediaStreamTrack): what it reports, and that
// the page's own calls answer exactly as without it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { GroupReport } from '../shared/messages/page-content.ts';
import type { Bridge } from './bridge.ts';
import { observeMutes } from './mute-observer.ts';
import type { Realm } from './originals.ts';

/** Fresh built-ins per test (each test's page world patches its own). */
function builtins() {
  class FakeTrack extends EventTarget {
    declare enabled: boolean;
    _enabled = true;
    _state: 'live' | 'ended' = 'live';
    constructor(
      readonly _device: string,
      readonly _label: string,
    ) {
      super();
    }
    stop(): void {
      this._state = 'ended';
    }
    clone(): FakeTrack {
      return rawClone(this);
    }
    getSettings() {
      return { deviceId: this._device };
    }
    getConstraints() {
      return {};
    }
    getCapabilities() {
      return {};
    }
    applyConstraints() {
      return Promise.resolve();
    }
    /** The browser ends a track when its device goes away. */
    _lose(): void {
      this._state = 'ended';
      this.dispatchEvent(new Event('ended'));
    }
  }
  function rawClone(t: FakeTrack): FakeTrack {
    const c = new FakeTrack(t._device, t._label);
    c._enabled = t._enabled;
    return c;
  }
  const accessor = (get: (this: FakeTrack) => unknown, set?: (this: FakeTrack, v: never) => void) => ({
    get,
    set,
    configurable: true,
    enumerable: true,
  });
  Object.defineProperties(FakeTrack.prototype, {
    enabled: accessor(
      function () {
        return this._enabled;
      },
      function (v: boolean) {
        if (!(this instanceof FakeTrack)) throw new TypeError('not a track');
        this._enabled = !!v;
      },
    ),
    readyState: accessor(function () {
      return this._state;
    }),
    muted: accessor(() => false),
    kind: accessor(() => 'audio'),
    label: accessor(function () {
      return this._label;
    }),
  });

  class FakeStream {
    constructor(readonly _tracks: FakeTrack[]) {}
    getTracks() {
      return [...this._tracks];
    }
    getAudioTracks() {
      return [...this._tracks];
    }
    addTrack(t: FakeTrack) {
      this._tracks.push(t);
    }
    removeTrack(t: FakeTrack) {
      this._tracks.splice(this._tracks.indexOf(t), 1);
    }
    // Firefox clones a stream's tracks without MediaStreamTrack.prototype.clone.
    clone() {
      return new FakeStream(this._tracks.map(rawClone));
    }
  }

  const DENIED = new Error('NotAllowedError');
  class FakeMediaDevices {
    deny = false;
    getUserMedia(_c?: unknown): Promise<FakeStream> {
      if (this.deny) return Promise.reject(DENIED);
      return Promise.resolve(new FakeStream([new FakeTrack('dev-1', 'Built-in Mic')]));
    }
    enumerateDevices() {
      return Promise.resolve([]);
    }
  }
  class FakeNavigator {}
  return { FakeTrack, FakeStream, FakeMediaDevices, FakeNavigator, DENIED };
}

function realm() {
  const { FakeTrack, FakeStream, FakeMediaDevices, FakeNavigator, DENIED } = builtins();
  const devices = new FakeMediaDevices();
  const w = {
    MediaStreamTrack: FakeTrack,
    MediaStream: FakeStream,
    MediaDevices: FakeMediaDevices,
    Navigator: FakeNavigator,
    navigator: { mediaDevices: devices },
    EventTarget,
    Event,
    Function,
    Promise,
    setTimeout,
    clearTimeout,
    performance,
  } as unknown as Realm;
  const reports: GroupReport[][] = [];
  const bridge: Bridge = {
    config: () => ({ delay_ms: 0, release: true, reason: null }),
    onConfig: () => {},
    report: (_realm, groups) => reports.push(groups),
    askPolicy: () => Promise.resolve({ allow: true, reason: null }),
  };
  const originals = {
    gum: FakeMediaDevices.prototype.getUserMedia,
    enabled: Object.getOwnPropertyDescriptor(FakeTrack.prototype, 'enabled'),
  };
  assert.equal(observeMutes(w, bridge), true);
  const last = () => reports.at(-1) ?? [];
  return { w, devices, reports, last, originals, FakeTrack, FakeMediaDevices, DENIED };
}

type Builtins = ReturnType<typeof builtins>;
type Track = InstanceType<Builtins['FakeTrack']>;
type Stream = InstanceType<Builtins['FakeStream']>;
const gum = (devices: InstanceType<Builtins['FakeMediaDevices']>) =>
  devices.getUserMedia({ audio: true }) as unknown as Promise<Stream>;

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
  const { w, devices, originals, FakeTrack, FakeMediaDevices, DENIED } = realm();
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
  devices.deny = true;
  await assert.rejects(gum(devices), (e) => e === DENIED);
  // The setter throws what the browser's throws for a wrong receiver.
  assert.throws(() => enabled?.set?.call({}, false), TypeError);
  // The page's own stream object, untouched.
  devices.deny = false;
  const stream = await gum(devices);
  assert.ok(stream instanceof (w.MediaStream as unknown as Builtins['FakeStream']));
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
