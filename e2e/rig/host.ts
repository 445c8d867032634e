// micoff-host from the rig's side: the native messaging manifest (through the host's installer) for a
// Chromium profile or a Firefox home, and `micoff-host sample --json` (one CpuReport over a window)
// for the demo and the CPU tests.
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { type CpuReport, HOST_NAME } from '../../extension/src/shared/protocol.ts';
import { EXTENSION_DIR, HOST_BINARY } from './paths.ts';
import { run, waitFor } from './proc.ts';

// The CpuReport shape is the protocol's (native-host/PROTOCOL.md, mirrored in TypeScript by the
// extension): one definition for the extension, the tests and the demo.
export type { CpuReport, ProcessRates, ThreadRates } from '../../extension/src/shared/protocol.ts';

export function requireHost(binary = HOST_BINARY): string {
  if (!existsSync(binary)) {
    throw new Error(`micoff-host not built: ${binary} is missing (run \`cargo build --release\`)`);
  }
  return binary;
}

export function extensionId(extensionDir = EXTENSION_DIR): string {
  const file = join(extensionDir, 'extension-id.txt');
  if (!existsSync(file)) throw new Error(`${file} is missing (run \`npm run build\`)`);
  return readFileSync(file, 'utf8').trim();
}

/**
 * Writes the host manifest into `dir` with the host's own installer (`micoff-host install
 * --target-dir`), the one writer of that file (docs/test-rig.md, "Native messaging host manifests").
 * With `firefoxRelease`, the same command also switches on Firefox's own mic release in that profile's
 * user.js (`--firefox-release --firefox-profile P --release-delay-ms N`, as a user would run it).
 * Throws when the installer fails or writes nothing: a broken installer must fail the tests.
 */
export async function installHostManifest(
  dir: string,
  browser: 'chromium' | 'firefox',
  binary = HOST_BINARY,
  firefoxRelease?: { firefoxProfile: string; releaseDelayMs: number },
): Promise<string> {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${HOST_NAME}.json`);
  const args = ['install', '--browser', browser, '--target-dir', dir];
  if (firefoxRelease) {
    args.push(
      '--firefox-release',
      '--firefox-profile',
      firefoxRelease.firefoxProfile,
      '--release-delay-ms',
      String(firefoxRelease.releaseDelayMs),
    );
  }
  // micoff's record of what it wrote goes next to the manifest's folder (the test's temporary
  // profile or home), not into the real ~/.local/state of whoever runs the tests.
  const env = { ...process.env, XDG_STATE_HOME: join(dirname(dir), 'micoff-state') };
  const r = await run(requireHost(binary), args, { env, timeoutMs: 15_000 });
  if (r.code !== 0) {
    throw new Error(
      `micoff-host ${args.join(' ')} failed (${r.code}): ${r.stderr.trim()} ${r.stdout.trim()}`,
    );
  }
  if (!existsSync(file)) throw new Error(`micoff-host ${args.join(' ')} exited 0 but wrote no ${file}`);
  return file;
}

/**
 * `<userDataDir>/NativeMessagingHosts/<HOST_NAME>.json`: a Chromium started with --user-data-dir
 * reads user-level host manifests only from there. The manifest must allow the extension as built
 * (a host binary built from other manifests would not).
 */
export async function installChromiumHostManifest(
  userDataDir: string,
  binary = HOST_BINARY,
): Promise<string> {
  const file = await installHostManifest(join(userDataDir, 'NativeMessagingHosts'), 'chromium', binary);
  const origin = `chrome-extension://${extensionId()}/`;
  const allowed: unknown = JSON.parse(readFileSync(file, 'utf8'))?.allowed_origins;
  if (!Array.isArray(allowed) || !allowed.includes(origin)) {
    throw new Error(
      `${file} does not allow ${origin} (allowed_origins ${JSON.stringify(allowed)}): rebuild micoff-host (cargo build --release -p micoff-host)`,
    );
  }
  return file;
}

export interface SampleOptions {
  browserPid?: number;
  pids?: number[];
  audioServer?: boolean;
  windowS: number;
  /** PULSE_SERVER etc. so the host finds the rig's server. */
  env?: NodeJS.ProcessEnv;
  binary?: string;
}

/** `sample --json`'s document: the protocol's CpuReport with when it was taken (RFC 3339, local time)
 * and how many idle threads it left out (none here: `--all`). */
export type SampledCpuReport = CpuReport & { time: string; idle_threads_hidden: number };

/** `micoff-host sample ... --json --all`: one CpuReport over the window, every thread in it (idle ones
 * too: the measurements fold them into their rows). */
export async function sampleCpu(o: SampleOptions): Promise<SampledCpuReport> {
  const args = ['sample', '--json', '--all', '--window', String(o.windowS)];
  if (o.browserPid) args.push('--browser-pid', String(o.browserPid));
  for (const p of o.pids ?? []) args.push('--pid', String(p));
  if (o.audioServer) args.push('--audio-server');
  const bin = requireHost(o.binary);
  const r = await run(bin, args, { env: o.env, timeoutMs: o.windowS * 1000 + 30_000 });
  if (r.code !== 0) throw new Error(`micoff-host ${args.join(' ')} failed (${r.code}): ${r.stderr.trim()}`);
  return JSON.parse(r.stdout) as SampledCpuReport;
}

/** `micoff-host latency restart-audio-service --browser-pid P`: ends the browser's audio service once
 * it has no open stream (Chromium starts a new one for its next stream), retried while a stream is still
 * closing (exit 3: kept); resolves with the ended pids once they are gone (none when none ran: exit 4). */
export async function restartAudioService(browserPid: number, env: NodeJS.ProcessEnv): Promise<number[]> {
  const args = ['latency', 'restart-audio-service', '--json', '--browser-pid', String(browserPid)];
  const ended = await waitFor(
    `micoff-host ${args.join(' ')} to end an idle audio service`,
    async () => {
      const r = await run(requireHost(), args, { env, timeoutMs: 20_000 });
      if (r.code === 3) return null; // a stream still open: kept
      if (r.code === 4) return { pids: [] }; // none running: the next stream starts one
      if (r.code !== 0)
        throw new Error(`micoff-host ${args.join(' ')} failed (${r.code}): ${r.stderr.trim()}`);
      return { pids: (JSON.parse(r.stdout) as { ended: { pid: number }[] }).ended.map((e) => e.pid) };
    },
    { timeoutMs: 15_000, intervalMs: 300 },
  );
  await waitFor(
    'the ended audio service to exit',
    () => ended.pids.every((pid) => !existsSync(`/proc/${pid}`)),
    {
      timeoutMs: 10_000,
    },
  );
  return ended.pids;
}

/** Threads that do Chromium's capture work (docs/test-rig.md, "Which threads do the audio work"). */
export const CHROMIUM_AUDIO_THREADS =
  /^(AudioInputDevic|AudioProcessing|threaded-ml|ThreadPoolAudio|WebRTC_W_and_N|AudioOutputDevi)/;
