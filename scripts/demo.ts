// `npm run demo` (after scripts/demo.sh has installed and built): starts the real-audio rig, launches
// Chromium with the extension, opens the meeting page, holds it unmuted for a window and then muted
// (track.enabled = false) for a window, measures each phase with `micoff-host sample` over the browser's
// process tree and the audio server, prints the table and writes JSON + an HTML chart. When the extension
// has micoff's release-on-mute, the muted phase runs with it off (plain Chromium) and a third phase
// measures the same mute with it on. A last phase measures the unmuted call again with a longer capture
// latency (`--capture-ms`, default 40): Chromium relaunched with PULSE_LATENCY_MSEC=N, which is
// what `micoff-host latency set` arranges on PulseAudio (the demo never writes the user's own files).
//
//   tsx scripts/demo.ts [--window S] [--server pulseaudio|pipewire] [--reader] [--no-micoff]
//                       [--capture-ms N] [--out DIR]
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseArgs } from 'node:util';
import { type AudioServerKind, startAudioRig } from '../e2e/rig/audio-rig.ts';
import { extensionServiceWorker, launchChromium } from '../e2e/rig/chromium.ts';
import { extensionId, requireHost, sampleCpu } from '../e2e/rig/host.ts';
import { MeetingPage } from '../e2e/rig/meeting-page.ts';
import { isChromium } from '../e2e/rig/pactl.ts';
import { startPageServer } from '../e2e/rig/page-server.ts';
import { CHROMIUM, ROOT } from '../e2e/rig/paths.ts';
import { run as runCmd, waitFor } from '../e2e/rig/proc.ts';
import { ExtensionWorker } from '../e2e/rig/service-worker.ts';
import { renderHtml } from './demo/chart.ts';
import { buildRows, formatTable, type PhaseResult, type Run } from './demo/report.ts';

const USAGE = `usage: npm run demo -- [--window S] [--server pulseaudio|pipewire] [--reader] [--no-micoff] [--capture-ms N] [--out DIR]
  --window S     seconds per phase (default 10)
  --server K     the rig's audio server (default pulseaudio)
  --reader       keep the rig's low-latency parec reader on the mic (off by default: its own load at the
                 server would hide what the browser costs there, most of all once micoff released the mic)
  --no-micoff    skip the third phase (muted with micoff's release on mute)
  --capture-ms N the capture latency of the last phase, "unmuted, capture latency N ms" (20..200,
                 default 40; 0 skips it): Chromium relaunched with PULSE_LATENCY_MSEC=N
  --out DIR      results folder (default results/demo-<timestamp>)`;

