// The page's built-ins, each realm's own. Captured once, before anything is patched and before page
// scripts run (`captureOriginals`): the page can replace any prototype method later, our bookkeeping
// always goes through these. Replaced without changing how they look (`replaceMethod` and kin): a
// replacement keeps the original's name and length, and Function.prototype.toString answers with the
// original's source. Optional surfaces (WebRTC, WebAudio, MediaRecorder, insertable streams) are null
// where the realm lacks them. Hostile territory.

export type Realm = Window & typeof globalThis;
export type Track = MediaStreamTrack;

type Getter<T, V> = (this: T) => V;
type Generator = new (init: { kind: 'audio' }) => Track & { writable: WritableStream };
type Processor = new (init: { track: Track; maxBufferSize?: number }) => { readable: ReadableStream };

export interface Originals {
  readonly TrackProto: MediaStreamTrack;
  readonly StreamProto: MediaStream;
  readonly MediaDevicesProto: MediaDevices;
  readonly mediaDevices: MediaDevices;
  readonly construct: (target: unknown, args: unknown[], newTarget: unknown) => object;

  readonly getUserMedia: MediaDevices['getUserMedia'];
  readonly enumerateDevices: MediaDevices['enumerateDevices'];

  readonly stop: Track['stop'];
  readonly clone: Track['clone'];
  readonly getSettings: Track['getSettings'];
  readonly getConstraints: Track['getConstraints'];
  readonly getCapabilities: Track['getCapabilities'];
  readonly applyConstraints: Track['applyConstraints'];
  readonly readyState: Getter<Track, MediaStreamTrackState>;
  readonly getEnabled: Getter<Track, boolean>;
  readonly setEnabled: (this: Track, v: boolean) => void;
  readonly muted: Getter<Track, boolean>;
  readonly label: Getter<Track, string>;
  readonly kind: Getter<Track, string>;
  readonly isEnded: (t: Track) => boolean;
  /** The track's statistics (`MediaStreamTrack.stats`) and how much audio (ms) an audio one has had so
   * far (page/chromium/guards/first-audio.ts); null where the browser keeps none. */
  readonly trackStats: Getter<Track, object | null> | null;
  readonly totalFramesDuration: Getter<object, number> | null;

  readonly addEventListener: EventTarget['addEventListener'];
  readonly dispatchEvent: EventTarget['dispatchEvent'];
  readonly Event: typeof Event;

  readonly MediaStream: typeof MediaStream;
  readonly getTracks: MediaStream['getTracks'];
  readonly getAudioTracks: MediaStream['getAudioTracks'];
  readonly addTrack: MediaStream['addTrack'];
  readonly removeTrack: MediaStream['removeTrack'];

  readonly setTimeout: (cb: () => void, ms: number) => number;
  readonly clearTimeout: (handle: number) => void;
  /** Monotonic, for the release delay. */
  readonly now: () => number;
  /** Wall clock, for the reported `since_ms`. */
  readonly dateNow: () => number;

  /** RTCRtpSender: the real `track` getter and `replaceTrack`. */
  readonly senderTrack: Getter<RTCRtpSender, Track | null> | null;
  readonly replaceTrack: RTCRtpSender['replaceTrack'] | null;

  /** MediaRecorder's `stream` getter (the shadow it records). */
  readonly recorderStream: Getter<MediaRecorder, MediaStream> | null;
  /** Insertable streams: the stand-ins behind the page's processors (patch/insertable/index.ts) and behind
   * recorders started while released (patch/recorder.ts). */
  readonly TrackGenerator: Generator | null;
  readonly TrackProcessor: Processor | null;
  readonly generatorWritable: Getter<Track, WritableStream> | null;
  readonly processorReadable: Getter<object, ReadableStream> | null;
  readonly ReadableStream: typeof ReadableStream | null;
  readonly WritableStream: typeof WritableStream | null;
  readonly pipeTo: ReadableStream['pipeTo'] | null;
  readonly cancel: ReadableStream['cancel'] | null;
  readonly AbortController: typeof AbortController | null;

  readonly createMediaStreamSource: AudioContext['createMediaStreamSource'] | null;
  readonly sourceNodeStream: Getter<MediaStreamAudioSourceNode, MediaStream> | null;
  readonly connect: ((this: AudioNode, ...args: unknown[]) => unknown) | null;
  readonly disconnect: ((this: AudioNode, ...args: unknown[]) => unknown) | null;

