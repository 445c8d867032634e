// `npm run soak -- --minutes 30`: a long call at a raised capture latency on each audio server, outside
// `npm test`, reporting per interval capture continuity, receiver concealment, the audio path's CPU and
// the granted latency (what could go wrong with bigger capture fragments).
//   node --import tsx scripts/soak.ts [--minutes M] [--server pulseaudio|pipewire|both]
//                                     [--capture-ms N] [--interval S] [--out DIR]
// Method: docs/design/capture-latency.md#soak-script.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseArgs } from 'node:util';
import { type AudioRig, type AudioServerKind, startAudioRig } from '../e2e/rig/audio-rig.ts';
import {
  applyCaptureLatency,
  chromiumGrantsUs,
  type LatencyXdg,
  latencyXdg,
} from '../e2e/rig/capture-latency.ts';
import { launchChromium } from '../e2e/rig/chromium.ts';
import { requireHost, sampleCpu } from '../e2e/rig/host.ts';
import { MeetingPage } from '../e2e/rig/meeting-page.ts';
import { isChromium } from '../e2e/rig/pactl.ts';
import { startPageServer } from '../e2e/rig/page-server.ts';
import { ROOT } from '../e2e/rig/paths.ts';
import { audioPathCpuPct } from '../extension/src/shared/cpu-view.ts';
import { formatTable, type Interval, intervalOf } from './soak/report.ts';

const USAGE = `usage: npm run soak -- [--minutes M] [--server pulseaudio|pipewire|both] [--capture-ms N] [--interval S] [--out DIR]
  --minutes M     call length per server (default 30)
  --server K      pulseaudio, pipewire or both (default both, one after the other)
  --capture-ms N  capture latency set through micoff-host latency set (10..200, default 40)
  --interval S    seconds per reported interval (default 60, at most a quarter of the call)
  --out DIR       results folder (default results/soak-<timestamp>)`;

const { values: args } = parseArgs({
  options: {
    minutes: { type: 'string', default: '30' },
    server: { type: 'string', default: 'both' },
    'capture-ms': { type: 'string', default: '40' },
    interval: { type: 'string' },
    out: { type: 'string' },
    help: { type: 'boolean', short: 'h', default: false },
  },
});

function fail(message: string): never {
  console.error(`${message}\n${USAGE}`);
  process.exit(2);
}
if (args.help) {
  console.log(USAGE);
  process.exit(0);
}
const minutes = Number(args.minutes);
if (!Number.isFinite(minutes) || minutes <= 0 || minutes > 600) fail('--minutes must be > 0 and <= 600');
const captureMs = Number(args['capture-ms']);
if (!Number.isInteger(captureMs) || captureMs < 10 || captureMs > 200) fail('--capture-ms must be 10..200');
const servers: AudioServerKind[] =
  args.server === 'both'
    ? ['pulseaudio', 'pipewire']
    : args.server === 'pulseaudio' || args.server === 'pipewire'
      ? [args.server]
      : fail('--server must be pulseaudio, pipewire or both');
const intervalS = Math.min(Number(args.interval ?? 60), (minutes * 60) / 4);
if (!Number.isFinite(intervalS) || intervalS < 5) fail('--interval must be >= 5 s (and the call >= 20 s)');
const log = (m: string) => console.error(`soak: ${m}`);

/** What the server grants the browser's capture, in ms: the host's `latency status` (which reads the
 * fragment on pipewire-pulse, where pactl says 0), else pactl's buffer latency. */
async function grantedMs(rig: AudioRig, xdg: LatencyXdg): Promise<(number | null)[]> {
  try {
    return (await chromiumGrantsUs(rig, xdg)).map((us) => us / 1000);
  } catch {
    return (await rig.recordStreams())
      .filter(isChromium)
      .map((s) => (s.bufferLatencyUs === null ? null : s.bufferLatencyUs / 1000));
  }
}

async function soakOne(
  kind: AudioServerKind,
): Promise<{ server: string; version: string; mechanism: string | null; intervals: Interval[] }> {
  log(`${kind}: starting the rig`);
  const rig = await startAudioRig(kind, { reader: false });
  const pages = await startPageServer();
  let browser: Awaited<ReturnType<typeof launchChromium>> | null = null;
  try {
    const xdg = latencyXdg(rig);
    const { env, status } = await applyCaptureLatency(rig, captureMs, xdg);
    log(`${kind}: ${status.configured?.mechanism} ${captureMs} ms set through micoff-host`);
    const info = await rig.info();
    browser = await launchChromium({ env });
    const call = await MeetingPage.open(browser.context, pages.url('echo.html'));
    await call.ready();
    await call.waitForAudioFlowing();
    const pid = await browser.browserPid();
    const intervals: Interval[] = [];
    const started = Date.now();
    const end = started + minutes * 60_000;
    let a = await call.stats();
    let aAt = Date.now();
    while (Date.now() + intervalS * 1000 <= end + 1000) {
      const report = await sampleCpu({
        browserPid: pid,
        audioServer: true,
        windowS: intervalS,
        env: rig.clientEnv,
      });
      const b = await call.stats();
      const bAt = Date.now();
      if (b.error) throw new Error(`the call failed: ${b.error}`);
      const granted = await grantedMs(rig, xdg);
      const row: Interval = {
        t_s: Math.round((bAt - started) / 1000),
        ...intervalOf(a, b, (bAt - aAt) / 1000),
        audio_path_cpu_pct: audioPathCpuPct(report, true),
        granted_latency_ms: granted,
      };
      intervals.push(row);
      log(
        `${kind} t=${row.t_s}s captured ${row.captured_s.toFixed(2)}/${row.wall_s.toFixed(2)} s, concealed ${row.concealed_pct?.toFixed(3) ?? '?'} %, events ${row.concealment_events ?? '?'}, audio path ${row.audio_path_cpu_pct.toFixed(1)} %, granted ${granted.join('/')} ms`,
      );
      a = b;
      aAt = bAt;
    }
    await call.hangUp();
    return {
      server: info.serverName,
      version: info.serverVersion,
      mechanism: status.configured?.mechanism ?? null,
      intervals,
    };
  } finally {
    await browser?.close();
    await pages.close();
    await rig.stop();
  }
}

async function main(): Promise<number> {
  requireHost();
  const created = new Date();
  const outDir =
    args.out ??
    join(ROOT, 'results', `soak-${created.toISOString().replace(/[:.]/g, '-').replace(/Z$/, '')}`);
  const runs = [];
  for (const kind of servers) runs.push(await soakOne(kind));
  mkdirSync(outDir, { recursive: true });
  const command = `npm run soak -- ${process.argv.slice(2).join(' ')}`.trim();
  const doc = {
    schema: 'micoff-soak/1',
    created: created.toISOString(),
    command,
    capture_ms: captureMs,
    minutes,
    interval_s: intervalS,
    runs,
  };
  writeFileSync(join(outDir, 'results.json'), `${JSON.stringify(doc, null, 2)}\n`);
  const text = runs.map(formatTable).join('\n\n');
  writeFileSync(join(outDir, 'table.txt'), `${text}\n`);
  console.log(`\nmicoff soak: ${minutes} min per server at ${captureMs} ms capture latency\n\n${text}`);
  console.log(`\nresults: ${relative(process.cwd(), outDir) || '.'}/results.json, table.txt`);
  return 0;
}

main().then(
  (code) => process.exit(code),
  (e) => {
    console.error(`soak failed: ${e instanceof Error ? e.message : String(e)}`);
    process.exit(1);
  },
);
