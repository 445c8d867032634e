// The fake realm's media built-ins: tracks (their accessors, a device that goes away, frames for the
// processors reading them, clones carrying the same frames), streams, getUserMedia following a plan
// the test sets, enumerateDevices, the legacy navigator form.
import { accessor, define } from './accessors.test-util.ts';

export interface Device {
  deviceId: string;
  groupId: string;
  label: string;
}
export const MIC: Device = { deviceId: 'mic-1', groupId: 'grp-1', label: 'Built-in Mic' };
export const HEADSET: Device = { deviceId: 'mic-2', groupId: 'grp-2', label: 'USB Headset' };
/** Chromium's virtual entry for the system default (same groupId as the device it points at). */
export const DEFAULT: Device = { deviceId: 'default', groupId: 'grp-1', label: 'Default' };
/** What a derived track (a generator, a WebAudio destination's) reports. */
export const NO_DEVICE: Device = { deviceId: '', groupId: '', label: '' };

export type Frame = unknown;
export type Sink = ReadableStreamDefaultController<Frame>;
export type StreamInit = { audio?: boolean | MediaTrackConstraints };

/** What getUserMedia does for one call: open, refuse with the error, open a track that is gone before
 * the page gets it (the device went away), or hand back the given stream. */
export type OpenStep = 'ok' | 'lost' | Error | { stream: unknown };

export type Media = ReturnType<typeof fakeMedia>;