  /** What the audio graph reads (page/chromium/graph/audibility.ts): sender state and WebAudio node kinds. */
  readonly getTransceivers: RTCPeerConnection['getTransceivers'] | null;
  readonly transceiverSender: Getter<RTCRtpTransceiver, RTCRtpSender> | null;
  readonly transceiverDirection: Getter<RTCRtpTransceiver, RTCRtpTransceiverDirection> | null;
  readonly getParameters: RTCRtpSender['getParameters'] | null;
  /** Restarts a sender's RTP stream after a release (patch/rtc.ts `restart`). */
  readonly setParameters: RTCRtpSender['setParameters'] | null;
  readonly signalingState: Getter<RTCPeerConnection, RTCSignalingState> | null;
  readonly destinationStream: Getter<MediaStreamAudioDestinationNode, MediaStream> | null;
  readonly AudioParam: typeof AudioParam | null;
  readonly AnalyserNode: typeof AnalyserNode | null;
  readonly ScriptProcessorNode: typeof ScriptProcessorNode | null;
  readonly AudioWorkletNode: typeof AudioWorkletNode | null;
  readonly AudioDestinationNode: typeof AudioDestinationNode | null;
  readonly MediaStreamAudioDestinationNode: typeof MediaStreamAudioDestinationNode | null;
  /** A silent track for a sender while its device is released (page/chromium/registry/sender-stand-ins.ts). */
  readonly AudioContext: typeof AudioContext | null;
  readonly ConstantSourceNode: typeof ConstantSourceNode | null;
  readonly startSource: AudioScheduledSourceNode['start'] | null;
  readonly closeContext: AudioContext['close'] | null;
  readonly resumeContext: AudioContext['resume'] | null;

  /** The page's microphone permission as `navigator.permissions.query` answers it, and its state
   * (page/chromium/guards/permission-watch.ts); null when the realm has no Permissions API or the query fails. */
  readonly micPermission: () => Promise<PermissionStatus | null>;
  readonly permissionState: Getter<PermissionStatus, PermissionState> | null;
  /** The far end's level (page/chromium/guards/echo-guard.ts): a connection's receivers and their sources. */
  readonly getReceivers: RTCPeerConnection['getReceivers'] | null;
  readonly receiverTrack: Getter<RTCRtpReceiver, Track> | null;
  readonly syncSources: RTCRtpReceiver['getSynchronizationSources'] | null;
  readonly connectionState: Getter<RTCPeerConnection, RTCPeerConnectionState> | null;
  /** A connection's statistics (its own outbound RTP streams, to tell the far end's audio from the
   * page's own coming back on a loopback). */
  readonly getStats: RTCPeerConnection['getStats'] | null;
  /** What the page world reads of the page itself (page/chromium/guards/intent.ts): its visibility and the input events
   * that come before an unmute; null where the realm has no document. */
  readonly page: PageInput | null;
}

/** The page's visibility and what an input event says, read through captured built-ins. */
export interface PageInput {
  readonly document: Document;
  readonly window: EventTarget;
  visible(): boolean;
  /** The event's composed path, innermost first (empty when it cannot be read). */
  path(e: Event): object[];
  /** A node a user presses: a button, a link, a form control, a `role=button`. */
  interactive(node: object): boolean;
  key(
    e: Event,
  ): { code: string; key: string; ctrl: boolean; alt: boolean; shift: boolean; meta: boolean } | null;
}

const CONTROL_TAGS = new Set(['BUTTON', 'A', 'INPUT', 'LABEL', 'SUMMARY', 'SELECT']);
const CONTROL_ROLES = new Set([
  'button',
  'switch',
  'checkbox',
  'menuitem',
  'menuitemcheckbox',
  'togglebutton',
]);

