// A fake page realm for the page world's unit tests (Node has no MediaStreamTrack): the built-ins the
// interposition captures and patches, each a small class that behaves as Chromium's does where micoff
// relies on it, with `_`-prefixed handles through which a test plays the browser (a device goes away,
// a frame arrives, getUserMedia refuses). Fresh classes per realm: each test's page world patches its
// own. `pageWorld` adds the captured originals and a registry whose group machine is the test.
import { FakeTimers } from '../background/fakes.test-util.ts';
import type { GroupReport } from '../shared/messages/page-content.ts';
import type { Bridge } from './bridge.ts';
import { captureOriginals, type Originals, type Realm, type Track } from './originals.ts';
import { createTrackRegistry, type Group, type TrackRegistry } from './track-registry.ts';

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
const NO_DEVICE: Device = { deviceId: '', groupId: '', label: '' };

type Frame = unknown;
type Sink = ReadableStreamDefaultController<Frame>;
type StreamInit = { audio?: boolean | MediaTrackConstraints };

/** What getUserMedia does for one call: open, refuse with the error, open a track that is gone before
 * the page gets it (the device went away), or hand back the given stream. */
export type OpenStep = 'ok' | 'lost' | Error | { stream: unknown };

const accessor = <T>(get: (this: T) => unknown, set?: (this: T, v: never) => void): PropertyDescriptor => ({
  get,
  set,
  configurable: true,
  enumerable: true,
});

const define = (C: { prototype: object }, props: Record<string, PropertyDescriptor>) =>
  Object.defineProperties(C.prototype, props);

