// Capture latency echo bars on a rig of its own where the far end is heard by the microphone: what the
// browser plays into the default sink comes back into the mic through the rig's echo path (a loopback
// with a latency of its own, so the mic's capture latency is free of the browser's playback latency, as
// a sound card's is; audio-rig.ts `echoPath`). echo.html plays a far end's speech-like signal
// (received over WebRTC) on that sink and sends the microphone through a loopback call; the energy the
// page SENDS (media-source, after the browser's audio processing) is the far end's echo and what is
// left of it. No tone, no reader: the echo is the only thing the mic hears.
// Configurations, launched one after the other and alternated over rounds, each capture latency set by
// micoff's own mechanism (`micoff-host latency set`/`reset`, e2e/rig/capture-latency.ts):
//   aec10   {audio: true}, the browser's default capture (10 ms fragments)
//   aec40   {audio: true}, `latency set --capture-ms 40`: on PulseAudio PULSE_LATENCY_MSEC=40 in the
//           browser's environment (playback latency grows too), on pipewire-pulse the pulse.rules drop-in
//           for Chromium's capture client after the server restart (playback unchanged)
//   noaec   {audio: {echoCancellation: false}} at the default: the echo as it is
// Checks that the comparison means something: every aec40 run was granted >= 35 ms at the server (at the
// start and the end of its window) and every aec10 run < 20 ms; every run's capture delivered >= 90 % of
// its window; the receiver reported concealment statistics in every aec run (missing ones fail); the
// echo without echo cancellation is loud (>= -30 dB), so "10 dB below it" is not met by silence.
// Bars: echo at 40 ms no more than 3 dB above 10 ms (one-sided: under load 10 ms has leaked echo in
// bursts where 40 ms did not; the design note has the runs), both levels taken no lower than
// SUPPRESSED_DB (below it the echo is gone: what is left is AEC3's own output floor, which moved by 5 dB
// between runs of one configuration, -84..-89 dB, on an idle machine); at least 10 dB below noaec;
// concealed samples / total samples at the receiver no worse than at 10 ms + 1 percentage point.
// The latency-constraint trap ({audio: {latency: 0.04}}) has its own spec (capture-latency-guard).
// Raw figures: e2e/artifacts/capture-latency-aec-<server>.json.
import { expect, test } from '../rig/fixtures.ts';
import {
  dB,
  type EchoConfig,
  type EchoFigures,
  measureEcho,
  startEchoRig,
  WARMUP_MS,
  WINDOW_MS,
} from './echo-util.ts';
import { median, saveArtifact } from './release-util.ts';

const ROUNDS = Number(process.env.MICOFF_AEC_ROUNDS ?? 3);
/** At or below this the echo counts as fully suppressed (>= 45 dB below the echo as it arrives). */
const SUPPRESSED_DB = -60;

const CONFIGS: EchoConfig[] = [
  { name: 'aec10', latencyMs: null, constraints: { audio: true }, withExtension: true },
  { name: 'aec40', latencyMs: 40, constraints: { audio: true }, withExtension: true },
  {
    name: 'noaec',
    latencyMs: null,
    constraints: { audio: { echoCancellation: false } },
    withExtension: true,
  },
];

test('echo: AEC at 40 ms as effective as at 10 ms, and far better than none', async ({
  audioServer,
  pages,
}) => {
  test.setTimeout(60_000 + ROUNDS * CONFIGS.length * (WARMUP_MS + WINDOW_MS + 20_000));
  const rig = await startEchoRig(audioServer, 'loopback');
  try {
    const runs: (EchoFigures & { round: number; config: string })[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 ? [...CONFIGS].reverse() : CONFIGS;
      for (const c of order) runs.push({ round, config: c.name, ...(await measureEcho(rig, pages, c)) });
    }
    const of = (name: string) => runs.filter((r) => r.config === name);
    // Per configuration: the median run of the runs' median seconds (echo-util.ts says why medians).
    const echo = (name: string) => median(of(name).map((r) => r.echo_db));
    const meanDb = (name: string) => median(of(name).map((r) => dB(r.energy_rate)));
    // Only runs that reported concealment (the checks below fail on a missing one).
    const concealed = (name: string) =>
      median(of(name).flatMap((r) => (r.concealed_ratio === null ? [] : [r.concealed_ratio])));
    const result = {
      server: audioServer,
      rounds: ROUNDS,
      window_ms: WINDOW_MS,
      echo_db: Object.fromEntries(CONFIGS.map((c) => [c.name, echo(c.name)])),
      window_mean_db: Object.fromEntries(CONFIGS.map((c) => [c.name, meanDb(c.name)])),
      suppressed_db: SUPPRESSED_DB,
      // The bar's comparison: both levels taken no lower than SUPPRESSED_DB.
      aec40_minus_aec10_db: Math.max(echo('aec40'), SUPPRESSED_DB) - Math.max(echo('aec10'), SUPPRESSED_DB),
      aec40_minus_aec10_raw_db: echo('aec40') - echo('aec10'),
      noaec_minus_aec40_db: echo('noaec') - echo('aec40'),
      concealed_pct: Object.fromEntries(CONFIGS.map((c) => [c.name, 100 * concealed(c.name)])),
      runs,
    };
    saveArtifact(`capture-latency-aec-${audioServer}.json`, result);
    console.log(`capture-latency-aec: ${JSON.stringify({ ...result, runs: undefined })}`);
    const what = (r: (typeof runs)[number]) => `${r.config} round ${r.round}: ${JSON.stringify(r)}`;
    for (const r of runs) {
      // The capture ran through the window (silence from a stalled capture is no echo cancellation).
      expect(r.captured_s, what(r)).toBeGreaterThanOrEqual((0.9 * WINDOW_MS) / 1000);
      expect(r.granted_us.length, what(r)).toBeGreaterThanOrEqual(2);
    }
    for (const r of of('aec40')) {
      // The 40 ms configuration was in force while the echo was measured.
      for (const us of r.granted_us) expect(us, what(r)).toBeGreaterThanOrEqual(35_000);
    }
    for (const r of of('aec10')) for (const us of r.granted_us) expect(us, what(r)).toBeLessThan(20_000);
    for (const r of of('aec10').concat(of('aec40'))) {
      expect(r.settings?.echoCancellation, what(r)).toBe(true);
      expect(r.concealed_ratio, `concealment statistics missing: ${what(r)}`).not.toBeNull();
    }
    for (const r of of('noaec')) expect(r.settings?.echoCancellation).toBe(false);
    // There is an echo to cancel: without echo cancellation the page sends it loud.
    expect(echo('noaec')).toBeGreaterThanOrEqual(-30);
    expect(result.aec40_minus_aec10_db).toBeLessThanOrEqual(3);
    expect(result.noaec_minus_aec40_db).toBeGreaterThanOrEqual(10);
    expect(result.concealed_pct.aec40).toBeLessThanOrEqual((result.concealed_pct.aec10 as number) + 1);
  } finally {
    await rig.stop();
  }
});