function capturePageInput(w: Realm): PageInput | null {
  const doc = w.document;
  const visibility = getterOf<Document, DocumentVisibilityState>(w.Document?.prototype, 'visibilityState');
  const composedPath = w.Event?.prototype.composedPath;
  const tagName = getterOf<Element, string>(w.Element?.prototype, 'tagName');
  const getAttribute = w.Element?.prototype.getAttribute;
  const K = w.KeyboardEvent?.prototype;
  const code = getterOf<KeyboardEvent, string>(K, 'code');
  const keyName = getterOf<KeyboardEvent, string>(K, 'key');
  const flag = (name: string) => getterOf<KeyboardEvent, boolean>(K, name);
  const [ctrl, alt, shift, meta] = ['ctrlKey', 'altKey', 'shiftKey', 'metaKey'].map(flag);
  if (!doc || !visibility || !composedPath || !tagName || !getAttribute) return null;
  if (!code || !keyName || !ctrl || !alt || !shift || !meta) return null;
  const ElementCtor = w.Element;
  return {
    document: doc,
    window: w,
    visible: () => visibility.call(doc) === 'visible',
    path(e) {
      try {
        return (composedPath.call(e) as object[]).filter((n) => n instanceof ElementCtor);
      } catch {
        return [];
      }
    },
    interactive(node) {
      try {
        const el = node as Element;
        if (CONTROL_TAGS.has(tagName.call(el))) return true;
        return CONTROL_ROLES.has(String(getAttribute.call(el, 'role') ?? ''));
      } catch {
        return false;
      }
    },
    key(e) {
      try {
        const k = e as KeyboardEvent;
        return {
          code: code.call(k),
          key: keyName.call(k),
          ctrl: ctrl.call(k),
          alt: alt.call(k),
          shift: shift.call(k),
          meta: meta.call(k),
        };
      } catch {
        return null;
      }
    },
  };
}

const getterOf = <T, V>(proto: object | undefined, key: string): Getter<T, V> | null =>
  (proto && (Object.getOwnPropertyDescriptor(proto, key)?.get as Getter<T, V> | undefined)) || null;

