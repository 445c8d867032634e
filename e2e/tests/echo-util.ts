// Helpers of the echo specs (capture-latency-aec, capture-latency-guard): a rig whose default sink is
// heard by the microphone, and one call of echo.html in a fresh browser measured for its echo. A
// configuration's capture latency is applied by micoff's own mechanism (e2e/rig/capture-latency.ts).
import { type AudioRig, MIC, startAudioRig } from '../rig/audio-rig.ts';
import {
  applyCaptureLatency,
  chromiumGrantsUs,
  LATENCY_ENV,
  type LatencyXdg,
  latencyXdg,
} from '../rig/capture-latency.ts';
import { type LaunchedChromium, launchChromium } from '../rig/chromium.ts';
import { type SampledCpuReport, sampleCpu } from '../rig/host.ts';
import { MeetingPage, type MeetingStats } from '../rig/meeting-page.ts';
import type { PageServer } from '../rig/page-server.ts';
import { recordLevel } from '../rig/source-level.ts';
import { median, whenStreams } from './release-util.ts';

/** The echo at the microphone in every run of an AEC comparison, at least (dB, mean energy per sample):
 * a quiet sent echo is then a cancelled one, not one that never arrived. */
export const MIC_ECHO_MIN_DB = -30;
/** A raised capture latency's sent echo, at most this far above the default's (dB, true levels)... */
export const AEC_OVER_DEFAULT_MAX_DB = 3;
/** ...unless it is at least this far below the echo at the mic: suppressed into AEC3's own output floor,
 * which moved by 5 dB between runs of one configuration (-84..-89 dB), where "3 dB above" compares
 * noise (docs/design/capture-latency.md, "Echo cancellation stays effective" and
 * #capture-latency-echo-bars). */
export const SUPPRESSED_BELOW_MIC_DB = 45;

/** The AEC bar: as effective as the default, within AEC_OVER_DEFAULT_MAX_DB, or suppressed into the
 * floor. Levels are the median run's median second, dB. */
export function aecAsEffective(o: { echoDb: number; defaultEchoDb: number; micDb: number }): boolean {
  return (
    o.micDb - o.echoDb >= SUPPRESSED_BELOW_MIC_DB || o.echoDb - o.defaultEchoDb <= AEC_OVER_DEFAULT_MAX_DB
  );
}

/** AEC3 converges within a few seconds of far-end speech; the window starts after it. */
export const WARMUP_MS = 6000;
export const WINDOW_MS = Number(process.env.MICOFF_AEC_WINDOW_MS ?? 10_000);

export interface EchoConfig {
  name: string;
  /** Capture latency set through `micoff-host latency set` (null: `latency reset`, the default). */
  latencyMs: number | null;
  constraints: MediaStreamConstraints;
  withExtension: boolean;
}

export interface EchoFigures {
  /** Mean energy per second of what the page sends (media-source totalAudioEnergy / duration). */
  energy_rate: number;
  /** Concealed / received samples at the far end; null when the receiver reported no such statistics
   * (a spec that compares concealment must fail then, not count it as 0). */
  concealed_ratio: number | null;
  /** Seconds of audio the page's track delivered over the window (media-source totalSamplesDuration):
   * the capture really ran while the echo was measured. */
  captured_s: number;
  /** The time between the window's first and last media-source statistics, s (their own timestamps;
   * else the page's clock): what `captured_s` is short of when the capture stalled. */
  window_s: number;
  /** What the server granted Chromium's record stream(s) at the start and at the end of the window, µs
   * (`micoff-host latency status`). */
  granted_us: number[];
  settings: MediaTrackSettings | null;
  constraints: MediaTrackConstraints | null;
  /** The sent energy second by second, dB. */
  per_second_db: number[];
  /** The median second, dB: what the bars use. On a loaded machine (the test machine's load average
   * runs far above its two cores) a scheduling stall makes AEC3 leak a second or two of echo while it
   * re-estimates the delay, in every configuration alike; those seconds dominate a window's mean
   * energy (kept as `energy_rate`) but not its median. */
  echo_db: number;
  /** The echo as it reaches the microphone over the window, dB (the rig's `mic` recorded beside the
   * browser, before any of the browser's processing): what the sent echo is cancelled from. Without it
   * a quiet sent echo could be an echo that never arrived (a silent far end, a broken echo path). */
  mic_db: number;
  /** The far end as the page plays it, over the window: the mean playout delay (media-playout
   * totalPlayoutDelay / totalSamplesCount: the playout path to the device, the device's own latency
   * as the browser's audio output reports it), the audio the output had to synthesize for want of
   * data (an underrun of the playback), and the receiver's concealed share. Null fields where the
   * browser reported none. */
  far_playout: { delay_ms: number | null; synthesized_s: number | null; concealed_ratio: number | null };
  /** With `cpu`: micoff-host's sample of the browser tree and the audio server over the window. */
  cpu?: SampledCpuReport;
}

