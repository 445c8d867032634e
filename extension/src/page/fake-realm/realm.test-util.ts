// A fake page realm for the page world's unit tests (Node has no MediaStreamTrack): the built-ins the
// interposition captures and patches, each a small class that behaves as Chromium's does where micoff
// relies on it, with `_`-prefixed handles through which a test plays the browser (a device goes away,
// a frame arrives, getUserMedia refuses). Fresh classes per realm: each test's page world patches its
// own. The fakes by surface are in fake-realm/ (media, rtc, webaudio, elements, insertable); this file
// puts them on a window, and `pageWorld` adds the captured originals and a registry whose group
// machine is the test.
import { FakeTimers } from '../../background/fakes.test-util.ts';
import type { GroupReport } from '../../shared/messages/page-content.ts';
import { createTrackRegistry, type Group, type TrackRegistry } from '../chromium/track-registry.ts';
import type { Bridge } from '../common/bridge.ts';
import { captureOriginals, type Originals, type Realm, type Track } from '../common/originals.ts';
import { fakeElements } from './elements.test-util.ts';
import { fakeInsertable } from './insertable.test-util.ts';
import { type Device, fakeMedia, MIC, type StreamInit } from './media.test-util.ts';
import { fakeRtc } from './rtc.test-util.ts';
import { fakeWebAudio } from './webaudio.test-util.ts';

export { DEFAULT, type Device, HEADSET, MIC, type OpenStep } from './media.test-util.ts';

/** `stats`: the realm has MediaStreamTrackAudioStats (a track's frame count, FakeTrack._framesMs). */
export function fakeRealm(opts: { without?: string[]; stats?: boolean } = {}) {
  const timers = new FakeTimers();

  const { FakeTrack, FakeStream, FakeMediaDevices, FakeNavigator, FakeAudioStats, devices } = fakeMedia();
  const { FakeSender, FakeTransceiver, FakePeerConnection } = fakeRtc();
  const audio = fakeWebAudio({ FakeTrack, FakeStream });
  const { FakeAudioContext, FakeAudioNode, FakeSourceNode, FakeAnalyser, FakeScriptProcessor } = audio;
  const { FakeWorkletNode, FakeAudioDestination, FakeStreamDestination, FakeAudioParam } = audio;
  const { FakeScheduledSource, FakeConstantSource } = audio;
  const { FakeMediaElement, FakeRecorder, FakeIFrame } = fakeElements();
  const streams = fakeInsertable({ FakeTrack });
  const { FakeReadable, FakeGenerator, FakeProcessor, transform, FakeWorker, FakeMessagePort } = streams;

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
    AudioScheduledSourceNode: FakeScheduledSource,
    ConstantSourceNode: FakeConstantSource,
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
  if (opts.stats) globals.MediaStreamTrackAudioStats = FakeAudioStats;
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
export function fakeBridge(delay_ms = 3000, keep_sending: boolean | null = true) {
  const reports: GroupReport[][] = [];
  const ticks: (number | null)[] = [];
  const ticksOnce: number[] = [];
  const tickListeners: (() => void)[] = [];
  const bridge: Bridge = {
    config: () => ({ delay_ms, release: true, reason: null, keep_sending }),
    onConfig: () => {},
    report: (_realm, groups) => reports.push(groups),
    askPolicy: () => Promise.resolve({ allow: true, reason: null }),
    ticks: (_realm, everyMs) => ticks.push(everyMs),
    tickOnce: (inMs) => ticksOnce.push(inMs),
    onTick: (l) => tickListeners.push(l),
  };
  return {
    bridge,
    reports,
    last: () => reports.at(-1) ?? [],
    /** The tick periods the page world asked for, in order (null: none), and its single ticks;
     * `tick()` hands it one. */
    ticks,
    ticksOnce,
    tick: () => {
      for (const l of tickListeners) l();
    },
  };
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
