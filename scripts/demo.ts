// `npm run demo` (after scripts/demo.sh has installed and built): a call on the real-audio rig measured
// per phase (unmuted, muted, muted with micoff, the far end playing at the default and a longer capture
// latency) with `micoff-host sample`; `--browser firefox|both` for Firefox ESR; table, JSON, HTML chart.
//   tsx scripts/demo.ts [--browser chromium|firefox|both] [--window S] [--server pulseaudio|pipewire]
//                       [--reader] [--no-micoff] [--capture-ms N] [--out DIR]
// Phases in detail: docs/test-rig.md#demo-script.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseArgs } from 'node:util';
import type { Page } from 'puppeteer-core';
import { type AudioRig, type AudioServerKind, startAudioRig } from '../e2e/rig/audio-rig.ts';
import { applyCaptureLatency, latencyXdg, waitChromiumGrantsUs } from '../e2e/rig/capture-latency.ts';
import { extensionServiceWorker, launchChromium } from '../e2e/rig/chromium.ts';
import {
  backgroundTabs,
  firefoxMissing,
  type LaunchedFirefox,
  launchFirefox,
  updateSettings,
} from '../e2e/rig/firefox.ts';
import { extensionId, requireHost, sampleCpu } from '../e2e/rig/host.ts';
import { MeetingPage, type PageLike } from '../e2e/rig/meeting-page.ts';
import {
  isChromium,
  isFirefox,
  type PactlInfo,
  type PlaybackStream,
  playbackStreams,
} from '../e2e/rig/pactl.ts';
import { type PageServer, startPageServer } from '../e2e/rig/page-server.ts';
import { CHROMIUM, FIREFOX, ROOT } from '../e2e/rig/paths.ts';
import { run as runCmd, waitFor } from '../e2e/rig/proc.ts';
import { ExtensionWorker } from '../e2e/rig/service-worker.ts';
import { FIREFOX_RELEASE_PREF, QUIET_HOLD_MS } from '../extension/src/shared/firefox-release.ts';
import { DEFAULT_SETTINGS } from '../extension/src/shared/settings.ts';
import { renderHtml } from './demo/chart.ts';
import {
  browserTitle,
  buildRows,
  compareRuns,
  formatComparison,
  formatSummary,
  formatTable,
  type PhaseSpec,
  type Run,
} from './demo/report.ts';

const BROWSERS = ['chromium', 'firefox', 'both'] as const;
/** Firefox's release delay: micoff's own default, as `micoff-host install --firefox-release` writes it. */
const FIREFOX_DELAY_MS = DEFAULT_SETTINGS.releaseDelayMs;

const USAGE = `usage: npm run demo -- [--browser chromium|firefox|both] [--window S] [--server pulseaudio|pipewire] [--reader] [--no-micoff] [--capture-ms N] [--out DIR]
  --browser B    chromium (default): Debian's Chromium with micoff: unmuted / muted / muted with
                 micoff's release. firefox: Debian's Firefox ESR (package firefox-esr):
                 unmuted / muted as it comes (its own release pref off, no micoff) / unmuted, muted
                 with Firefox's release, muted with Firefox's release and micoff's part, in a Firefox
                 with micoff started after \`micoff-host install --firefox-release\` switched the pref on
                 in its profile (delay: micoff's default, ${FIREFOX_DELAY_MS} ms). both: Chromium, then Firefox,
                 on the same audio server, then their totals side by side. A browser that cannot run
                 (${FIREFOX} missing) is reported and the other still runs (exit status 1).
  --window S     seconds per phase (default 10)
  --server K     the rig's audio server (default pulseaudio)
  --reader       keep the rig's low-latency parec reader on the mic (off by default: its own load at the
                 server would hide what the browser costs there, most of all once micoff released the mic)
  --no-micoff    skip micoff's phases (Chromium: muted with micoff's release; Firefox: the second
                 Firefox, with the pref and micoff)
  --capture-ms N the capture latency of Chromium's last phase, "unmuted, far end playing, capture latency
                 N ms", compared with the same call at the default (20..200, default 40; 0 skips both),
                 set with \`micoff-host latency set\` on the rig's server
  --out DIR      results folder (default results/demo-<timestamp>)`;