interface FarEndPlayout {
  playout: {
    totalPlayoutDelay: number | null;
    totalSamplesCount: number | null;
    synthesizedSamplesDuration: number | null;
  } | null;
  inbound: { concealedSamples: number | null; totalSamplesReceived: number | null } | null;
}

const farEndPlayout = (call: MeetingPage) =>
  call.page.evaluate(() =>
    (window as unknown as { farEndPlayout(): Promise<FarEndPlayout> }).farEndPlayout(),
  );

/** The far end's playout between two readings (`EchoFigures.far_playout`). */
function farDelta(a: FarEndPlayout, b: FarEndPlayout): EchoFigures['far_playout'] {
  const d = (f: (x: FarEndPlayout) => number | null | undefined) => {
    const [x, y] = [f(a), f(b)];
    return typeof x === 'number' && typeof y === 'number' ? y - x : null;
  };
  const delay = d((x) => x.playout?.totalPlayoutDelay);
  const count = d((x) => x.playout?.totalSamplesCount);
  const concealed = d((x) => x.inbound?.concealedSamples);
  const received = d((x) => x.inbound?.totalSamplesReceived);
  return {
    delay_ms: delay !== null && count ? (1000 * delay) / count : null,
    synthesized_s: d((x) => x.playout?.synthesizedSamplesDuration),
    concealed_ratio: concealed !== null && received ? concealed / received : null,
  };
}

export const dB = (x: number) => 10 * Math.log10(Math.max(x, 1e-12));

function delta(a: MeetingStats, b: MeetingStats): EchoFigures {
  const e = (b.source?.totalAudioEnergy ?? 0) - (a.source?.totalAudioEnergy ?? 0);
  const d = (b.source?.totalSamplesDuration ?? 0) - (a.source?.totalSamplesDuration ?? 0);
  const concealed = (b.inbound?.concealedSamples ?? 0) - (a.inbound?.concealedSamples ?? 0);
  const total = (b.inbound?.totalSamplesReceived ?? 0) - (a.inbound?.totalSamplesReceived ?? 0);
  const hasConcealment =
    typeof b.inbound?.concealedSamples === 'number' && typeof b.inbound?.totalSamplesReceived === 'number';
  return {
    energy_rate: d > 0 ? e / d : 0,
    concealed_ratio: hasConcealment && total > 0 ? concealed / total : null,
    captured_s: d,
    window_s:
      typeof a.source?.timestamp === 'number' && typeof b.source?.timestamp === 'number'
        ? (b.source.timestamp - a.source.timestamp) / 1000
        : (b.at - a.at) / 1000,
    granted_us: [],
    settings: b.track?.settings ?? null,
    constraints: null,
    per_second_db: [],
    echo_db: dB(d > 0 ? e / d : 0),
    mic_db: Number.NaN,
    far_playout: { delay_ms: null, synthesized_s: null, concealed_ratio: null },
  };
}

/** What the browser plays comes back through the mic as echo (audio-rig.ts `echoPath`; kept across the
 * server restarts that set a capture latency on pipewire-pulse). The capture-latency specs take the
 * loopback path: through the direct one the mic runs at the browser's playback latency, and a 40 ms
 * capture was granted 10 ms on PulseAudio. */
export function startEchoRig(
  kind: 'pulseaudio' | 'pipewire',
  echoPath: 'direct' | 'loopback' = 'direct',
): Promise<AudioRig> {
  return startAudioRig(kind, { reader: false, tone: false, echoPath });
}

/** A call of echo.html in a fresh browser of configuration `c`, capturing (one record stream at the
 * server). With `xdg`, `c.latencyMs` is set first through micoff-host (`latency set`/`reset` and, on
 * pipewire-pulse, the server restart); without, the browser gets PULSE_LATENCY_MSEC=latencyMs in its
 * environment directly. `close()` hangs up, closes the browser and waits for the capture to leave the
 * server. */
export async function openEchoCall(
  rig: AudioRig,
  pages: PageServer,
  c: EchoConfig,
  xdg?: LatencyXdg,
): Promise<{ browser: LaunchedChromium; call: MeetingPage; close(): Promise<void> }> {
  let env: NodeJS.ProcessEnv;
  if (xdg) env = (await applyCaptureLatency(rig, c.latencyMs, xdg)).env;
  else {
    env = { ...rig.clientEnv };
    if (c.latencyMs === null) delete env[LATENCY_ENV];
    else env[LATENCY_ENV] = String(c.latencyMs);
  }
  const browser = await launchChromium({ env, withExtension: c.withExtension });
  const close = async () => {
    await browser.close();
    await whenStreams(rig, 'no capture between configurations', (n) => n === 0, 5000);
  };
  try {
    const q = new URLSearchParams({ constraints: JSON.stringify(c.constraints) });
    const call = await MeetingPage.open(browser.context, pages.url(`echo.html?${q}`));
    await call.ready();
    await whenStreams(rig, 'Chromium capturing', (n) => n === 1);
    return { browser, call, close };
  } catch (e) {
    // The setup's own error is the one to report; the capture may well still be up then.
    await close().catch(() => {});
    throw e;
  }
}

