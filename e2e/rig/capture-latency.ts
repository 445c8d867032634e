// Capture latency on the rig, applied by micoff's own mechanism: `micoff-host latency set` (or `reset`)
// against the rig's server with private HOME and XDG folders, then the restart its result names
// (PulseAudio: the browser started with the desktop entry copy's environment; pipewire-pulse: the
// rig's server restarted so the rule is read). Used by the CPU, echo, options and soak runs, so what they
// measure is what `latency set` does. Details: docs/design/capture-latency.md#rig-capture-latency.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LatencySetResult, LatencyStatus } from '../../extension/src/shared/protocol.ts';
import type { AudioRig } from './audio-rig.ts';
import { requireHost } from './host.ts';
import { CHROMIUM } from './paths.ts';
import { run, waitFor } from './proc.ts';

/** The environment variable libpulse reads (micoff-host's LATENCY_ENV). */
export const LATENCY_ENV = 'PULSE_LATENCY_MSEC';

/** Private folders for `micoff-host latency`: the rig's config home (so pipewire-pulse sees the rule), a
 * data home for the desktop entry copies, a "system" data dir holding a chromium.desktop that runs the
 * rig's Chromium, and a HOME (`~/.local/bin`, where micoff's PATH wrappers go). */
export interface LatencyXdg {
  HOME: string;
  XDG_CONFIG_HOME: string;
  XDG_DATA_HOME: string;
  XDG_DATA_DIRS: string;
}

/** The folders under `root` (the rig's own by default), the system desktop entry written once. */
export function latencyXdg(rig: AudioRig, root = join(rig.dir, 'latency')): LatencyXdg {
  const system = join(root, 'system');
  mkdirSync(join(system, 'applications'), { recursive: true });
  // What Debian's chromium.desktop says, with the rig's binary.
  writeFileSync(
    join(system, 'applications', 'chromium.desktop'),
    `[Desktop Entry]\nName=Chromium\nType=Application\nExec=${CHROMIUM} %U\n`,
  );
  return {
    HOME: join(root, 'home'),
    XDG_CONFIG_HOME: rig.configHome,
    XDG_DATA_HOME: join(root, 'data'),
    XDG_DATA_DIRS: system,
  };
}

/** The copy `latency set` writes for Chromium on PulseAudio. */
export const desktopCopy = (xdg: LatencyXdg) => join(xdg.XDG_DATA_HOME, 'applications', 'chromium.desktop');

/** `micoff-host latency <args> --json` with the rig's server and the private folders; throws on a
 * non-zero exit. */
export function latencyHost(rig: AudioRig, xdg: LatencyXdg) {
  const env = { ...rig.clientEnv, ...xdg };
  return async <T>(args: string[]): Promise<T> => {
    const r = await run(requireHost(), ['latency', ...args, '--json'], { env, timeoutMs: 20_000 });
    if (r.code !== 0) throw new Error(`micoff-host latency ${args.join(' ')} (${r.code}): ${r.stderr}`);
    return JSON.parse(r.stdout) as T;
  };
}

/** The `env VAR=value …` assignments of a desktop entry's first Exec line. */
export function execEnv(entry: string): Record<string, string> {
  const exec = entry.split('\n').find((l) => l.startsWith('Exec='));
  const words = (exec ?? '').slice('Exec='.length).split(/\s+/);
  const out: Record<string, string> = {};
  if (words[0] !== 'env') return out;
  for (const w of words.slice(1)) {
    const m = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(w);
    if (!m) break;
    out[m[1] as string] = m[2] as string;
  }
  return out;
}

/** The browser's environment as micoff's desktop entry copy would start it (the rig's client
 * environment without any inherited PULSE_LATENCY_MSEC, plus the copy's `env` assignments when
 * there is a copy). */
export function browserEnv(rig: AudioRig, xdg: LatencyXdg): NodeJS.ProcessEnv {
  const env = { ...rig.clientEnv };
  delete env[LATENCY_ENV];
  let copy: string | null = null;
  try {
    copy = readFileSync(desktopCopy(xdg), 'utf8');
  } catch {
    // no copy: the browser's default
  }
  return copy === null ? env : { ...env, ...execEnv(copy) };
}

