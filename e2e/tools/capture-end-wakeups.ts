// What wakes in Chromium's renderers once a capture ends: per second, CPU ticks and context switches
// of each renderer of one headless Chromium (the page's, micoff's extension process, the browser's own
// top-chrome WebUI), after the meeting page captured for a while and then either micoff released the
// muted microphone or, without micoff, the page stopped its track; and which WebUI documents the
// top-chrome renderer holds (CDP Target.getTargets). Threads that end drop out of the sums, so a
// renderer whose capture threads end reads negative in that second. Not part of the suite:
//   npm run build && cargo build --release -p micoff-host
//   node --import tsx e2e/tools/capture-end-wakeups.ts [--micoff] [--capture S] [--after S]
// Figures and why: docs/design/firefox-install.md "A renderer that wakes in the demo's released phase".
import { readdirSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { startAudioRig } from '../rig/audio-rig.ts';
import { extensionServiceWorker, launchChromium } from '../rig/chromium.ts';
import { extensionId } from '../rig/host.ts';
import { MeetingPage } from '../rig/meeting-page.ts';
import { startPageServer } from '../rig/page-server.ts';
import { setReleaseSettings } from '../tests/release-util.ts';

const { values: args } = parseArgs({
  options: {
    micoff: { type: 'boolean', default: false },
    capture: { type: 'string', default: '20' },
    after: { type: 'string', default: '20' },
  },
});
const captureS = Number(args.capture);
const afterS = Number(args.after);
if (!(captureS >= 1 && afterS >= 1)) {
  console.error('capture-end-wakeups: --capture and --after must be seconds >= 1');
  process.exit(2);
}

/** The renderers of the profile, by kind (Chromium rewrites its command line: one string). */
function renderers(userDataDir: string): Map<number, string> {
  const out = new Map<number, string>();
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    let cmd: string;
    try {
      cmd = readFileSync(`/proc/${e}/cmdline`, 'utf8').replaceAll('\0', ' ');
    } catch {
      continue;
    }
    if (!cmd.includes('--type=renderer') || !cmd.includes(`--user-data-dir=${userDataDir}`)) continue;
    const kind = cmd.includes('--top-chrome-webui')
      ? 'top-chrome-webui'
      : cmd.includes('--extension-process')
        ? 'extension'
        : 'renderer';
    out.set(Number(e), kind);
  }
  return out;
}

/** CPU ticks (utime + stime) and context switches (voluntary + involuntary) of all of a process's threads. */
function counters(pid: number): { ticks: number; switches: number } {
  let ticks = 0;
  let switches = 0;
  let tasks: string[] = [];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {}
  for (const t of tasks) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${t}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(f[11]) + Number(f[12]);
      const status = readFileSync(`/proc/${pid}/task/${t}/status`, 'utf8');
      for (const m of status.matchAll(/^(?:non)?voluntary_ctxt_switches:\s+(\d+)$/gm))
        switches += Number(m[1]);
    } catch {} // a thread gone between the listing and the read
  }
  return { ticks, switches };
}

const rig = await startAudioRig('pulseaudio', {});
const pages = await startPageServer();
const browser = await launchChromium({ env: rig.clientEnv, withExtension: args.micoff });
try {
  if (args.micoff) {
    const sw = await extensionServiceWorker(browser.context, extensionId());
    await setReleaseSettings(sw, { releaseOnMute: true, releaseDelayMs: 0 });
  }
  const meeting = await MeetingPage.open(browser.context, pages.url('meeting.html'));
  await meeting.ready();
  await meeting.waitForAudioFlowing();
  const cdp = await browser.context.browser()?.newBrowserCDPSession();
  const targets = (await cdp?.send('Target.getTargets'))?.targetInfos ?? [];
  for (const t of targets.filter((t) => t.type === 'browser_ui'))
    console.log(`browser UI: ${t.url} (${t.title})`);
  await new Promise((r) => setTimeout(r, captureS * 1000));
  const kinds = renderers(browser.userDataDir);
  let before = new Map([...kinds.keys()].map((p) => [p, counters(p)]));
  if (args.micoff) await meeting.mute();
  else await meeting.stopTrack();
  console.log(
    `captured ${captureS} s, then ${args.micoff ? "micoff's release (muted)" : 'the page stopped its track'}`,
  );
  console.log(`s  ${[...kinds].map(([p, k]) => `${k}[${p}] ticks/switches`).join('  ')}`);
  for (let s = 1; s <= afterS; s++) {
    await new Promise((r) => setTimeout(r, 1000));
    const now = new Map([...kinds.keys()].map((p) => [p, counters(p)]));
    const row = [...kinds.keys()].map((p) => {
      const a = before.get(p);
      const b = now.get(p);
      return a && b ? `${b.ticks - a.ticks}/${b.switches - a.switches}` : '?';
    });
    console.log(`${s}  ${row.join('  ')}`);
    before = now;
  }
} finally {
  await browser.close();
  await pages.close();
  await rig.stop();
}