const { values: args } = parseArgs({
  options: {
    window: { type: 'string', default: '10' },
    server: { type: 'string', default: 'pulseaudio' },
    reader: { type: 'boolean', default: false },
    'no-micoff': { type: 'boolean', default: false },
    'capture-ms': { type: 'string', default: '40' },
    out: { type: 'string' },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (args.help) {
  console.log(USAGE);
  process.exit(0);
}
const windowS = Number(args.window);
if (!Number.isFinite(windowS) || windowS < 1 || windowS > 600) {
  console.error(`--window must be 1..600 seconds\n${USAGE}`);
  process.exit(2);
}
if (args.server !== 'pulseaudio' && args.server !== 'pipewire') {
  console.error(`--server must be pulseaudio or pipewire\n${USAGE}`);
  process.exit(2);
}
const serverKind = args.server as AudioServerKind;
const captureMs = Number(args['capture-ms']);
if (!Number.isInteger(captureMs) || (captureMs !== 0 && (captureMs < 20 || captureMs > 200))) {
  console.error(`--capture-ms must be 0 (skip) or 20..200\n${USAGE}`);
  process.exit(2);
}
const log = (m: string) => console.error(`demo: ${m}`);

async function main(): Promise<number> {
  requireHost();
  const created = new Date();
  const stamp = created.toISOString().replace(/[:.]/g, '-').replace(/Z$/, '');
  const outDir = args.out ?? join(ROOT, 'results', `demo-${stamp}`);

  log(`starting the ${serverKind} rig`);
  const rig = await startAudioRig(serverKind, { reader: args.reader });
  const pages = await startPageServer();
  let chromium: Awaited<ReturnType<typeof launchChromium>> | null = null;
  const cleanup = async () => {
    await chromium?.close();
    await pages.close();
    await rig.stop();
  };
  const onSignal = () => {
    void cleanup().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    const info = await rig.info();
    log('launching Chromium with the extension');
    chromium = await launchChromium({ env: rig.clientEnv });
    const browserPid = await chromium.browserPid();
    const version = /(\d+\.\d+\.\d+\.\d+)/.exec((await runCmd(CHROMIUM, ['--version'])).stdout)?.[1] ?? null;

    const meeting = await MeetingPage.open(chromium.context, pages.url('meeting.html'));
    await meeting.ready();
    await meeting.waitForAudioFlowing();
    const streams = (await rig.recordStreams()).filter(isChromium);
    if (streams.length === 0)
      throw new Error('the meeting is up but Chromium has no record stream at the server');

    const phases: PhaseResult[] = [];
    const measure = async (id: string, label: string, short: string) => {
      log(`${label}: measuring ${windowS} s`);
      const report = await sampleCpu({ browserPid, audioServer: true, windowS, env: rig.clientEnv });
      phases.push({ id, label, short, window_s: windowS, report });
    };
    const chromiumStreamOpen = async () => (await rig.recordStreams()).some(isChromium);
    const sw = new ExtensionWorker(await extensionServiceWorker(chromium.context, extensionId()));
    // micoff's own release-on-mute is a setting of the extension; without the setting (an
    // older build) there is only the "muted" phase of plain Chromium.
    const setRelease = async (on: boolean): Promise<boolean> =>
      sw.worker
        .evaluate(async (v) => {
          const m = (globalThis as { micoff?: { settings?: { update(p: unknown): Promise<unknown> } } })
            .micoff;
          if (!m?.settings) return false;
          await m.settings.update(v ? { releaseOnMute: true, releaseDelayMs: 0 } : { releaseOnMute: false });
          return true;
        }, on)
        .catch(() => false);

    // Phase 1: unmuted.
    const hasRelease = await setRelease(false);
    await measure('unmuted', 'unmuted', 'unmuted');

    // Phase 2: muted the way meeting apps do it (track.enabled = false), micoff's release off: what
    // Chromium does on its own (it keeps the device open, crbug 642785).
    const muted = await meeting.mute();
    if (muted?.enabled !== false) throw new Error('mute() did not disable the track');
    await meeting.waitForSilence();
    const openWhileMuted = await chromiumStreamOpen();
    await measure('muted', hasRelease ? 'muted, without micoff' : 'muted', 'muted');

    // Phase 3: the same mute with micoff releasing the microphone.
    let releasedWithMicoff: boolean | null = null;
    if (hasRelease && !args['no-micoff']) {
      await meeting.unmute();
      await meeting.waitForAudioFlowing();
      await setRelease(true);
      await meeting.mute();
      releasedWithMicoff = await waitFor(
        'micoff to release the microphone',
        async () => !(await chromiumStreamOpen()),
        {
          timeoutMs: 10_000,
          intervalMs: 50,
        },
      ).catch(() => false);
      await measure('muted_micoff', 'muted, with micoff', 'muted+micoff');
    }

    // Phase 4: unmuted again, with a longer capture latency. PULSE_LATENCY_MSEC must be in the browser's
    // launch environment, so Chromium is relaunched (new processes: new rows in the table).
    let grantedUs: (number | null)[] = [];
    let echoCancellation: boolean | null = null;
    if (captureMs > 0) {
      await meeting.hangUp();
      await chromium.close();
      chromium = null;
      await waitFor('no capture from the first browser', async () => !(await chromiumStreamOpen()), {
        timeoutMs: 10_000,
        intervalMs: 100,
      });
      log(`relaunching Chromium with PULSE_LATENCY_MSEC=${captureMs}`);
      chromium = await launchChromium({ env: { ...rig.clientEnv, PULSE_LATENCY_MSEC: String(captureMs) } });
      const again = await MeetingPage.open(chromium.context, pages.url('meeting.html'));
      await again.ready();
      await again.waitForAudioFlowing();
      const bPid = await chromium.browserPid();
      grantedUs = (await rig.recordStreams()).filter(isChromium).map((s) => s.bufferLatencyUs);
      echoCancellation = (await again.stats()).track?.settings.echoCancellation ?? null;
      // A browser just launched is still warming up (first page, JIT): let it settle like the first one did.
      await new Promise((r) => setTimeout(r, 3000));
      log(`unmuted, capture latency ${captureMs} ms: measuring ${windowS} s`);
      const report = await sampleCpu({ browserPid: bPid, audioServer: true, windowS, env: rig.clientEnv });
      phases.push({
        id: `unmuted_${captureMs}ms`,
        label: `unmuted, capture latency ${captureMs} ms`,
        short: `unmuted ${captureMs}ms`,
        window_s: windowS,
        report,
      });
    }

    const runResult: Run = {
      scenario: {
        browser: 'chromium',
        browser_version: version,
        server: { kind: serverKind, name: info.serverName, version: info.serverVersion },
        capture_latency: 'default (10 ms, processed capture)',
        notes: [
          'Meeting: getUserMedia({audio: true}) (default processing) sent over an RTCPeerConnection loopback on one page; no playback.',
          'Muted = track.enabled = false (what most meeting apps do).',
          'Processes idle in every phase are left out of the table (they are in results.json).',
          `Chromium's record stream while muted${hasRelease ? ' without micoff' : ''}: ${openWhileMuted ? 'still open' : 'closed'}.`,
          ...(releasedWithMicoff === null
            ? []
            : [
                `Muted with micoff (release on mute, no delay): record stream ${releasedWithMicoff ? 'closed' : 'STILL OPEN (micoff did not release)'}.`,
              ]),
          ...(captureMs > 0
            ? [
                `Unmuted, capture latency ${captureMs} ms: Chromium relaunched with PULSE_LATENCY_MSEC=${captureMs} (micoff-host \`latency set\` on PulseAudio does the same through the browser's launch environment; playback latency grows too); the server granted its record stream ${grantedUs.map((u) => (u === null ? '?' : `${u / 1000} ms`)).join(', ') || 'nothing'}; echo cancellation ${echoCancellation === null ? 'unknown' : echoCancellation ? 'on' : 'OFF'} (getSettings).`,
              ]
            : []),
          'The audio server also serves the rig: a test-signal player (pacat into the null sink)' +
            (args.reader ? ' and a 10 ms reader on the mic (parec), in every phase.' : ', in every phase.'),
        ],
      },
      phases,
      rows: buildRows(phases),
    };

    const table = formatTable(phases, runResult.rows);
    console.log(
      `\nmicoff demo: Chromium ${version ?? ''} on ${info.serverName} ${info.serverVersion}, ${windowS} s per phase (CPU in % of one core)\n`,
    );
    console.log(table);
    console.log('');
    for (const n of runResult.scenario.notes) console.log(`- ${n}`);

    mkdirSync(outDir, { recursive: true });
    const command = `npm run demo -- ${process.argv.slice(2).join(' ')}`.trim();
    const doc = { schema: 'micoff-demo/1', created: created.toISOString(), command, runs: [runResult] };
    writeFileSync(join(outDir, 'results.json'), `${JSON.stringify(doc, null, 2)}\n`);
    writeFileSync(join(outDir, 'table.txt'), `${table}\n`);
    writeFileSync(
      join(outDir, 'chart.html'),
      renderHtml([runResult], { created: created.toISOString(), command }),
    );
    const rel = relative(process.cwd(), outDir) || '.';
    console.log(
      `\nresults: ${rel}/results.json (figures + raw reports), ${rel}/chart.html (chart), ${rel}/table.txt`,
    );
    return 0;
  } finally {
    await cleanup();
  }
}

main().then(
  (code) => process.exit(code),
  (e) => {
    console.error(`demo failed: ${e instanceof Error ? e.message : String(e)}`);
    process.exit(1);
  },
);