export function fakeMedia() {
  class FakeTrack extends EventTarget {
    declare enabled: boolean;
    declare readonly readyState: MediaStreamTrackState;
    declare readonly muted: boolean;
    declare readonly label: string;
    declare readonly kind: string;
    _enabled = true;
    _state: MediaStreamTrackState = 'live';
    _muted = false;
    /** How much audio (ms) the track has had (MediaStreamTrack.stats' totalFramesDuration). */
    _framesMs = 0;
    _constraints: MediaTrackConstraints;
    /** Every applyConstraints call, in order. */
    _applied: MediaTrackConstraints[] = [];
    /** Processors reading this track. */
    readonly _sinks = new Set<Sink>();
    /** Clones: they carry the same device's frames. */
    readonly _clones: FakeTrack[] = [];
    constructor(
      readonly _device: Device,
      readonly _kind = 'audio',
      constraints: MediaTrackConstraints = {},
    ) {
      super();
      this._constraints = { ...constraints };
    }
    stop(): void {
      this._end();
    }
    clone(): FakeTrack {
      return this._rawClone();
    }
    getSettings(): MediaTrackSettings {
      const { deviceId, groupId } = this._device;
      return { deviceId, groupId, echoCancellation: this._constraints.echoCancellation !== false };
    }
    getCapabilities(): MediaTrackCapabilities {
      const { deviceId, groupId } = this._device;
      return { deviceId, groupId, channelCount: { min: 1, max: 2 } };
    }
    getConstraints(): MediaTrackConstraints {
      return { ...this._constraints };
    }
    applyConstraints(c: MediaTrackConstraints = {}): Promise<void> {
      if (this._state === 'ended') return Promise.reject(new Error('InvalidStateError'));
      this._applied.push(c);
      this._constraints = { ...c };
      return Promise.resolve();
    }
    /** The browser's own clone, not through the (patched) prototype method. */
    _rawClone(): FakeTrack {
      const c = new FakeTrack(this._device, this._kind, this._constraints);
      c._enabled = this._enabled;
      if (this._state === 'ended') c._state = 'ended';
      this._clones.push(c);
      return c;
    }
    /** The device went away: the track ends and fires `ended`. */
    _lose(): void {
      if (this._state === 'ended') return;
      this._end();
      this.dispatchEvent(new Event('ended'));
    }
    /** A frame from the device, to every processor on the track and its clones (live ones only). */
    _emit(frame: Frame): void {
      if (this._state !== 'live') return;
      for (const s of this._sinks) s.enqueue(frame);
      for (const c of this._clones) c._emit(frame);
    }
    _end(): void {
      this._state = 'ended';
      for (const s of this._sinks) s.close();
      this._sinks.clear();
    }
  }
  /** MediaStreamTrack.stats of an audio track (a realm has it only with fakeRealm's `stats`). */
  class FakeAudioStats {
    declare readonly totalFramesDuration: number;
    constructor(readonly _track: FakeTrack) {}
  }
  define(FakeAudioStats, {
    totalFramesDuration: accessor(function (this: FakeAudioStats) {
      return this._track._framesMs;
    }),
  });
  define(FakeTrack, {
    enabled: accessor(
      function (this: FakeTrack) {
        return this._enabled;
      },
      function (this: FakeTrack, v: boolean) {
        if (!(this instanceof FakeTrack)) throw new TypeError('Illegal invocation');
        this._enabled = !!v;
      },
    ),
    readyState: accessor(function (this: FakeTrack) {
      return this._state;
    }),
    muted: accessor(function (this: FakeTrack) {
      return this._muted;
    }),
    stats: accessor(function (this: FakeTrack) {
      return new FakeAudioStats(this);
    }),
    kind: accessor(function (this: FakeTrack) {
      return this._kind;
    }),
    label: accessor(function (this: FakeTrack) {
      return this._device.label;
    }),
  });

  class FakeStream extends EventTarget {
    declare readonly active: boolean;
    _tracks: FakeTrack[];
    constructor(init?: FakeStream | FakeTrack[]) {
      super();
      this._tracks = init instanceof FakeStream ? [...init._tracks] : [...(init ?? [])];
    }
    getTracks(): FakeTrack[] {
      return [...this._tracks];
    }
    getAudioTracks(): FakeTrack[] {
      return this._tracks.filter((t) => t._kind === 'audio');
    }
    addTrack(t: FakeTrack): void {
      if (!this._tracks.includes(t)) this._tracks.push(t);
    }
    removeTrack(t: FakeTrack): void {
      const i = this._tracks.indexOf(t);
      if (i >= 0) this._tracks.splice(i, 1);
    }
    clone(): FakeStream {
      return new FakeStream(this._tracks.map((t) => t._rawClone()));
    }
  }
  define(FakeStream, {
    active: accessor(function (this: FakeStream) {
      return this._tracks.some((t) => t._state === 'live');
    }),
  });

  class FakeMediaDevices {
    _inputs: Device[] = [MIC, HEADSET];
    /** What the next calls do, in order (empty: open). */
    _plan: OpenStep[] = [];
    _calls: (StreamInit | undefined)[] = [];
    /** Every track getUserMedia opened. */
    _opened: FakeTrack[] = [];
    getUserMedia(c?: StreamInit): Promise<FakeStream> {
      this._calls.push(c);
      const step = this._plan.shift() ?? 'ok';
      if (step instanceof Error) return Promise.reject(step);
      if (typeof step === 'object') return Promise.resolve(step.stream as FakeStream);
      if (!c?.audio) return Promise.reject(new TypeError('audio or video required'));
      const asked = typeof c.audio === 'object' ? c.audio : {};
      const id = asked.deviceId;
      const want = typeof id === 'string' ? id : (id as ConstrainDOMStringParameters | undefined)?.exact;
      const device = want === undefined ? this._inputs[0] : this._inputs.find((d) => d.deviceId === want);
      if (!device) return Promise.reject(new Error('NotFoundError'));
      const t = new FakeTrack(device, 'audio', asked);
      this._opened.push(t);
      if (step === 'lost') t._lose();
      return Promise.resolve(new FakeStream([t]));
    }
    enumerateDevices(): Promise<Pick<MediaDeviceInfo, 'kind' | 'deviceId' | 'groupId' | 'label'>[]> {
      return Promise.resolve(this._inputs.map((d) => ({ kind: 'audioinput' as const, ...d })));
    }
  }
  class FakeNavigator {
    webkitGetUserMedia(): void {
      throw new Error('the native legacy form: replaced before use');
    }
  }
  const devices = new FakeMediaDevices();

  return { FakeTrack, FakeStream, FakeMediaDevices, FakeNavigator, FakeAudioStats, devices };
}
