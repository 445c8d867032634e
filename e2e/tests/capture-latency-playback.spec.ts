// Capture latency in a call whose far end plays, both servers: CPU of the audio path at 40 ms against
// the default, the echo sent, capture continuity and the far end's playout, all over one window.
// A benchmark outside npm test (`npm run bench:capture-latency-playback`, MICOFF_BENCH_PLAYBACK=1)
// while its CPU bar is not reliable on this machine.
// Method, bars and why: docs/design/capture-latency.md#capture-latency-playback-bars.
// Raw figures: e2e/artifacts/capture-latency-playback-<server>.json.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { audioPathCpuPct } from '../../extension/src/shared/cpu-view.ts';
import type { AudioRig } from '../rig/audio-rig.ts';
import { expect, test } from '../rig/fixtures.ts';
import { run } from '../rig/proc.ts';
import { audioThreads } from './audio-threads.ts';
import {
  AEC_OVER_DEFAULT_MAX_DB,
  aecAsEffective,
  type EchoConfig,
  type EchoFigures,
  MIC_ECHO_MIN_DB,
  measureEcho,
  SUPPRESSED_BELOW_MIC_DB,
  startEchoRig,
  WARMUP_MS,
} from './echo-util.ts';
import { median, saveArtifact } from './release-util.ts';

const ROUNDS = Number(process.env.MICOFF_PLAYBACK_ROUNDS ?? 3);
const WINDOW_MS = Number(process.env.MICOFF_PLAYBACK_WINDOW_MS ?? 6000);
/** The audio path at 40 ms, at most this share of the default's (pipewire-pulse;
 * docs/design/capture-latency.md#capture-latency-playback-bars). */
const CPU_RATIO_MAX = 0.8;
/** What the capture may fall short of its window, by the statistics' own timestamps; a stall is longer
 * (docs/design/capture-latency.md, "Capture latency in a call that plays"). */
const SHORTFALL_MAX_S = 0.05;

const CONFIGS: EchoConfig[] = [
  { name: 'default', latencyMs: null, constraints: { audio: true }, withExtension: false },
  { name: '40ms', latencyMs: 40, constraints: { audio: true }, withExtension: false },
];

/** What the browser's streams ask of the server, as it shows them: on pipewire-pulse the node latency
 * pipewire-pulse gave each stream (the graph runs at the smallest of its nodes', rounded down to a power
 * of two) and the playback's buffer attributes; on PulseAudio the buffer latencies and what each sink
 * and source is configured to. */
async function streamFacts(rig: AudioRig) {
  const list = async (what: string) =>
    JSON.parse(await rig.pactl(['-f', 'json', 'list', what])) as {
      name?: string;
      buffer_latency_usec?: number;
      latency?: { actual: number; configured: number };
      properties?: Record<string, string>;
    }[];
  const pick = (p: Record<string, string> = {}) =>
    Object.fromEntries(
      Object.entries(p).filter(([k]) => /^(application\.name|node\.latency|pulse\.(attr|min)\.)/.test(k)),
    );
  const streams = async (what: string): Promise<Record<string, string | number | undefined>[]> =>
    (await list(what))
      .filter((s) => /^Chromium/.test(s.properties?.['application.name'] ?? ''))
      .map((s) => ({ buffer_latency_usec: s.buffer_latency_usec, ...pick(s.properties) }));
  return {
    playback: await streams('sink-inputs'),
    record: await streams('source-outputs'),
    ...(rig.kind === 'pulseaudio'
      ? {
          sinks: Object.fromEntries((await list('sinks')).map((s) => [s.name, s.latency?.configured])),
          sources: Object.fromEntries((await list('sources')).map((s) => [s.name, s.latency?.configured])),
        }
      : {}),
  };
}

/** The graph's quantum on pipewire-pulse, µs: pw-profiler's record of 2 s of driver cycles (its fourth
 * column, the quantum's duration), the median cycle. Null where it recorded nothing. */
async function graphQuantumUs(rig: AudioRig): Promise<number | null> {
  const runtime = join(rig.dir, 'run');
  const log = join(rig.dir, `profiler-${Date.now()}.log`);
  await run('timeout', ['2', 'pw-profiler', '-o', log], {
    env: { ...process.env, PIPEWIRE_RUNTIME_DIR: runtime, XDG_RUNTIME_DIR: runtime },
    timeoutMs: 10_000,
    cwd: rig.dir, // it writes its plot scripts into the working folder
  });
  let text = '';
  try {
    text = readFileSync(log, 'utf8');
  } catch {
    return null;
  }
  const quanta = text
    .split('\n')
    .map((l) => Number(l.split('\t')[3]))
    .filter((q) => Number.isFinite(q) && q > 0);
  return quanta.length > 0 ? median(quanta) : null;
}

type Run = Omit<EchoFigures, 'cpu' | 'settings' | 'constraints'> & {
  round: number;
  config: string;
  echo_cancellation: boolean | null;
  audio_path_pct: number;
  total_pct: number;
  threads: ReturnType<typeof audioThreads>;
  streams: Awaited<ReturnType<typeof streamFacts>>;
  graph_quantum_us?: number | null;
};

test.skip(
  process.env.MICOFF_BENCH_PLAYBACK !== '1',
  'a benchmark: MICOFF_BENCH_PLAYBACK=1 (not yet reliable, see the header)',
);

