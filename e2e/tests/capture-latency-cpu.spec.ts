// Capture latency CPU bar: unmuted audio-path CPU at capture latencies 10 (the browser's default), 20, 40 and
// 60 ms, configurations alternated round by round in one run, on a rig of its own (no tone, no reader:
// nothing else records from the source, so the server grants the browser what it asks for).
// Every configuration is applied by micoff's own mechanism (e2e/rig/capture-latency.ts): `micoff-host
// latency set --capture-ms N` (`latency reset` for 10 ms) with private folders, then
//   - PulseAudio: Chromium started with the environment of micoff's desktop entry copy
//     (PULSE_LATENCY_MSEC=N: libpulse applies it to every stream of the process);
//   - pipewire-pulse: the pulse.rules drop-in, read by the rig's pipewire-pulse after its restart (every
//     configuration restarts the server, so all start alike); only the capture client is matched.
// The rig's mic is a remap of a null sink's monitor, and the meeting page plays nothing, so no playback
// stream couples the source's latency to a sink.
//   - both servers: the configuration took effect, `latency status` shows Chromium's record stream
//     granted >= 35 ms at 40 ms and < 20 ms at the default;
//   - PulseAudio: audio path at 40 ms <= 0.80 x the 10 ms figure (ratio of medians);
//   - pipewire-pulse: figures and wakeups per thread reported, no bar, so `npm test` skips it and runs
//     only the latencies the bar compares (10 and 40 ms); the full sweep on both servers is a benchmark:
//     `npm run bench:capture-latency` (MICOFF_CPU_SWEEP=1).
// CPU = micoff-host `sample --browser-pid --audio-server`; the audio path is the audio server, the
// audio service and the audio threads of the other processes (shared/cpu-view.ts), on-CPU time from
// schedstat. The browser + server total is reported beside it.
// Raw samples: e2e/artifacts/capture-latency-cpu-<server>.json.
import { audioPathCpuPct } from '../../extension/src/shared/cpu-view.ts';
import { startAudioRig } from '../rig/audio-rig.ts';
import { applyCaptureLatency, latencyXdg, waitChromiumGrantsUs } from '../rig/capture-latency.ts';
import { launchChromium } from '../rig/chromium.ts';
import { expect, test } from '../rig/fixtures.ts';
import { sampleCpu } from '../rig/host.ts';
import { MeetingPage } from '../rig/meeting-page.ts';
import { type AudioThreads, audioThreads } from './audio-threads.ts';
import { median, saveArtifact, whenStreams } from './release-util.ts';

const ROUNDS = Number(process.env.MICOFF_CPU_ROUNDS ?? 3);
const WINDOW_S = Number(process.env.MICOFF_CPU_WINDOW_S ?? 6);
const ALL_LATENCIES = [10, 20, 40, 60] as const;
type Ms = (typeof ALL_LATENCIES)[number];
/** The full sweep (and the PipeWire project) only as a benchmark: the bar needs 10 and 40 ms. */
const SWEEP = process.env.MICOFF_CPU_SWEEP === '1';
const LATENCIES: readonly Ms[] = SWEEP ? ALL_LATENCIES : [10, 40];
/** MICOFF_CPU_PLAYBACK=1 (a benchmark, both servers): the call is echo.html, which plays a far end on the
 * default sink, carried into the mic's sink by the rig's loopback echo path, so the browser's playback
 * stream shares the capture's graph driver on pipewire-pulse, as a sound card's playback and capture
 * do in a real call (and on PulseAudio the mic keeps the latency it asks). npm test's bar with the far
 * end playing is capture-latency-playback.spec.ts. */
const PLAYBACK = process.env.MICOFF_CPU_PLAYBACK === '1';

interface Sample {
  round: number;
  ms: Ms;
  audio_path_pct: number;
  total_pct: number;
  /** Chromium's record stream(s) as `latency status` reports them, µs. */
  granted_us: number[];
  /** The busiest audio threads: `role:comm` -> [on-CPU %, wakeups/s]. */
  threads: AudioThreads;
}

test.skip(
  ({ audioServer }) => audioServer !== 'pulseaudio' && !SWEEP,
  'no bar on pipewire-pulse: a benchmark (npm run bench:capture-latency)',
);