/** The realm's built-ins, or null when it lacks what the interposition needs (no capture there). */
export function captureOriginals(w: Realm): Originals | null {
  const TrackProto = w.MediaStreamTrack?.prototype;
  const StreamProto = w.MediaStream?.prototype;
  const MediaDevicesProto = w.MediaDevices?.prototype;
  if (!TrackProto || !StreamProto || !MediaDevicesProto?.getUserMedia) return null;
  const readyState = getterOf<Track, MediaStreamTrackState>(TrackProto, 'readyState');
  const enabled = Object.getOwnPropertyDescriptor(TrackProto, 'enabled');
  const muted = getterOf<Track, boolean>(TrackProto, 'muted');
  const label = getterOf<Track, string>(TrackProto, 'label');
  const kind = getterOf<Track, string>(TrackProto, 'kind');
  if (!readyState || !enabled?.get || !enabled.set || !muted || !label || !kind) return null;

  const loose = w as unknown as {
    MediaStreamTrackGenerator?: Generator;
    MediaStreamTrackProcessor?: Processor;
  };
  const NodeProto = w.AudioNode?.prototype;
  const permissions = w.navigator.permissions as Permissions | undefined;
  const query = w.Permissions?.prototype.query;
  const permissionState = getterOf<PermissionStatus, PermissionState>(w.PermissionStatus?.prototype, 'state');
  return {
    TrackProto,
    StreamProto,
    MediaDevicesProto,
    mediaDevices: w.navigator.mediaDevices,
    construct: Reflect.construct as Originals['construct'],

    getUserMedia: MediaDevicesProto.getUserMedia,
    enumerateDevices: MediaDevicesProto.enumerateDevices,

    stop: TrackProto.stop,
    clone: TrackProto.clone,
    getSettings: TrackProto.getSettings,
    getConstraints: TrackProto.getConstraints,
    getCapabilities: TrackProto.getCapabilities,
    applyConstraints: TrackProto.applyConstraints,
    readyState,
    getEnabled: enabled.get,
    setEnabled: enabled.set,
    muted,
    label,
    kind,
    isEnded: (t) => readyState.call(t) === 'ended',
    trackStats: getterOf(TrackProto, 'stats'),
    totalFramesDuration: getterOf(
      (w as unknown as { MediaStreamTrackAudioStats?: { prototype: object } }).MediaStreamTrackAudioStats
        ?.prototype,
      'totalFramesDuration',
    ),

    addEventListener: w.EventTarget.prototype.addEventListener,
    dispatchEvent: w.EventTarget.prototype.dispatchEvent,
    Event: w.Event,

    MediaStream: w.MediaStream,
    getTracks: StreamProto.getTracks,
    getAudioTracks: StreamProto.getAudioTracks,
    addTrack: StreamProto.addTrack,
    removeTrack: StreamProto.removeTrack,

    setTimeout: w.setTimeout.bind(w) as Originals['setTimeout'],
    clearTimeout: w.clearTimeout.bind(w),
    now: w.performance.now.bind(w.performance),
    dateNow: Date.now,

    senderTrack: getterOf(w.RTCRtpSender?.prototype, 'track'),
    replaceTrack: w.RTCRtpSender?.prototype.replaceTrack ?? null,

    recorderStream: getterOf(w.MediaRecorder?.prototype, 'stream'),
    TrackGenerator: loose.MediaStreamTrackGenerator ?? null,
    TrackProcessor: loose.MediaStreamTrackProcessor ?? null,
    generatorWritable: getterOf(loose.MediaStreamTrackGenerator?.prototype, 'writable'),
    processorReadable: getterOf(loose.MediaStreamTrackProcessor?.prototype, 'readable'),
    ReadableStream: w.ReadableStream ?? null,
    WritableStream: w.WritableStream ?? null,
    pipeTo: w.ReadableStream?.prototype.pipeTo ?? null,
    cancel: w.ReadableStream?.prototype.cancel ?? null,
    AbortController: w.AbortController ?? null,

    createMediaStreamSource: w.AudioContext?.prototype.createMediaStreamSource ?? null,
    sourceNodeStream: getterOf(w.MediaStreamAudioSourceNode?.prototype, 'mediaStream'),
    connect: (NodeProto?.connect as Originals['connect'] | undefined) ?? null,
    disconnect: (NodeProto?.disconnect as Originals['disconnect'] | undefined) ?? null,

    getTransceivers: w.RTCPeerConnection?.prototype.getTransceivers ?? null,
    transceiverSender: getterOf(w.RTCRtpTransceiver?.prototype, 'sender'),
    transceiverDirection: getterOf(w.RTCRtpTransceiver?.prototype, 'direction'),
    getParameters: w.RTCRtpSender?.prototype.getParameters ?? null,
    setParameters: w.RTCRtpSender?.prototype.setParameters ?? null,
    signalingState: getterOf(w.RTCPeerConnection?.prototype, 'signalingState'),
    destinationStream: getterOf(w.MediaStreamAudioDestinationNode?.prototype, 'stream'),
    AudioParam: w.AudioParam ?? null,
    AnalyserNode: w.AnalyserNode ?? null,
    ScriptProcessorNode: w.ScriptProcessorNode ?? null,
    AudioWorkletNode: w.AudioWorkletNode ?? null,
    AudioDestinationNode: w.AudioDestinationNode ?? null,
    MediaStreamAudioDestinationNode: w.MediaStreamAudioDestinationNode ?? null,
    AudioContext: w.AudioContext ?? null,
    ConstantSourceNode: w.ConstantSourceNode ?? null,
    startSource: w.AudioScheduledSourceNode?.prototype.start ?? null,
    closeContext: w.AudioContext?.prototype.close ?? null,
    resumeContext: w.AudioContext?.prototype.resume ?? null,

    async micPermission() {
      if (!permissions || !query) return null;
      try {
        return await query.call(permissions, { name: 'microphone' as PermissionName });
      } catch {
        return null;
      }
    },
    permissionState,
    getReceivers: w.RTCPeerConnection?.prototype.getReceivers ?? null,
    receiverTrack: getterOf(w.RTCRtpReceiver?.prototype, 'track'),
    syncSources: w.RTCRtpReceiver?.prototype.getSynchronizationSources ?? null,
    connectionState: getterOf(w.RTCPeerConnection?.prototype, 'connectionState'),
    getStats: w.RTCPeerConnection?.prototype.getStats ?? null,
    page: capturePageInput(w),
  };
}

const REPLACED = new WeakMap<object, object>();
const apply = Reflect.apply;
let toStringPatched = false;

function mimic<F extends object>(fn: F, original: object): F {
  const define = Object.defineProperty;
  const name = Object.getOwnPropertyDescriptor(original, 'name');
  const length = Object.getOwnPropertyDescriptor(original, 'length');
  if (name) define(fn, 'name', name);
  if (length) define(fn, 'length', length);
  REPLACED.set(fn, original);
  return fn;
}

/** Make Function.prototype.toString report replaced functions as their originals (once per realm). */
export function maskToString(fnProto: typeof Function.prototype): void {
  if (toStringPatched && fnProto === Function.prototype) return;
  const original = fnProto.toString;
  const replacement = {
    toString(this: unknown): string {
      const target = (typeof this === 'function' && REPLACED.get(this)) || this;
      return original.call(target);
    },
  }.toString;
  mimic(replacement, original);
  Object.defineProperty(fnProto, 'toString', {
    value: replacement,
    writable: true,
    configurable: true,
    enumerable: false,
  });
  if (fnProto === Function.prototype) toStringPatched = true;
}