test('capture latency in a call that plays: 40 ms saves CPU with the far end playing, AEC and capture intact', async ({
  audioServer,
  pages,
}) => {
  test.setTimeout(60_000 + ROUNDS * CONFIGS.length * (WARMUP_MS + WINDOW_MS + 20_000));
  const rig = await startEchoRig(audioServer, 'loopback');
  try {
    const runs: Run[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 ? [...CONFIGS].reverse() : CONFIGS;
      for (const c of order) {
        const seen: { streams?: Run['streams']; quantum?: number | null } = {};
        const f = await measureEcho(rig, pages, c, {
          windowMs: WINDOW_MS,
          cpu: true,
          inspect: async () => {
            seen.streams = await streamFacts(rig);
          },
          // Who sets the graph's pace, once per configuration, after the window: with pw-profiler
          // attached `pipewire` woke 2x as often in exploratory calls (every configuration restarts
          // the server on pipewire-pulse, so nothing of it reaches the next call).
          afterWindow: async () => {
            if (round === 0 && rig.kind === 'pipewire') seen.quantum = await graphQuantumUs(rig);
          },
        });
        const { cpu, settings, constraints: _, ...rest } = f;
        const { streams, quantum } = seen;
        if (!cpu || !streams) throw new Error('measureEcho returned no CPU sample or stream facts');
        runs.push({
          round,
          config: c.name,
          ...rest,
          echo_cancellation: settings?.echoCancellation ?? null,
          audio_path_pct: audioPathCpuPct(cpu, true),
          total_pct: cpu.processes.reduce((a, p) => a + (p.run_time_pct ?? p.cpu_pct), 0),
          threads: audioThreads(cpu),
          streams,
          ...(quantum === undefined ? {} : { graph_quantum_us: quantum }),
        });
      }
    }
    const of = (name: string) => runs.filter((r) => r.config === name);
    const med = (name: string, f: (r: Run) => number) => median(of(name).map(f));
    const cpu = (name: string) => med(name, (r) => r.audio_path_pct);
    const echo = (name: string) => med(name, (r) => r.echo_db);
    const micDb = (name: string) => med(name, (r) => r.mic_db);
    const cpuRatio = cpu('40ms') / cpu('default');
    const result = {
      server: audioServer,
      server_version: (await rig.info()).serverVersion,
      rounds: ROUNDS,
      window_ms: WINDOW_MS,
      audio_path_pct: { default: cpu('default'), '40ms': cpu('40ms') },
      audio_path_ratio: cpuRatio,
      total_ratio: med('40ms', (r) => r.total_pct) / med('default', (r) => r.total_pct),
      echo_db: { default: echo('default'), '40ms': echo('40ms') },
      mic_db: { default: micDb('default'), '40ms': micDb('40ms') },
      echo_40_minus_default_db: echo('40ms') - echo('default'),
      playout_delay_ms: Object.fromEntries(
        CONFIGS.map((c) => [c.name, med(c.name, (r) => r.far_playout.delay_ms ?? Number.NaN)]),
      ),
      capture_shortfall_s: Object.fromEntries(
        CONFIGS.map((c) => [c.name, Math.max(...of(c.name).map((r) => r.window_s - r.captured_s))]),
      ),
      runs,
    };
    saveArtifact(`capture-latency-playback-${audioServer}.json`, result);
    console.log(`capture-latency-playback: ${JSON.stringify({ ...result, runs: undefined })}`);

    const what = (r: Run) => `${r.config} round ${r.round}: ${JSON.stringify({ ...r, threads: undefined })}`;
    for (const r of runs) {
      // The configuration was in force: the server granted what it should.
      expect(r.granted_us.length, what(r)).toBeGreaterThanOrEqual(2);
      for (const us of r.granted_us) {
        if (r.config === '40ms') expect(us, what(r)).toBeGreaterThanOrEqual(35_000);
        else expect(us, what(r)).toBeLessThan(20_000);
      }
      // The far end played, and was heard loud at the mic: there is an echo to cancel.
      expect(r.streams.playback.length, what(r)).toBeGreaterThanOrEqual(1);
      // On pipewire-pulse the rule's playback part took effect: Chromium's playback node asks 40 ms.
      if (audioServer === 'pipewire' && r.config === '40ms') {
        for (const p of r.streams.playback) expect(p['node.latency'], what(r)).toBe('1920/48000');
      }
      expect(r.mic_db, what(r)).toBeGreaterThanOrEqual(MIC_ECHO_MIN_DB);
      expect(r.echo_cancellation, what(r)).toBe(true);
      // Capture shortfall 0: the track delivered its window.
      expect(r.window_s - r.captured_s, what(r)).toBeLessThanOrEqual(SHORTFALL_MAX_S);
      // The playback did not underrun: the output was never short of the far end's audio.
      expect(r.far_playout.synthesized_s, what(r)).not.toBeNull();
      expect(r.far_playout.synthesized_s as number, what(r)).toBeLessThanOrEqual((0.01 * WINDOW_MS) / 1000);
    }
    expect(
      aecAsEffective({ echoDb: echo('40ms'), defaultEchoDb: echo('default'), micDb: micDb('40ms') }),
      `40 ms ${echo('40ms')} dB vs default ${echo('default')} dB sent, echo at the mic ${micDb('40ms')} dB: ` +
        `more than ${AEC_OVER_DEFAULT_MAX_DB} dB above the default and less than ${SUPPRESSED_BELOW_MIC_DB} dB below the mic`,
    ).toBe(true);
    if (audioServer === 'pipewire') {
      expect(cpuRatio, `audio path ${cpu('40ms')} % vs ${cpu('default')} %`).toBeLessThanOrEqual(
        CPU_RATIO_MAX,
      );
    } else {
      test.info().annotations.push({
        type: 'bar not held',
        description: `PulseAudio: audio path at 40 ms ${cpuRatio.toFixed(2)} x the default with the far end playing (bar ${CPU_RATIO_MAX} on pipewire-pulse only; docs/design/capture-latency.md says why)`,
      });
    }
  } finally {
    await rig.stop();
  }
});
