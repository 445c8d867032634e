// Firefox's floor for a muted call: the loopback call per way a page can take its microphone out,
// against the plain mute, per process and thread (the table in docs/design/firefox-install.md
// "Firefox's floor"). Not part of the suite (it runs for minutes):
//   npm run build && cargo build --release -p micoff-host
//   node --import tsx e2e/tools/firefox-floor.ts [--server pulseaudio|pipewire] [--rounds N] [--window S]
//                                                [--config NAME ...]
// Method: docs/design/firefox-install.md#firefox-floor-tool. Raw: e2e/artifacts/firefox-floor.json.
import { parseArgs } from 'node:util';
import type { Page } from 'puppeteer-core';
import { QUIET_HOLD_MS } from '../../extension/src/shared/firefox-release.ts';
import { startAudioRig } from '../rig/audio-rig.ts';
import { type LaunchedFirefox, launchFirefox, pageWaitFor, updateSettings } from '../rig/firefox.ts';
import { type CpuReport, requireHost, sampleCpu } from '../rig/host.ts';
import { isFirefox, playbackStreams } from '../rig/pactl.ts';
import { startPageServer } from '../rig/page-server.ts';
import { waitFor } from '../rig/proc.ts';
import { median, saveArtifact } from '../tests/release-util.ts';

/** What the page does once the call runs, in the page's realm (meeting.html's `call` and test API). */
const CONFIGS = {
  unmuted: { pref: false, script: 'undefined' },
  muted: { pref: false, script: 'window.mute()' },
  muted_pref: { pref: true, script: 'window.mute()' },
  /** Muted with Firefox's release and micoff (page/firefox/quiet.ts), once micoff took the senders off. */
  micoff: { pref: true, micoff: true, script: 'window.mute()' },
  stopped: { pref: true, script: 'window.stopTrack()' },
  /** The sender's encoding inactive (setParameters), the track muted. */
  params_inactive: {
    pref: true,
    script: `(async () => { window.mute(); const p = call.sender.getParameters();
      for (const e of p.encodings) e.active = false; await call.sender.setParameters(p); })()`,
  },
  /** The sender without a track (replaceTrack(null)), the track muted. */
  sender_null: {
    pref: true,
    script: '(async () => { window.mute(); await call.sender.replaceTrack(null); })()',
  },
  /** As above, and the transceiver inactive (renegotiated): nothing sent, nothing received. */
  sender_null_inactive: {
    pref: true,
    script: `(async () => { window.mute(); await call.sender.replaceTrack(null);
      const [a, b] = call.pcs; a.getTransceivers()[0].direction = 'inactive';
      await a.setLocalDescription(await a.createOffer()); await b.setRemoteDescription(a.localDescription);
      await b.setLocalDescription(await b.createAnswer()); await a.setRemoteDescription(b.localDescription); })()`,
  },
  /** The page's own floor: track stopped, both connections closed (the tab stays open). */
  hung_up: { pref: true, script: 'window.hangUp()' },
  /** The track stopped and the sender without it: what remains is the receiving side. */
  stopped_null: {
    pref: true,
    script: '(async () => { window.stopTrack(); await call.sender.replaceTrack(null); })()',
  },
  /** The sender without a track and the received track stopped: what remains is the page's own track. */
  null_receiver_stopped: {
    pref: true,
    script:
      '(async () => { window.mute(); await call.sender.replaceTrack(null); call.receiver.track.stop(); })()',
  },
  /** The track stopped and the transceiver stopped (renegotiated): the connection stays up, no track
   * of the call is left in Firefox's audio graph. */
  graph_gone: {
    pref: true,
    script: `(async () => { window.stopTrack(); const [a, b] = call.pcs; a.getTransceivers()[0].stop();
      await a.setLocalDescription(await a.createOffer()); await b.setRemoteDescription(a.localDescription);
      await b.setLocalDescription(await b.createAnswer()); await a.setRemoteDescription(b.localDescription); })()`,
  },
} as const;
type Config = keyof typeof CONFIGS;