/** Replace `proto[key]` (a method) with `make(original)`. Returns the original, or null if absent. */
export function replaceMethod<T extends object, K extends keyof T & string>(
  proto: T | undefined,
  key: K,
  make: (original: T[K]) => T[K],
): T[K] | null {
  if (!proto) return null;
  const d = Object.getOwnPropertyDescriptor(proto, key);
  if (!d || typeof d.value !== 'function') return null;
  const original = d.value as T[K];
  Object.defineProperty(proto, key, { ...d, value: mimic(make(original) as object, d.value) });
  return original;
}

/** Replace `proto[key]` (a method) with one that calls the original with the same receiver and
 * arguments, then `after(self, args, result)`, and returns the original's result (what it throws, the
 * page gets, and `after` does not run). Returns the original, or null if absent. */
export function followMethod<T extends object, K extends keyof T & string>(
  proto: T | undefined,
  key: K,
  after: (self: T, args: unknown[], result: unknown) => void,
): T[K] | null {
  return replaceMethod(proto, key, (original) => {
    const { method } = {
      // Method shorthand, like every replacement: not constructible and without a `prototype`.
      method(this: T, ...args: unknown[]): unknown {
        const out = apply(original as (...a: unknown[]) => unknown, this, args);
        after(this, args, out);
        return out;
      },
    };
    return method as T[K];
  });
}

export interface Accessor<V> {
  get: (self: unknown) => V;
  set?: (self: unknown, value: V) => void;
}

/** Replace an accessor property: `make` gets the original getter/setter (as plain functions of `self`)
 * and returns the new getter (and setter, when the original has one). */
export function replaceAccessor<V>(
  proto: object | undefined,
  key: string,
  make: (original: Accessor<V>) => { get(this: unknown): V; set?(this: unknown, v: V): void },
): Accessor<V> | null {
  if (!proto) return null;
  const d = Object.getOwnPropertyDescriptor(proto, key);
  if (!d?.get) return null;
  const get = d.get;
  const set = d.set;
  const original: Accessor<V> = {
    get: (self) => get.call(self) as V,
    set: set ? (self, v) => set.call(self, v) : undefined,
  };
  const next = make(original);
  const nd: PropertyDescriptor = { ...d, get: mimic(next.get, get) };
  if (set && next.set) nd.set = mimic(next.set, set);
  Object.defineProperty(proto, key, nd);
  return original;
}

/** Replace only the setter of an accessor property (the getter stays the browser's own function):
 * `make` gets the original setter as a plain function of `self`. Returns it, or null if absent. */
export function replaceSetter<V>(
  proto: object | undefined,
  key: string,
  make: (original: (self: unknown, value: V) => void) => (this: unknown, v: V) => void,
): ((self: unknown, value: V) => void) | null {
  if (!proto) return null;
  const d = Object.getOwnPropertyDescriptor(proto, key);
  const set = d?.set;
  if (!d || !set) return null;
  const original = (self: unknown, v: V) => {
    apply(set, self, [v]);
  };
  Object.defineProperty(proto, key, { ...d, set: mimic(make(original), set) });
  return original;
}

/** A constructor whose instances are built by `construct` (Reflect.construct keeps `new.target`, so
 * subclasses and instanceof work); the prototype's `constructor` points at the replacement. */
export function replaceConstructor<C extends abstract new (...args: never[]) => unknown>(
  holder: object,
  key: string,
  construct: (original: C, args: unknown[], newTarget: object) => object,
): C | null {
  const d = Object.getOwnPropertyDescriptor(holder, key);
  const original = d?.value as C | undefined;
  if (!d || typeof original !== 'function') return null;
  const proxy: C = new Proxy(original, {
    construct: (target, args, newTarget): object =>
      construct(target, args, newTarget === proxy ? (target as object) : newTarget),
  });
  // toString of a Proxy would read `function () { [native code] }`, without the name.
  REPLACED.set(proxy as object, original as object);
  Object.defineProperty(holder, key, { ...d, value: proxy });
  const proto = (original as unknown as { prototype?: object }).prototype;
  if (proto) {
    const cd = Object.getOwnPropertyDescriptor(proto, 'constructor');
    if (cd) Object.defineProperty(proto, 'constructor', { ...cd, value: proxy });
  }
  return original;
}
