// micoff-host from the rig's side: the native messaging manifest for a Chromium profile, and
// `micoff-host sample --json` (one CpuReport over a window) for the demo and the CPU tests.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CpuReport } from '../../extension/src/shared/protocol.ts';
import { EXTENSION_DIR, HOST_BINARY, HOST_NAME } from './paths.ts';
import { run } from './proc.ts';

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
 * Writes `<userDataDir>/NativeMessagingHosts/org.micoff.host.json` (a Chromium started with
 * --user-data-dir reads user-level host manifests only from there), through the host's own installer.
 */
export async function installHostManifest(userDataDir: string, binary = HOST_BINARY): Promise<string> {
  const dir = join(userDataDir, 'NativeMessagingHosts');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${HOST_NAME}.json`);
  const r = await run(requireHost(binary), ['install', '--target-dir', dir, '--browser', 'chromium'], {
    timeoutMs: 15_000,
  });
  if (r.code !== 0 || !existsSync(file)) {
    // Fallback for a host without a working `install`: the manifest is simple enough to write here.
    writeFileSync(
      file,
      JSON.stringify(
        {
          name: HOST_NAME,
          description: 'micoff native host',
          path: binary,
          type: 'stdio',
          allowed_origins: [`chrome-extension://${extensionId()}/`],
        },
        null,
        2,
      ),
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

/** `micoff-host sample ... --json`: one CpuReport over the window. */
export async function sampleCpu(o: SampleOptions): Promise<CpuReport> {
  const args = ['sample', '--json', '--window', String(o.windowS)];
  if (o.browserPid) args.push('--browser-pid', String(o.browserPid));
  for (const p of o.pids ?? []) args.push('--pid', String(p));
  if (o.audioServer) args.push('--audio-server');
  const bin = requireHost(o.binary);
  const r = await run(bin, args, { env: o.env, timeoutMs: o.windowS * 1000 + 30_000 });
  if (r.code !== 0) throw new Error(`micoff-host ${args.join(' ')} failed (${r.code}): ${r.stderr.trim()}`);
  return JSON.parse(r.stdout) as CpuReport;
}

/** Threads that do Chromium's capture work (see the recipe's "Which threads do the audio work"). */
export const CHROMIUM_AUDIO_THREADS =
  /^(AudioInputDevic|AudioProcessing|threaded-ml|ThreadPoolAudio|WebRTC_W_and_N|AudioOutputDevi)/;