/** The energy per second the page sent between two stats samples, dB. The media-source counters
 * restart when the sender's track changes (micoff's reacquire swaps a new track in): then the new
 * counters alone are the interval's. */
export function sentDb(a: MeetingStats, b: MeetingStats): number {
  const restarted = (b.source?.totalSamplesDuration ?? 0) < (a.source?.totalSamplesDuration ?? 0);
  return dB(delta(restarted ? { ...a, source: undefined } : a, b).energy_rate);
}

/** The sent echo every `stepMs` for `totalMs` from now: [ms since the start, dB] per step. The first
 * sample is taken before `then` runs (e.g. the unmute), so the curve starts at the action. */
export async function sentCurve(
  call: MeetingPage,
  stepMs: number,
  totalMs: number,
  then?: () => Promise<unknown>,
): Promise<[number, number][]> {
  const out: [number, number][] = [];
  let prev = await call.stats();
  const t0 = Date.now();
  await then?.();
  while (Date.now() - t0 < totalMs - stepMs / 2) {
    await new Promise((r) => setTimeout(r, Math.max(0, t0 + (out.length + 1) * stepMs - Date.now())));
    const s = await call.stats();
    out.push([Date.now() - t0, sentDb(prev, s)]);
    prev = s;
  }
  return out;
}

/** The sent echo second by second for `seconds` seconds from now, dB (unrounded). */
export async function sentPerSecond(
  call: MeetingPage,
  seconds: number,
  then?: () => Promise<unknown>,
): Promise<number[]> {
  return (await sentCurve(call, 1000, seconds * 1000, then)).map(([, db]) => db);
}

/** One call in a fresh browser: warm up, then the echo figures over the window. */
export async function measureEcho(
  rig: AudioRig,
  pages: PageServer,
  c: EchoConfig,
  opts: {
    windowMs?: number;
    /** Runs while the call is up (before the measurement), with the browser and the call. */
    inspect?: (browser: LaunchedChromium, call: MeetingPage) => Promise<void>;
    /** Also sample the CPU of the browser and the audio server over the window (`EchoFigures.cpu`). */
    cpu?: boolean;
    /** Runs after the window, the call still up: for probes that must stay out of the measurement. */
    afterWindow?: (browser: LaunchedChromium, call: MeetingPage) => Promise<void>;
  } = {},
): Promise<EchoFigures> {
  const windowMs = opts.windowMs ?? WINDOW_MS;
  const xdg = latencyXdg(rig);
  const { browser, call, close } = await openEchoCall(rig, pages, c, xdg);
  // Started ahead of the window (a new stream on the source is no event inside it), reset at its start.
  const heard = recordLevel(rig, MIC);
  try {
    await opts.inspect?.(browser, call);
    await new Promise((r) => setTimeout(r, WARMUP_MS));
    const grantedBefore = await chromiumGrantsUs(rig, xdg);
    heard.reset();
    // Per second as well as over the window: AEC leaks come in bursts.
    const farBefore = await farEndPlayout(call);
    const cpu = opts.cpu
      ? sampleCpu({
          browserPid: await browser.browserPid(),
          audioServer: true,
          windowS: windowMs / 1000,
          env: rig.clientEnv,
        })
      : undefined;
    cpu?.catch(() => {}); // awaited below; a failure before that must not go unhandled
    const a = await call.stats();
    const perSecond: number[] = [];
    let prev = a;
    for (let t = 0; t < windowMs; t += 1000) {
      await new Promise((r) => setTimeout(r, Math.min(1000, windowMs - t)));
      const s = await call.stats();
      perSecond.push(Math.round(dB(delta(prev, s).energy_rate)));
      prev = s;
    }
    const far_playout = farDelta(farBefore, await farEndPlayout(call));
    const mic_db = (await heard.stop()).db;
    const granted_us = [...grantedBefore, ...(await chromiumGrantsUs(rig, xdg))];
    const figures = {
      ...delta(a, prev),
      per_second_db: perSecond,
      echo_db: median(perSecond),
      mic_db,
      granted_us,
      far_playout,
      ...(cpu ? { cpu: await cpu } : {}),
    };
    // What the page's track says it was asked (getConstraints), as echo.js reads it.
    figures.constraints = await call.page.evaluate(
      () =>
        (window as unknown as { farEnd(): { constraints: MediaTrackConstraints | null } }).farEnd()
          .constraints,
    );
    await opts.afterWindow?.(browser, call);
    await call.hangUp();
    return figures;
  } finally {
    await heard.stop().catch(() => {});
    await close();
  }
}
