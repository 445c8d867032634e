// Capture latency's echo bars: on a rig where the far end is heard by the microphone, the echo the page
// sends at 40 ms against 10 ms and against no echo cancellation, plus the receiver's concealment; each
// latency applied by micoff's own mechanism (e2e/rig/capture-latency.ts).
// Configurations, checks and bars: docs/design/capture-latency.md#capture-latency-echo-bars.
// Raw figures: e2e/artifacts/capture-latency-aec-<server>.json.
import { expect, test } from '../rig/fixtures.ts';
import {
  AEC_OVER_DEFAULT_MAX_DB,
  aecAsEffective,
  dB,
  type EchoConfig,
  type EchoFigures,
  MIC_ECHO_MIN_DB,
  measureEcho,
  SUPPRESSED_BELOW_MIC_DB,
  startEchoRig,
  WARMUP_MS,
  WINDOW_MS,
} from './echo-util.ts';
import { median, saveArtifact } from './release-util.ts';

const ROUNDS = Number(process.env.MICOFF_AEC_ROUNDS ?? 3);
/** Configurations measured in the first round only: the echo as it is, without echo cancellation, a
 * control far from its check in every run on record (docs/design/capture-latency.md#capture-latency-echo-bars). */
const FIRST_ROUND_ONLY = new Set(['noaec']);

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
  const measured = (c: EchoConfig, round: number) => round === 0 || !FIRST_ROUND_ONLY.has(c.name);
  const rig = await startEchoRig(audioServer, 'loopback');
  try {
    const runs: (EchoFigures & { round: number; config: string })[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 ? [...CONFIGS].reverse() : CONFIGS;
      for (const c of order.filter((c) => measured(c, round)))
        runs.push({ round, config: c.name, ...(await measureEcho(rig, pages, c)) });
    }
    const of = (name: string) => runs.filter((r) => r.config === name);
    // Per configuration: the median run of the runs' median seconds (echo-util.ts says why medians).
    const echo = (name: string) => median(of(name).map((r) => r.echo_db));
    const meanDb = (name: string) => median(of(name).map((r) => dB(r.energy_rate)));
    // Only runs that reported concealment (the checks below fail on a missing one).
    const concealed = (name: string) =>
      median(of(name).flatMap((r) => (r.concealed_ratio === null ? [] : [r.concealed_ratio])));
    const micDb = (name: string) => median(of(name).map((r) => r.mic_db));
    const result = {
      server: audioServer,
      rounds: ROUNDS,
      window_ms: WINDOW_MS,
      echo_db: Object.fromEntries(CONFIGS.map((c) => [c.name, echo(c.name)])),
      window_mean_db: Object.fromEntries(CONFIGS.map((c) => [c.name, meanDb(c.name)])),
      mic_db: Object.fromEntries(CONFIGS.map((c) => [c.name, micDb(c.name)])),
      // How far below the echo at the mic each configuration sends it (median run's), dB.
      suppression_db: Object.fromEntries(CONFIGS.map((c) => [c.name, micDb(c.name) - echo(c.name)])),
      aec40_minus_aec10_db: echo('aec40') - echo('aec10'),
      // The 40 ms echo's own suppression is past the floor's threshold (then the bar above is not asked).
      aec40_suppressed: micDb('aec40') - echo('aec40') >= SUPPRESSED_BELOW_MIC_DB,
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
      // The echo reached the microphone, loud, in every run: a quiet sent echo is a cancelled one.
      expect(r.mic_db, what(r)).toBeGreaterThanOrEqual(MIC_ECHO_MIN_DB);
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
    // As effective at 40 ms as at 10 ms: within 3 dB, or suppressed into the canceller's own floor.
    expect(
      aecAsEffective({ echoDb: echo('aec40'), defaultEchoDb: echo('aec10'), micDb: micDb('aec40') }),
      `aec40 ${echo('aec40')} dB vs aec10 ${echo('aec10')} dB sent, echo at the mic ${micDb('aec40')} dB: ` +
        `more than ${AEC_OVER_DEFAULT_MAX_DB} dB above 10 ms and less than ${SUPPRESSED_BELOW_MIC_DB} dB below the mic`,
    ).toBe(true);
    expect(result.noaec_minus_aec40_db).toBeGreaterThanOrEqual(10);
    expect(result.concealed_pct.aec40).toBeLessThanOrEqual((result.concealed_pct.aec10 as number) + 1);
  } finally {
    await rig.stop();
  }
});