const { values: args } = parseArgs({
  options: {
    server: { type: 'string', default: 'pulseaudio' },
    rounds: { type: 'string', default: '3' },
    window: { type: 'string', default: '5' },
    config: { type: 'string', multiple: true },
  },
});
const server = args.server === 'pipewire' ? 'pipewire' : 'pulseaudio';
const rounds = Number(args.rounds);
const windowS = Number(args.window);
const configs = (args.config ?? Object.keys(CONFIGS)) as Config[];
for (const c of configs) if (!(c in CONFIGS)) throw new Error(`unknown config ${c}`);
const RELEASE_DELAY_MS = 300;
/** When the released configurations are measured, from the page's action. */
const SETTLED_MS = Math.max(QUIET_HOLD_MS + 500, 7500);

interface Sample {
  round: number;
  config: Config;
  total_pct: number;
  /** `role:process/thread` (threads of one name summed) -> % of one core (schedstat). */
  threads: Record<string, number>;
  processes: Record<string, number>;
  wakeups_per_s: number;
  record_streams: number;
  playback_streams: string[];
  packets_sent_per_s: number | null;
  packets_received_per_s: number | null;
  report: CpuReport;
}

const pct = (r: { run_time_pct?: number | null; cpu_pct: number }) => r.run_time_pct ?? r.cpu_pct;

function flatten(r: CpuReport) {
  const threads: Record<string, number> = {};
  const processes: Record<string, number> = {};
  let wakeups = 0;
  for (const p of r.processes) {
    const pk = `${p.role}:${p.comm}`;
    processes[pk] = (processes[pk] ?? 0) + pct(p);
    wakeups += p.wakeups_per_s ?? 0;
    for (const t of p.threads) {
      const k = `${pk}/${t.comm}`;
      threads[k] = (threads[k] ?? 0) + pct(t);
    }
  }
  return { threads, processes, total: Object.values(processes).reduce((a, b) => a + b, 0), wakeups };
}

async function packetRates(page: Page): Promise<{ sent: number | null; received: number | null }> {
  const read = () =>
    page.evaluate(() =>
      window.stats().then((s) => ({
        sent: s.outbound?.packetsSent ?? null,
        received: s.inbound?.packetsReceived ?? null,
        at: s.at,
      })),
    );
  const a = await read();
  await new Promise((r) => setTimeout(r, 1000));
  const b = await read();
  const dt = (b.at - a.at) / 1000;
  const rate = (x: number | null, y: number | null) => (x === null || y === null ? null : (y - x) / dt);
  return { sent: rate(a.sent, b.sent), received: rate(a.received, b.received) };
}

