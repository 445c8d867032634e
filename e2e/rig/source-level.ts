// The level of what a source of the rig carries, measured by recording it (parec) for a while: a sink's
// monitor (what is played there) or a source. For checks that a signal is really there, e.g. that the
// far end's echo reaches the microphone in a run whose sent echo is compared, or that a media element
// plays into the output sink.
import { spawn } from 'node:child_process';
import type { AudioRig } from './audio-rig.ts';

export interface SourceLevel {
  /** RMS of the samples, 0..1 of full scale. */
  rms: number;
  /** RMS of the loudest 100 ms of them: "heard at least once", for a signal that comes in bursts or
   * fades (0 without a full 100 ms). */
  peak_rms: number;
  /** The same as mean energy per sample in dB (10 log10 of the mean square), the scale of WebRTC's
   * `totalAudioEnergy / totalSamplesDuration`; -120 for digital silence or no samples. */
  db: number;
  /** Seconds of audio recorded. */
  seconds: number;
}

const RATE = 48_000;

/** Starts recording `source`; `stop()` ends it and returns the level of what it recorded since the start
 * or the last `reset()` (a recorder started ahead keeps its own start out of a measured window), `level()`
 * the same while it goes on. The
 * recorder asks a long latency (`latencyMs`, default 100) so it does not set the pace of the source for
 * a browser's capture on it (PulseAudio and PipeWire run a source at the lowest latency its streams
 * ask). Its client name starts with `micoff-rig-` like the rig's own clients. It stops by itself after
 * `maxMs` (default 60 s), so a recorder a failed check never stopped does not record on into the next
 * tests. */
export function recordLevel(
  rig: Pick<AudioRig, 'clientEnv'>,
  source: string,
  opts: { latencyMs?: number; maxMs?: number } = {},
): { reset(): void; level(): SourceLevel; stop(): Promise<SourceLevel> } {
  const child = spawn(
    'parec',
    [
      '--raw',
      '--format=s16le',
      `--rate=${RATE}`,
      '--channels=1',
      `--latency-msec=${opts.latencyMs ?? 100}`,
      '--client-name=micoff-rig-level',
      '-d',
      source,
    ],
    { env: rig.clientEnv, stdio: ['ignore', 'pipe', 'ignore'] },
  );
  let chunks: Buffer[] = [];
  let received = 0;
  // After a reset the samples start at an even byte of the whole recording (a pipe read can end mid-sample).
  let skip = 0;
  child.stdout.on('data', (b: Buffer) => {
    chunks.push(b);
    received += b.length;
  });
  let failed: Error | null = null;
  const exited = new Promise<void>((r) => {
    child.once('close', () => r());
    child.once('error', (e) => {
      failed = e;
      r();
    });
  });
  const limit = setTimeout(() => child.kill('SIGTERM'), opts.maxMs ?? 60_000);
  limit.unref();
  const level = () => levelOf(Buffer.concat(chunks).subarray(skip));
  return {
    reset() {
      chunks = [];
      skip = received % 2;
    },
    level,
    async stop() {
      clearTimeout(limit);
      child.kill('SIGTERM');
      await exited;
      if (failed) throw new Error(`parec on ${source}: ${(failed as Error).message}`);
      return level();
    },
  };
}

/** Samples in the window `peak_rms` is taken over. */
const PEAK_WINDOW = RATE / 10;

/** The level of s16le mono samples. */
export function levelOf(buf: Buffer): SourceLevel {
  const n = Math.floor(buf.length / 2);
  let sum = 0;
  let windowSum = 0;
  let peakMeanSquare = 0;
  for (let i = 0; i < n; i++) {
    const sq = (buf.readInt16LE(i * 2) / 32768) ** 2;
    sum += sq;
    windowSum += sq;
    if ((i + 1) % PEAK_WINDOW === 0) {
      peakMeanSquare = Math.max(peakMeanSquare, windowSum / PEAK_WINDOW);
      windowSum = 0;
    }
  }
  const meanSquare = n ? sum / n : 0;
  return {
    rms: Math.sqrt(meanSquare),
    peak_rms: Math.sqrt(peakMeanSquare),
    db: 10 * Math.log10(Math.max(meanSquare, 1e-12)),
    seconds: n / RATE,
  };
}