export function fakeRealm(opts: { without?: string[] } = {}) {
  const timers = new FakeTimers();

  class FakeTrack extends EventTarget {
    declare enabled: boolean;
    declare readonly readyState: MediaStreamTrackState;
    declare readonly muted: boolean;
    declare readonly label: string;
    declare readonly kind: string;
    _enabled = true;
    _state: MediaStreamTrackState = 'live';
    _muted = false;
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

  // ---- WebRTC ------------------------------------------------------------------------------------------
  class FakeSender {
    declare readonly track: FakeTrack | null;
    _track: FakeTrack | null;
    _encodings: { active: boolean }[] = [{ active: true }];
    _txn = 0;
    _lastTxn: string | null = null;
    /** Each successful setParameters: the encodings' `active`. */
    _sets: boolean[][] = [];
    /** Each replaceTrack's track. */
    _replaced: (FakeTrack | null)[] = [];
    constructor(track: FakeTrack | null) {
      this._track = track;
    }
    replaceTrack(t: FakeTrack | null): Promise<void> {
      this._track = t;
      this._replaced.push(t);
      return Promise.resolve();
    }
    getParameters() {
      this._lastTxn = String(++this._txn);
      return { transactionId: this._lastTxn, encodings: this._encodings.map((e) => ({ ...e })) };
    }
    setParameters(p: { transactionId: string; encodings: { active?: boolean }[] }): Promise<void> {
      if (p.transactionId !== this._lastTxn) return Promise.reject(new Error('InvalidModificationError'));
      this._lastTxn = null;
      this._encodings = p.encodings.map((e) => ({ active: e.active !== false }));
      this._sets.push(this._encodings.map((e) => e.active));
      return Promise.resolve();
    }
  }
  define(FakeSender, {
    track: accessor(function (this: FakeSender) {
      return this._track;
    }),
  });
  class FakeTransceiver {
    declare readonly sender: FakeSender;
    declare direction: RTCRtpTransceiverDirection;
    constructor(
      readonly _sender: FakeSender,
      public _direction: RTCRtpTransceiverDirection = 'sendrecv',
    ) {}
    stop(): void {
      this._direction = 'stopped';
    }
  }
  define(FakeTransceiver, {
    sender: accessor(function (this: FakeTransceiver) {
      return this._sender;
    }),
    direction: accessor(
      function (this: FakeTransceiver) {
        return this._direction;
      },
      function (this: FakeTransceiver, v: RTCRtpTransceiverDirection) {
        this._direction = v;
      },
    ),
  });
  class FakePeerConnection {
    _transceivers: FakeTransceiver[] = [];
    _signaling: RTCSignalingState = 'stable';
    addTrack(t: FakeTrack, ..._streams: FakeStream[]): FakeSender {
      const s = new FakeSender(t);
      this._transceivers.push(new FakeTransceiver(s));
      return s;
    }
    addTransceiver(what: FakeTrack | string, init?: { direction?: RTCRtpTransceiverDirection }) {
      const tr = new FakeTransceiver(new FakeSender(typeof what === 'string' ? null : what), init?.direction);
      this._transceivers.push(tr);
      return tr;
    }
    removeTrack(sender: FakeSender): void {
      sender._track = null;
    }
    close(): void {
      this._signaling = 'closed';
    }
    getTransceivers(): FakeTransceiver[] {
      return [...this._transceivers];
    }
  }
  define(FakePeerConnection, {
    signalingState: accessor(function (this: FakePeerConnection) {
      return this._signaling;
    }),
  });

  // ---- WebAudio ----------------------------------------------------------------------------------------
  class FakeAudioNode extends EventTarget {
    /** Connections as made: [destination, output?, input?]. */
    _edges: unknown[][] = [];
    constructor(readonly _ctx: FakeAudioContext) {
      super();
    }
    connect(...args: unknown[]): unknown {
      this._edges.push(args);
      return args[0];
    }
    disconnect(...args: unknown[]): void {
      this._edges = args.length === 0 ? [] : this._edges.filter((c) => c[0] !== args[0]);
    }
  }
  class FakeSourceNode extends FakeAudioNode {
    readonly _stream: FakeStream;
    constructor(ctx: FakeAudioContext, init: { mediaStream: FakeStream }) {
      super(ctx);
      this._stream = init.mediaStream;
    }
  }
  define(FakeSourceNode, {
    mediaStream: accessor(function (this: FakeSourceNode) {
      return this._stream;
    }),
  });
  class FakeAnalyser extends FakeAudioNode {}
  class FakeScriptProcessor extends FakeAudioNode {}
  class FakeWorkletNode extends FakeAudioNode {
    readonly _port = { onmessage: null };
  }
  define(FakeWorkletNode, {
    port: accessor(function (this: FakeWorkletNode) {
      return this._port;
    }),
  });
  class FakeAudioDestination extends FakeAudioNode {}
  class FakeStreamDestination extends FakeAudioNode {
    readonly _stream = new FakeStream([new FakeTrack(NO_DEVICE)]);
  }
  define(FakeStreamDestination, {
    stream: accessor(function (this: FakeStreamDestination) {
      return this._stream;
    }),
  });
  class FakeAudioParam {}
  class FakeAudioContext {
    state: AudioContextState = 'running';
    readonly destination: FakeAudioDestination = new FakeAudioDestination(this);
    /** Every source node the context's own method made (the page's and micoff's inner ones). */
    readonly _made: FakeSourceNode[] = [];
    createMediaStreamSource(s: FakeStream): FakeSourceNode {
      const node = new FakeSourceNode(this, { mediaStream: s });
      this._made.push(node);
      return node;
    }
    createAnalyser(): FakeAnalyser {
      return new FakeAnalyser(this);
    }
    createMediaStreamDestination(): FakeStreamDestination {
      return new FakeStreamDestination(this);
    }
    close(): Promise<void> {
      this.state = 'closed';
      return Promise.resolve();
    }
  }

  // ---- elements, recorders -------------------------------------------------------------------------------
  class FakeMediaElement {
    _src: unknown = null;
  }
  define(FakeMediaElement, {
    srcObject: accessor(
      function (this: FakeMediaElement) {
        return this._src;
      },
      function (this: FakeMediaElement, v: unknown) {
        this._src = v;
      },
    ),
  });
  class FakeRecorder extends EventTarget {
    state: RecordingState = 'inactive';
    constructor(readonly _stream: FakeStream) {
      super();
    }
    /** Chromium refuses to record a stream holding an ended track. */
    start(): void {
      if (this._stream._tracks.some((t) => t._state === 'ended')) throw new Error('NotSupportedError');
      this.state = 'recording';
    }
    stop(): void {
      if (this.state === 'inactive') return;
      this.state = 'inactive';
      this.dispatchEvent(new Event('stop'));
    }
  }
  define(FakeRecorder, {
    stream: accessor(function (this: FakeRecorder) {
      return this._stream;
    }),
  });

  // ---- insertable streams ----------------------------------------------------------------------------
  /** The realm's own ReadableStream, so patching its pipeTo / pipeThrough leaves Node's alone. */
  class FakeReadable<R = Frame> extends ReadableStream<R> {
    override pipeTo(dest: WritableStream<R>, options?: StreamPipeOptions): Promise<void> {
      return super.pipeTo(dest, options);
    }
    override pipeThrough<T>(
      pair: ReadableWritablePair<T, R>,
      options?: StreamPipeOptions,
    ): ReadableStream<T> {
      return super.pipeThrough(pair, options);
    }
  }
  /** A generator is a track whose frames are what is written to its writable. */
  class FakeGenerator extends FakeTrack {
    readonly _writable: WritableStream<Frame>;
    /** Everything written to the generator. */
    readonly _written: Frame[] = [];
    constructor(init: { kind: string }) {
      super(NO_DEVICE, init.kind);
      this._writable = new WritableStream<Frame>({
        write: (frame) => {
          this._written.push(frame);
          this._emit(frame);
        },
      });
    }
  }
  define(FakeGenerator, {
    writable: accessor(function (this: FakeGenerator) {
      return this._writable;
    }),
  });
  /** A processor's readable carries its track's frames and closes when the track ends. */
  class FakeProcessor {
    readonly _track: FakeTrack;
    readonly _readable: FakeReadable<Frame>;
    constructor(init: FakeTrack | { track: FakeTrack }) {
      const track = init instanceof FakeTrack ? init : init.track;
      this._track = track;
      let sink: Sink | null = null;
      this._readable = new FakeReadable<Frame>({
        start(c) {
          sink = c;
          if (track._state === 'ended') c.close();
          else track._sinks.add(c);
        },
        cancel() {
          if (sink) track._sinks.delete(sink);
        },
      });
    }
  }
  define(FakeProcessor, {
    readable: accessor(function (this: FakeProcessor) {
      return this._readable;
    }),
  });
  /** An identity transform whose readable is the realm's (a page's TransformStream, in effect). */
  const transform = () => {
    let out: Sink | null = null;
    const readable = new FakeReadable<Frame>({
      start(c) {
        out = c;
      },
    });
    const writable = new WritableStream<Frame>({ write: (f) => out?.enqueue(f) });
    return { readable, writable };
  };
  class FakeWorker {
    _posted: unknown[][] = [];
    postMessage(...args: unknown[]): void {
      this._posted.push(args);
    }
  }
  class FakeMessagePort extends FakeWorker {}
  class FakeIFrame {
    _window: unknown = null;
    _document: unknown = null;
  }
  define(FakeIFrame, {
    contentWindow: accessor(function (this: FakeIFrame) {
      return this._window;
    }),
    contentDocument: accessor(function (this: FakeIFrame) {
      return this._document;
    }),
  });

  const globals: Record<string, unknown> = {
    MediaStreamTrack: FakeTrack,
    MediaStream: FakeStream,
    MediaDevices: FakeMediaDevices,
    Navigator: FakeNavigator,
    navigator: { mediaDevices: devices },
    EventTarget,
    Event,
    Function,
    Promise,
    setTimeout: (cb: () => void, ms: number) => timers.setTimeout(cb, ms),
    clearTimeout: (h: unknown) => timers.clearTimeout(h),
    performance: { now: () => timers.now },
    RTCPeerConnection: FakePeerConnection,
    RTCRtpSender: FakeSender,
    RTCRtpTransceiver: FakeTransceiver,
    AudioContext: FakeAudioContext,
    AudioNode: FakeAudioNode,
    MediaStreamAudioSourceNode: FakeSourceNode,
    AnalyserNode: FakeAnalyser,
    ScriptProcessorNode: FakeScriptProcessor,
    AudioWorkletNode: FakeWorkletNode,
    AudioDestinationNode: FakeAudioDestination,
    MediaStreamAudioDestinationNode: FakeStreamDestination,
    AudioParam: FakeAudioParam,
    HTMLMediaElement: FakeMediaElement,
    MediaRecorder: FakeRecorder,
    MediaStreamTrackGenerator: FakeGenerator,
    MediaStreamTrackProcessor: FakeProcessor,
    ReadableStream: FakeReadable,
    WritableStream,
    AbortController,
    Worker: FakeWorker,
    MessagePort: FakeMessagePort,
    HTMLIFrameElement: FakeIFrame,
  };
  for (const name of opts.without ?? []) delete globals[name];
  const w = globals as unknown as Realm;

  return {
    w,
    timers,
    devices,
    /** The realm's constructors as the page reaches them (after patching: through the replacements). */
    get: <T>(name: string) => (w as unknown as Record<string, T>)[name] as T,
    transform,
    FakeTrack,
    FakeStream,
    FakeMediaDevices,
    FakeNavigator,
    FakeSender,
    FakeTransceiver,
    FakePeerConnection,
    FakeAudioContext,
    FakeAudioNode,
    FakeSourceNode,
    FakeAnalyser,
    FakeWorkletNode,
    FakeStreamDestination,
    FakeAudioParam,
    FakeMediaElement,
    FakeRecorder,
    FakeGenerator,
    FakeProcessor,
    FakeReadable,
    FakeWorker,
    FakeMessagePort,
    FakeIFrame,
  };
}

export type FakeRealm = ReturnType<typeof fakeRealm>;
export type FakeTrack = InstanceType<FakeRealm['FakeTrack']>;
export type FakeStream = InstanceType<FakeRealm['FakeStream']>;

type Patch = (w: Realm, o: Originals, reg: TrackRegistry) => unknown;

/** A fake realm, its captured originals and a registry over them, with `patches` installed in order.
 * The group machine is the test: `evaluated` lists the groups the registry asked to decide again,
 * `unheld` the holds it dropped; `release` / `reacquire` do what the machine does on its transitions. */
export function pageWorld(opts: { patches?: Patch[]; without?: string[] } = {}) {
  const realm = fakeRealm({ without: opts.without });
  const o = captureOriginals(realm.w);
  if (!o) throw new Error('the fake realm lacks what captureOriginals needs');
  const evaluated: Group[] = [];
  const unheld: [Group, string][] = [];
  const reg = createTrackRegistry(o, 7, {
    evaluate: (g) => evaluated.push(g),
    unhold: (g, why) => unheld.push([g, why]),
  });
  for (const p of opts.patches ?? []) p(realm.w, o, reg);

  /** The page's getUserMedia (patched, when patchGetUserMedia is installed). */
  const getUserMedia = (c: StreamInit = { audio: true }) =>
    (realm.FakeMediaDevices.prototype.getUserMedia as (c: StreamInit) => Promise<FakeStream>).call(
      realm.devices,
      c,
    );
  /** Adopt a freshly opened track as getUserMedia would (without the patch): a member of its group. */
  const adopt = (device: Device = MIC, constraints: MediaTrackConstraints = {}) => {
    const t = new realm.FakeTrack(device, 'audio', constraints);
    const g = reg.groupFor(device.deviceId, device.label);
    const root = {
      constraints: { ...constraints, deviceId: { exact: device.deviceId } },
      pinned: Promise.resolve(),
    };
    const m = reg.addMember(t as unknown as MediaStreamTrack, t as unknown as MediaStreamTrack, g, root);
    return { t, g, m };
  };
  /** What the group machine does on a release: stop the real tracks, the group is off. */
  const release = (g: Group) => {
    reg.stopTracks(g);
    g.state = 'off';
  };
  /** What the group machine does on an unmute while released; resolves to whether it worked. */
  const reacquire = async (g: Group) => {
    g.state = 'acquiring';
    const ok = await reg.reacquire(g);
    g.state = ok ? 'on' : 'off';
    return ok;
  };
  return { ...realm, o, reg, evaluated, unheld, getUserMedia, adopt, release, reacquire };
}

export type PageWorld = ReturnType<typeof pageWorld>;

/** A bridge that answers at once (release allowed, `delay_ms`) and keeps every report. */
export function fakeBridge(delay_ms = 3000) {
  const reports: GroupReport[][] = [];
  const bridge: Bridge = {
    config: () => ({ delay_ms, release: true, reason: null }),
    onConfig: () => {},
    report: (_realm, groups) => reports.push(groups),
    askPolicy: () => Promise.resolve({ allow: true, reason: null }),
  };
  return { bridge, reports, last: () => reports.at(-1) ?? [] };
}

/** A track as the page-world code types it (the fakes stand in for MediaStreamTrack). */
export const asTrack = (t: object) => t as unknown as Track;

/** The page's getUserMedia through the installed patches: its stream, its track and that track's
 * member and group. */
export async function openMic(w: PageWorld, c?: StreamInit) {
  const stream = await w.getUserMedia(c);
  const t = stream.getAudioTracks()[0] as FakeTrack;
  const m = w.reg.members.get(asTrack(t));
  if (!m) throw new Error('getUserMedia’s track was not adopted (is patchGetUserMedia installed?)');
  return { stream, t, m, g: m.group };
}

/** Let promise callbacks and stream pipes run. */
export const settle = async (rounds = 20) => {
  for (let i = 0; i < rounds; i++) await new Promise<void>((r) => setImmediate(r));
};