async function main(): Promise<void> {
  requireHost();
  const rig = await startAudioRig(server, { reader: false, tone: false });
  const pages = await startPageServer();
  const ff: Partial<Record<'plain' | 'pref' | 'micoff', LaunchedFirefox>> = {};
  const samples: Sample[] = [];
  const needed = (pick: (c: (typeof CONFIGS)[Config]) => boolean) => configs.some((c) => pick(CONFIGS[c]));
  try {
    if (needed((c) => !c.pref)) ff.plain = await launchFirefox({ env: rig.clientEnv, withExtension: false });
    const release = { delayMs: RELEASE_DELAY_MS, installer: true };
    if (needed((c) => c.pref && !('micoff' in c))) {
      ff.pref = await launchFirefox({ env: rig.clientEnv, nativeRelease: release, withExtension: false });
    }
    if (needed((c) => 'micoff' in c)) {
      ff.micoff = await launchFirefox({ env: rig.clientEnv, nativeRelease: release });
      // micoff's delay is the one the installer gave Firefox.
      const options = await ff.micoff.openExtensionPage('options.html');
      await updateSettings(options, { releaseDelayMs: RELEASE_DELAY_MS });
      await options.close();
    }
    const firefoxRecords = async () => (await rig.recordStreams()).filter(isFirefox).length;
    for (let round = -1; round < rounds; round++) {
      const order = round % 2 ? [...configs].reverse() : configs;
      for (const config of order) {
        const spec = CONFIGS[config];
        const browser = ('micoff' in spec ? ff.micoff : spec.pref ? ff.pref : ff.plain) as LaunchedFirefox;
        const page = await browser.browser.newPage();
        await page.goto(pages.url('meeting.html'));
        await pageWaitFor(page, 'the meeting page', () => window.ready !== undefined);
        await page.evaluate(() => window.ready);
        await waitFor('Firefox capturing', async () => ((await firefoxRecords()) > 0 ? true : null));
        await new Promise((r) => setTimeout(r, 1500)); // the call settles; the device on past the delay
        const actedAt = Date.now();
        await page.evaluate(spec.script);
        if (spec.pref) {
          await waitFor(
            'Firefox’s record stream gone',
            async () => ((await firefoxRecords()) === 0 ? true : null),
            { timeoutMs: 10_000 },
          );
          // Every released configuration from the same moment: past micoff's hold (QUIET_HOLD_MS after
          // Firefox's release) and past the idle source's suspend (wireplumber's, 5 s after the capture
          // left: a burst at the PipeWire daemon).
          await new Promise((r) => setTimeout(r, Math.max(0, actedAt + SETTLED_MS - Date.now())));
        } else await new Promise((r) => setTimeout(r, 1000));
        const packets = await packetRates(page).catch(() => ({ sent: null, received: null }));
        const report = await sampleCpu({
          browserPid: browser.pid,
          audioServer: true,
          windowS,
          env: rig.clientEnv,
        });
        const playback = (await playbackStreams(rig.pactl))
          .filter(isFirefox)
          .map((p) => `${p.properties['media.name'] ?? '?'}${p.corked ? ' (corked)' : ''}`);
        const f = flatten(report);
        const sample: Sample = {
          round,
          config,
          total_pct: f.total,
          threads: f.threads,
          processes: f.processes,
          wakeups_per_s: f.wakeups,
          record_streams: await firefoxRecords(),
          playback_streams: playback,
          packets_sent_per_s: packets.sent,
          packets_received_per_s: packets.received,
          report,
        };
        if (round >= 0) samples.push(sample);
        console.error(
          `round ${round} ${config}: ${f.total.toFixed(2)} % (record ${sample.record_streams}, playback ${playback.join(', ') || 'none'}, sent ${packets.sent?.toFixed(0)}/s, received ${packets.received?.toFixed(0)}/s)`,
        );
        await page.evaluate('window.hangUp()').catch(() => {});
        await page.close();
        await waitFor('no Firefox capture between configurations', async () =>
          (await firefoxRecords()) === 0 ? true : null,
        );
      }
    }
  } finally {
    await ff.plain?.close();
    await ff.pref?.close();
    await ff.micoff?.close();
    await pages.close();
    await rig.stop();
  }

  // Medians per configuration: total, per process, per thread (threads over 0.1 % in some configuration).
  const of = (c: Config) => samples.filter((s) => s.config === c);
  const med = (c: Config, pick: (s: Sample) => number) => median(of(c).map(pick));
  const keys = (pick: (s: Sample) => Record<string, number>) =>
    [...new Set(samples.flatMap((s) => Object.keys(pick(s))))].sort();
  const threadKeys = keys((s) => s.threads).filter((k) =>
    configs.some((c) => med(c, (s) => s.threads[k] ?? 0) >= 0.1),
  );
  const col = (x: string) => x.padStart(11);
  const lines = [
    `${''.padEnd(48)}${configs.map(col).join('')}`,
    `${'total (browser + audio server)'.padEnd(48)}${configs.map((c) => col(med(c, (s) => s.total_pct).toFixed(2))).join('')}`,
    `${'  ÷ muted'.padEnd(48)}${configs.map((c) => col((med(c, (s) => s.total_pct) / med('muted', (s) => s.total_pct)).toFixed(2))).join('')}`,
    `${'wakeups/s'.padEnd(48)}${configs.map((c) => col(med(c, (s) => s.wakeups_per_s).toFixed(0))).join('')}`,
    `${'packets sent/s'.padEnd(48)}${configs.map((c) => col(med(c, (s) => s.packets_sent_per_s ?? Number.NaN).toFixed(0))).join('')}`,
    ...keys((s) => s.processes).map(
      (k) =>
        `${k.slice(0, 47).padEnd(48)}${configs.map((c) => col(med(c, (s) => s.processes[k] ?? 0).toFixed(2))).join('')}`,
    ),
    '',
    ...threadKeys.map(
      (k) =>
        `${k.slice(0, 47).padEnd(48)}${configs.map((c) => col(med(c, (s) => s.threads[k] ?? 0).toFixed(2))).join('')}`,
    ),
  ];
  const playback = Object.fromEntries(
    configs.map((c) => [c, [...new Set(of(c).flatMap((s) => s.playback_streams))]]),
  );
  console.log(lines.join('\n'));
  console.log(`playback streams: ${JSON.stringify(playback)}`);
  const file = saveArtifact(`firefox-floor-${server}.json`, { server, rounds, window_s: windowS, samples });
  console.log(`raw: ${file}`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