export interface AppliedLatency {
  /** What to launch Chromium with. */
  env: NodeJS.ProcessEnv;
  set: LatencySetResult;
  /** `latency status` after the restart: nothing left to restart but the browser itself. */
  status: LatencyStatus;
}

/**
 * Sets Chromium's capture latency to `ms` (null: `latency reset`, the browser's own 10 ms) through
 * micoff-host, and does the server-side restart its result names. On pipewire-pulse the rig's server is
 * restarted every time, changed or not, so every configuration of a comparison starts on a fresh
 * server. No browser may be capturing from the rig while this runs.
 */
export async function applyCaptureLatency(
  rig: AudioRig,
  ms: number | null,
  xdg: LatencyXdg = latencyXdg(rig),
): Promise<AppliedLatency> {
  const host = latencyHost(rig, xdg);
  const set = await host<LatencySetResult>(
    ms === null ? ['reset'] : ['set', '--capture-ms', String(ms), '--browser', 'chromium'],
  );
  const want = rig.kind === 'pipewire' ? 'pipewire_pulse_rule' : 'launch_environment';
  if (ms !== null && set.mechanism !== want) {
    throw new Error(`latency set on ${rig.kind} used ${set.mechanism}, not ${want}: ${set.message}`);
  }
  if (rig.kind === 'pipewire') await rig.restart();
  const status = await host<LatencyStatus>(['status']);
  if (status.needs_restart.includes('pipewire-pulse')) {
    throw new Error(`the rule is not in force after the restart: ${JSON.stringify(status)}`);
  }
  if ((status.configured?.capture_ms ?? null) !== ms) {
    throw new Error(`latency status says ${JSON.stringify(status.configured)} after setting ${ms}`);
  }
  return { env: browserEnv(rig, xdg), set, status };
}

/** What the server grants Chromium's record streams, µs (`latency status`: on pipewire-pulse the
 * record fragment, where pactl's buffer latency reads 0; on PulseAudio the buffer latency). */
export async function chromiumGrantsUs(rig: AudioRig, xdg: LatencyXdg = latencyXdg(rig)): Promise<number[]> {
  const st = await latencyHost(rig, xdg)<LatencyStatus>(['status']);
  return st.streams.filter((s) => s.browser === 'chromium').map((s) => s.capture_latency_us);
}

/** Polls until Chromium has a record stream at the server and returns its grants, µs. */
export function waitChromiumGrantsUs(
  rig: AudioRig,
  xdg: LatencyXdg = latencyXdg(rig),
  timeoutMs = 10_000,
): Promise<number[]> {
  return waitFor(
    'Chromium’s record stream in `latency status`',
    async () => {
      const g = await chromiumGrantsUs(rig, xdg);
      return g.length > 0 && g.every((us) => us > 0) ? g : null;
    },
    { timeoutMs, intervalMs: 200 },
  );
}

/** The server's own view of record stream `index`'s grant, µs, from `pactl list source-outputs`:
 * PulseAudio's buffer latency; on pipewire-pulse (which reports that as 0) the record fragment
 * `pulse.attr.fragsize`, bytes at the stream's sample spec. Null when the stream is not there. */
export async function serverGrantUs(rig: AudioRig, index: number): Promise<number | null> {
  const raw = JSON.parse(await rig.pactl(['-f', 'json', 'list', 'source-outputs'])) as {
    index: number;
    sample_specification: string;
    buffer_latency_usec?: unknown;
    properties: Record<string, string>;
  }[];
  const mine = raw.find((o) => o.index === index);
  if (!mine) return null;
  if (rig.kind === 'pulseaudio') {
    const us = Number(mine.buffer_latency_usec);
    return Number.isFinite(us) ? us : null;
  }
  const spec = /^(\w+) (\d+)ch (\d+)Hz$/.exec(mine.sample_specification);
  const frag = Number(mine.properties['pulse.attr.fragsize']);
  if (!spec || !Number.isFinite(frag)) return null;
  const bytesPerSample = spec[1]?.startsWith('s16') ? 2 : 4;
  return (frag * 1e6) / (bytesPerSample * Number(spec[2]) * Number(spec[3]));
}