/** The options, or a usage error (exit 2) naming the one that is wrong. */
function parseOptions() {
  try {
    return parseArgs({
      options: {
        browser: { type: 'string', default: 'chromium' },
        window: { type: 'string', default: '10' },
        server: { type: 'string', default: 'pulseaudio' },
        reader: { type: 'boolean', default: false },
        'no-micoff': { type: 'boolean', default: false },
        'capture-ms': { type: 'string', default: '40' },
        out: { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
    }).values;
  } catch (e) {
    console.error(`demo: ${e instanceof Error ? e.message : String(e)}\n${USAGE}`);
    process.exit(2);
  }
}
const args = parseOptions();
// Every value is checked before --help answers, so `<options> --help` tells whether the options are valid.
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
if (!(BROWSERS as readonly string[]).includes(args.browser)) {
  console.error(`--browser must be ${BROWSERS.join(', ')}\n${USAGE}`);
  process.exit(2);
}
const browsers: ('chromium' | 'firefox')[] =
  args.browser === 'both' ? ['chromium', 'firefox'] : [args.browser as 'chromium' | 'firefox'];
const captureMs = Number(args['capture-ms']);
if (!Number.isInteger(captureMs) || (captureMs !== 0 && (captureMs < 20 || captureMs > 200))) {
  console.error(`--capture-ms must be 0 (skip) or 20..200\n${USAGE}`);
  process.exit(2);
}
if (args.help) {
  console.log(USAGE);
  process.exit(0);
}
const log = (m: string) => console.error(`demo: ${m}`);

/** Browsers open right now: closed by the cleanup on a signal or at the end. */
const open = new Set<{ close(): Promise<void> }>();
async function closeBrowser(b: { close(): Promise<void> } | null): Promise<void> {
  if (!b) return;
  open.delete(b);
  await b.close();
}

/** The far end's mean playout delay over the call so far, ms (echo.html's media-playout statistics:
 * the playout path to the device, its latency as the browser's audio output reports it). */
async function farEndPlayoutMs(call: MeetingPage): Promise<number | null> {
  const p = await call.page.evaluate(() =>
    (
      window as unknown as {
        farEndPlayout(): Promise<{
          playout: { totalPlayoutDelay: number | null; totalSamplesCount: number | null } | null;
        }>;
      }
    ).farEndPlayout(),
  );
  const delay = p.playout?.totalPlayoutDelay;
  const count = p.playout?.totalSamplesCount;
  return typeof delay === 'number' && count ? Math.round((1000 * delay) / count) : null;
}

/** One browser's configuration: the rig, the pages, and its run, whose phases are kept when it fails part-way. */
interface Ctx {
  rig: AudioRig;
  pages: PageServer;
  run: Run;
}

/** One `micoff-host sample` over the browser's tree and the audio server, as a phase of `run`. */
async function measure(ctx: Ctx, browserPid: number, spec: PhaseSpec): Promise<void> {
  log(`${spec.label}: measuring ${windowS} s`);
  const report = await sampleCpu({ browserPid, audioServer: true, windowS, env: ctx.rig.clientEnv });
  ctx.run.phases.push({ ...spec, window_s: windowS, report });
}

const MEETING_NOTES = [
  'Meeting: getUserMedia({audio: true}) (default processing) sent over an RTCPeerConnection loopback on one page, playing nothing (but in the far-end phases, where there are).',
  'Muted = track.enabled = false (what most meeting apps do).',
  'Processes idle in every phase are left out of the table (they are in results.json).',
];
const rigNote = () =>
  'The audio server also serves the rig: a test-signal player (pacat into the null sink)' +
  (args.reader ? ' and a 10 ms reader on the mic (parec), in every phase.' : ', in every phase.');

async function chromiumRun(ctx: Ctx): Promise<void> {
  const { rig, pages, run } = ctx;
  log('launching Chromium with the extension');
  let chromium: Awaited<ReturnType<typeof launchChromium>> | null = await launchChromium({
    env: rig.clientEnv,
  });
  open.add(chromium);
  try {
    const browserPid = await chromium.browserPid();
    const version = /(\d+\.\d+\.\d+\.\d+)/.exec((await runCmd(CHROMIUM, ['--version'])).stdout)?.[1] ?? null;
    run.scenario.browser_version = version;

    const meeting = await MeetingPage.open(chromium.context, pages.url('meeting.html'));
    await meeting.ready();
    await meeting.waitForAudioFlowing();
    const streams = (await rig.recordStreams()).filter(isChromium);
    if (streams.length === 0)
      throw new Error('the meeting is up but Chromium has no record stream at the server');

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
    await measure(ctx, browserPid, { id: 'unmuted', label: 'unmuted', short: 'unmuted', state: 'unmuted' });

    // Phase 2: muted the way meeting apps do it (track.enabled = false), micoff's release off: what
    // Chromium does on its own (it keeps the device open, crbug 642785).
    const muted = await meeting.mute();
    if (muted?.enabled !== false) throw new Error('mute() did not disable the track');
    await meeting.waitForSilence();
    const openWhileMuted = await chromiumStreamOpen();
    await measure(ctx, browserPid, {
      id: 'muted',
      label: hasRelease ? 'muted, without micoff' : 'muted',
      short: 'muted',
      state: 'muted',
    });

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
      await measure(ctx, browserPid, {
        id: 'muted_micoff',
        label: 'muted, with micoff',
        short: 'muted+micoff',
        state: 'released',
      });
    }

    // Phases 4 and 5: a call whose far end plays (echo.html: a far end received over WebRTC and played on
    // the default sink, which the rig's loopback carries into the mic's sink, as on one sound card),
    // unmuted at the browser's default capture latency and then at a longer one, applied the way a user
    // applies it: `micoff-host latency set` on the rig's server, then the restart its result names (the
    // browser's launch environment on PulseAudio; on pipewire-pulse the server's rule, which raises
    // Chromium's playback quantum with the capture's). A real meeting plays the far end: without it the
    // longer capture latency would look cheaper than it is (docs/design/capture-latency.md). Chromium is
    // relaunched for each (new processes: new rows in the table).
    let grantedUs: number[] = [];
    let mechanism = '';
    let echoCancellation: boolean | null = null;
    let playoutMs: { default: number | null; raised: number | null } = { default: null, raised: null };
    if (captureMs > 0) {
      await meeting.hangUp();
      await closeBrowser(chromium);
      chromium = null;
      await waitFor('no capture from the first browser', async () => !(await chromiumStreamOpen()), {
        timeoutMs: 10_000,
        intervalMs: 100,
      });
      const xdg = latencyXdg(rig);
      /** One call with the far end playing in a fresh Chromium, measured as a phase. */
      const farEndCall = async (env: NodeJS.ProcessEnv, spec: PhaseSpec) => {
        chromium = await launchChromium({ env });
        open.add(chromium);
        const call = await MeetingPage.open(chromium.context, pages.url('echo.html'));
        await call.ready();
        await call.waitForAudioFlowing();
        const granted = await waitChromiumGrantsUs(rig, xdg);
        const bPid = await chromium.browserPid();
        // A browser just launched is still warming up (first page, JIT): let it settle like the first one did.
        await new Promise((r) => setTimeout(r, 3000));
        await measure(ctx, bPid, spec);
        const playout = await farEndPlayoutMs(call);
        const settings = (await call.stats()).track?.settings.echoCancellation ?? null;
        await call.hangUp();
        await closeBrowser(chromium);
        chromium = null;
        await waitFor('no capture between the calls', async () => !(await chromiumStreamOpen()), {
          timeoutMs: 10_000,
          intervalMs: 100,
        });
        return { playout, settings, granted };
      };
      playoutMs.default = (
        await farEndCall(rig.clientEnv, {
          id: 'unmuted_far_end',
          label: 'unmuted, far end playing',
          short: 'unmuted+far',
        })
      ).playout;
      log(`micoff-host latency set --capture-ms ${captureMs} --browser chromium (${rig.kind})`);
      const applied = await applyCaptureLatency(rig, captureMs, xdg);
      mechanism = applied.set.mechanism ?? 'none';
      try {
        const raised = await farEndCall(applied.env, {
          id: `unmuted_far_end_${captureMs}ms`,
          label: `unmuted, far end playing, capture latency ${captureMs} ms`,
          short: `unmuted+far ${captureMs}ms`,
        });
        playoutMs = { ...playoutMs, raised: raised.playout };
        echoCancellation = raised.settings;
        grantedUs = raised.granted;
      } finally {
        // Back to the browser's default for whatever runs next on this server (Firefox in `--browser both`).
        await closeBrowser(chromium);
        chromium = null;
        await applyCaptureLatency(rig, null, xdg);
      }
    }

    run.scenario.notes = [
      ...MEETING_NOTES,
      `Chromium's record stream while muted${hasRelease ? ' without micoff' : ''}: ${openWhileMuted ? 'still open' : 'closed'}.`,
      ...(releasedWithMicoff === null
        ? []
        : [
            `Muted with micoff (release on mute, no delay): record stream ${releasedWithMicoff ? 'closed' : 'STILL OPEN (micoff did not release)'}.`,
          ]),
      ...(captureMs > 0
        ? [
            `Unmuted, far end playing (echo.html: a far end received over WebRTC, played on the default sink, which the rig's loopback carries into the mic's sink, as on one sound card), at the default and at capture latency ${captureMs} ms: set by \`micoff-host latency set\` (${mechanism}; ${rig.kind === 'pipewire' ? "pipewire-pulse restarted to read its rule, which also gives Chromium's playback a minimum quantum" : 'Chromium relaunched with the environment of its desktop entry copy; playback latency grows too'}); the server granted Chromium's record stream ${grantedUs.map((u) => `${u / 1000} ms`).join(', ') || 'nothing'}; echo cancellation ${echoCancellation === null ? 'unknown' : echoCancellation ? 'on' : 'OFF'} (getSettings); the far end's playout delay ${playoutMs.default ?? '?'} ms at the default, ${playoutMs.raised ?? '?'} ms at ${captureMs} ms (media-playout).`,
          ]
        : []),
      rigNote(),
    ];
  } finally {
    await closeBrowser(chromium);
  }
}

async function firefoxRun(ctx: Ctx): Promise<void> {
  const { rig, pages, run } = ctx;
  const missing = firefoxMissing();
  if (missing) throw new Error(missing);
  run.scenario.browser_version =
    /Firefox\s+(\S+)/.exec((await runCmd(FIREFOX, ['--version'], { env: rig.clientEnv })).stdout)?.[1] ??
    null;
  const firefoxStreams = async () => (await rig.recordStreams()).filter(isFirefox);
  // The same meeting page as Chromium's; Firefox's capture shows as its record stream at the server.
  const openCall = async (ff: LaunchedFirefox) => {
    const url = pages.url('meeting.html');
    const page = await ff.browser.newPage();
    await page.goto(url);
    const meeting = new MeetingPage(page, url);
    await meeting.ready();
    await meeting.waitForAudioFlowing();
    return waitFor('Firefox’s record stream running at the server', async () =>
      (await firefoxStreams()).find((s) => !s.corked) ? meeting : null,
    );
  };

  // Firefox as it comes: its own release pref off (the default since Firefox 84), no micoff.
  log('launching Firefox ESR as it comes (no micoff)');
  let ff: LaunchedFirefox | null = await launchFirefox({ env: rig.clientEnv, withExtension: false });
  open.add(ff);
  let grantedUs: (number | null)[] = [];
  let openAfterMuted: boolean;
  try {
    const meeting = await openCall(ff);
    grantedUs = (await firefoxStreams()).map((s) => s.bufferLatencyUs);
    await measure(ctx, ff.pid, { id: 'unmuted', label: 'unmuted', short: 'unmuted', state: 'unmuted' });
    const muted = await meeting.mute();
    if (muted?.enabled !== false) throw new Error('mute() did not disable the track');
    await meeting.waitForSilence();
    await measure(ctx, ff.pid, {
      id: 'muted',
      label: 'muted, without the pref',
      short: 'muted',
      state: 'muted',
    });
    openAfterMuted = (await firefoxStreams()).length > 0;
  } finally {
    await closeBrowser(ff);
    ff = null;
  }

  // The pref switched on the way a user does it: `micoff-host install --firefox-release` into the
  // profile's user.js, read by Firefox at its start (so a second launch, with new processes), and micoff
  // loaded: muted with Firefox's release alone (micoff's release setting off), then with micoff's part
  // too (the muted call's senders off the wire, page/firefox/quiet.ts).
  let releasedAfterMs: number | null = null;
  let quietAfterMs: number | null = null;
  let playbackWhileReleased: PlaybackStream[] = [];
  const install = `micoff-host install --browser firefox --firefox-release --firefox-profile <profile> --release-delay-ms ${FIREFOX_DELAY_MS}`;
  if (!args['no-micoff']) {
    await waitFor('no capture from the first Firefox', async () => (await firefoxStreams()).length === 0, {
      timeoutMs: 10_000,
      intervalMs: 100,
    });
    log(`launching Firefox ESR with micoff on a profile after \`${install}\``);
    ff = await launchFirefox({
      env: rig.clientEnv,
      nativeRelease: { delayMs: FIREFOX_DELAY_MS, installer: true },
    });
    open.add(ff);
    try {
      const options = await ff.openExtensionPage('options.html');
      const micoffPart = (on: boolean) =>
        updateSettings(options, { releaseOnMute: on, releaseDelayMs: FIREFOX_DELAY_MS });
      await micoffPart(false);
      const meeting = await openCall(ff);
      // The same course as the first Firefox (unmuted for a window, then muted), so both muted windows
      // find their browser equally far from its start; it also shows the pref costs nothing unmuted.
      await measure(ctx, ff.pid, {
        id: 'unmuted_pref',
        label: 'unmuted, with the pref',
        short: 'unmuted+pref',
      });
      const mutedAt = Date.now();
      await meeting.mute();
      // Firefox releases once the device has been on for the delay (at once after a window that long).
      releasedAfterMs = await waitFor(
        'Firefox to release the microphone',
        async () => ((await firefoxStreams()).length === 0 ? Date.now() - mutedAt : null),
        { timeoutMs: FIREFOX_DELAY_MS + 10_000, intervalMs: 50 },
      ).catch(() => null);
      await measure(ctx, ff.pid, {
        id: 'muted_pref',
        label: "muted, Firefox's release",
        short: 'muted+pref',
      });
      playbackWhileReleased = (await playbackStreams(rig.pactl)).filter(isFirefox);

      // micoff's part on top: unmuted, then the same mute again; micoff takes the senders off the wire
      // QUIET_HOLD_MS after Firefox's release (which waits until the device has been on for the delay).
      await meeting.unmute();
      await meeting.waitForAudioFlowing();
      await micoffPart(true);
      const again = Date.now();
      await meeting.mute();
      quietAfterMs = await whenSenderQuiet(meeting, options, FIREFOX_DELAY_MS + QUIET_HOLD_MS + 10_000)
        .then((at) => at - again)
        .catch(() => null);
      await measure(ctx, ff.pid, {
        id: 'muted_micoff',
        label: "muted, Firefox's release + micoff",
        short: 'muted+micoff',
        state: 'released',
      });
    } finally {
      await closeBrowser(ff);
    }
  }

  run.scenario.capture_latency = `browser default (the server granted ${grantedUs.map((u) => (u === null ? '?' : `${u / 1000} ms`)).join(', ') || 'nothing'})`;
  run.scenario.notes = [
    ...MEETING_NOTES,
    `Firefox's record stream after the muted window without the pref (${FIREFOX_RELEASE_PREF}.enabled false, Firefox's default; no micoff): ${openAfterMuted ? 'still open' : 'closed'}.`,
    ...(args['no-micoff']
      ? []
      : [
          `Muted with the pref: a second Firefox, started on a fresh profile after \`${install}\` wrote ${FIREFOX_RELEASE_PREF}.enabled = true and .delay_ms = ${FIREFOX_DELAY_MS} into its user.js, with micoff (dist/firefox) loaded; unmuted for a window, then muted with micoff's release setting off (Firefox's release alone): record stream ${releasedAfterMs === null ? 'STILL OPEN (the pref did not release)' : `closed ${releasedAfterMs} ms after the mute (Firefox keeps the device until it has been on for the delay)`}; Firefox's playback streams at the server after that window (the page plays nothing): ${playbackWhileReleased.map((p) => `"${p.properties['media.name'] ?? '?'}" (${p.bufferLatencyUs === null ? '?' : `${Math.round(p.bufferLatencyUs / 1000)} ms`})`).join(', ') || 'none'}.`,
          `Muted with the pref and micoff's part (its release setting on): unmuted again, the same mute; micoff took the call's sender off the wire ${quietAfterMs === null ? 'NOT AT ALL (packets kept flowing)' : `${quietAfterMs} ms after the mute`} (Firefox's release, then ${QUIET_HOLD_MS} ms; page/firefox/quiet.ts).`,
        ]),
    rigNote(),
  ];
}

/** When micoff took the muted call's senders off the wire, as the page world reported it to the background
 * (the tab's `quiet_since_ms`, read through `extensionPage`), once the sender's packet count stands still
 * too. Not the packet count alone: Firefox refreshes an outbound-rtp's counters irregularly, so a count
 * that stands still for a moment says nothing. */
async function whenSenderQuiet(
  meeting: MeetingPage<PageLike>,
  extensionPage: Page,
  timeoutMs: number,
): Promise<number> {
  const quietSince = await waitFor(
    'micoff to take the muted call’s senders off the wire (the tab’s quiet_since_ms)',
    async () =>
      Object.values(await backgroundTabs(extensionPage)).find((v) => v.quiet_since_ms)?.quiet_since_ms ??
      null,
    { timeoutMs, intervalMs: 100 },
  );
  const sent = async () => (await meeting.stats()).outbound?.packetsSent ?? 0;
  const before = await sent();
  await new Promise((r) => setTimeout(r, 1500));
  if ((await sent()) > before + 2)
    throw new Error('the sender kept sending after micoff took it off the wire');
  return quietSince;
}

async function main(): Promise<number> {
  requireHost();
  const created = new Date();
  const stamp = created.toISOString().replace(/[:.]/g, '-').replace(/Z$/, '');
  const outDir = args.out ?? join(ROOT, 'results', `demo-${stamp}`);

  log(`starting the ${serverKind} rig`);
  // The loopback echo path: what the browser plays reaches the mic's sink, as on one sound card (the far-end
  // phases play; the meeting page of the others plays nothing).
  const rig = await startAudioRig(serverKind, { reader: args.reader, echoPath: 'loopback' });
  const pages = await startPageServer();
  const cleanup = async () => {
    for (const b of [...open]) await closeBrowser(b).catch(() => {});
    await pages.close();
    await rig.stop();
  };
  const onSignal = () => {
    void cleanup().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    const info: PactlInfo = await rig.info();
    const runs: Run[] = [];
    for (const browser of browsers) {
      const run: Run = {
        scenario: {
          browser,
          browser_version: null,
          server: { kind: serverKind, name: info.serverName, version: info.serverVersion },
          capture_latency: browser === 'chromium' ? 'default (10 ms, processed capture)' : 'browser default',
          notes: [],
        },
        phases: [],
        rows: [],
      };
      const ctx: Ctx = { rig, pages, run };
      try {
        await (browser === 'chromium' ? chromiumRun(ctx) : firefoxRun(ctx));
      } catch (e) {
        run.error = e instanceof Error ? e.message : String(e);
        log(`${browserTitle(run.scenario)} failed: ${run.error}`);
      }
      run.rows = buildRows(run.phases);
      runs.push(run);
    }
    const failed = runs.filter((r) => r.error);
    if (runs.every((r) => r.phases.length === 0)) {
      throw new Error(failed.map((r) => `${browserTitle(r.scenario)}: ${r.error}`).join('; '));
    }

    // The summary first (per run: each phase's browser + audio server and its saving), then the details.
    const summaries = runs.map(formatSummary).filter((t) => t !== '');
    const texts: string[] = [];
    if (summaries.length > 0) {
      const summary = `summary\n\n${summaries.join('\n\n')}`;
      console.log(`\n${summary}`);
      texts.push(summary);
    }
    for (const run of runs) {
      const title = `micoff demo: ${browserTitle(run.scenario)} on ${info.serverName} ${info.serverVersion}, ${windowS} s per phase (CPU in % of one core)`;
      const table = formatTable(run.phases, run.rows);
      if (run.phases.length > 0) {
        console.log(`\n${title}\n`);
        console.log(table);
        console.log('');
        for (const n of run.scenario.notes) console.log(`- ${n}`);
        texts.push(runs.length > 1 ? `${title}\n\n${table}` : table);
      }
      if (run.error) {
        const line = `${browserTitle(run.scenario)}: FAILED: ${run.error}`;
        console.log(`\n${line}`);
        texts.push(line);
      }
    }
    const comparison = compareRuns(runs);
    if (comparison.length > 0) {
      const side = formatComparison(comparison);
      console.log(
        '\nside by side (totals of the browser tree and the audio server, CPU in % of one core; released = micoff in Chromium, its own pref and micoff’s part in Firefox):\n',
      );
      console.log(side);
      texts.push(`side by side\n\n${side}`);
    }

    mkdirSync(outDir, { recursive: true });
    const command = `npm run demo -- ${process.argv.slice(2).join(' ')}`.trim();
    const doc = {
      schema: 'micoff-demo/1',
      created: created.toISOString(),
      command,
      runs,
      ...(comparison.length > 0 ? { comparison } : {}),
    };
    writeFileSync(join(outDir, 'results.json'), `${JSON.stringify(doc, null, 2)}\n`);
    writeFileSync(join(outDir, 'table.txt'), `${texts.join('\n\n')}\n`);
    writeFileSync(
      join(outDir, 'chart.html'),
      renderHtml(runs, { created: created.toISOString(), command, comparison }),
    );
    const rel = relative(process.cwd(), outDir) || '.';
    console.log(
      `\nresults: ${rel}/results.json (figures + raw reports), ${rel}/chart.html (chart), ${rel}/table.txt`,
    );
    return failed.length > 0 ? 1 : 0;
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