test('CPU: unmuted audio path at 10 and 40 ms capture latency (sweep 10/20/40/60), alternated', async ({
  audioServer,
  pages,
}) => {
  // Per configuration: latency set, a server restart on pipewire-pulse, launch, settle, the window.
  test.setTimeout(120_000 + (ROUNDS + 1) * LATENCIES.length * (WINDOW_S + 20) * 1000);
  const rig = await startAudioRig(audioServer, {
    reader: false,
    tone: false,
    ...(PLAYBACK ? { echoPath: 'loopback' as const } : {}),
  });
  const xdg = latencyXdg(rig);
  try {
    const samples: Sample[] = [];
    // Round -1 warms up (first launch, page cache, the host's first run); discarded.
    for (let round = -1; round < ROUNDS; round++) {
      const order = round % 2 ? [...LATENCIES].reverse() : [...LATENCIES];
      for (const ms of order) {
        const { env } = await applyCaptureLatency(rig, ms === 10 ? null : ms, xdg);
        const browser = await launchChromium({ env, withExtension: false });
        try {
          const meeting = await MeetingPage.open(
            browser.context,
            pages.url(PLAYBACK ? 'echo.html' : 'meeting.html'),
          );
          await meeting.ready();
          await whenStreams(rig, 'Chromium capturing', (n) => n === 1);
          await new Promise((r) => setTimeout(r, 2000)); // settle after the call comes up
          const granted = await waitChromiumGrantsUs(rig, xdg);
          const r = await sampleCpu({
            browserPid: await browser.browserPid(),
            audioServer: true,
            windowS: WINDOW_S,
            env: rig.clientEnv,
          });
          samples.push({
            round,
            ms,
            audio_path_pct: audioPathCpuPct(r, true),
            total_pct: r.processes.reduce((a, p) => a + (p.run_time_pct ?? p.cpu_pct), 0),
            granted_us: granted,
            threads: audioThreads(r),
          });
          await meeting.hangUp();
        } finally {
          await browser.close();
        }
        await whenStreams(rig, 'no capture between configurations', (n) => n === 0, 5000);
      }
    }
    const of = (ms: Ms) => samples.filter((s) => s.round >= 0 && s.ms === ms);
    const byMs = Object.fromEntries(
      LATENCIES.map((ms) => [
        ms,
        {
          audio_path_pct: median(of(ms).map((s) => s.audio_path_pct)),
          total_pct: median(of(ms).map((s) => s.total_pct)),
          granted_us: of(ms).flatMap((s) => s.granted_us),
          threads_last_round: of(ms).at(-1)?.threads,
        },
      ]),
    ) as unknown as Record<Ms, { audio_path_pct: number; total_pct: number; granted_us: number[] }>;
    const ratio = (ms: Ms) => byMs[ms].audio_path_pct / byMs[10].audio_path_pct;
    const result = {
      server: audioServer,
      server_version: (await rig.info()).serverVersion,
      playback: PLAYBACK,
      rounds: ROUNDS,
      window_s: WINDOW_S,
      by_ms: byMs,
      audio_path_ratio_vs_10: Object.fromEntries(LATENCIES.map((ms) => [ms, ratio(ms)])),
      total_ratio_vs_10: Object.fromEntries(
        LATENCIES.map((ms) => [ms, byMs[ms].total_pct / byMs[10].total_pct]),
      ),
      samples,
    };
    saveArtifact(`capture-latency-cpu-${audioServer}${PLAYBACK ? '-playback' : ''}.json`, result);
    console.log(`capture-latency-cpu: ${JSON.stringify({ ...result, samples: undefined })}`);
    // The configurations took effect: at 40 ms the server granted Chromium's record stream >= 35 ms, at the
    // default less than 20 ms (every round's sample).
    expect(byMs[40].granted_us.length).toBeGreaterThanOrEqual(ROUNDS);
    for (const us of byMs[40].granted_us) expect(us).toBeGreaterThanOrEqual(35_000);
    expect(byMs[10].granted_us.length).toBeGreaterThanOrEqual(ROUNDS);
    for (const us of byMs[10].granted_us) expect(us).toBeLessThan(20_000);
    if (audioServer === 'pulseaudio') expect(ratio(40)).toBeLessThanOrEqual(0.8);
  } finally {
    await rig.stop();
  }
});
