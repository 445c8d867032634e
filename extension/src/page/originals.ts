// Every built-in the interposition calls after install, captured once per realm before anything is
// patched and before page scripts run. The page can replace any prototype method later; our own
// bookkeeping always goes through these (hostile territory). Optional surfaces (WebRTC, WebAudio,
// MediaRecorder, insertable streams) are null where the realm lacks them.

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
  /** Insertable streams: the stand-ins behind the page's processors (patch/insertable.ts) and behind
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

  /** What the audio graph reads (page/audibility.ts): sender state and WebAudio node kinds. */
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

  /** The page's microphone permission as `navigator.permissions.query` answers it, and its state
   * (page/permission-watch.ts); null when the realm has no Permissions API or the query fails. */
  readonly micPermission: () => Promise<PermissionStatus | null>;
  readonly permissionState: Getter<PermissionStatus, PermissionState> | null;
  /** The far end's level (page/echo-guard.ts): a connection's receivers and their sources. */
  readonly getReceivers: RTCPeerConnection['getReceivers'] | null;
  readonly receiverTrack: Getter<RTCRtpReceiver, Track> | null;
  readonly syncSources: RTCRtpReceiver['getSynchronizationSources'] | null;
  readonly connectionState: Getter<RTCPeerConnection, RTCPeerConnectionState> | null;
  /** A connection's statistics (its own outbound RTP streams, to tell the far end's audio from the
   * page's own coming back on a loopback). */
  readonly getStats: RTCPeerConnection['getStats'] | null;
  /** What the page world reads of the page itself (page/intent.ts): its visibility and the input events
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
