// What micoff costs while an unmuted call sits in a background tab: there the capture watch reads on
// the background's ticks (background/ticks.ts), which only run for a hidden page. Both browsers headful
// on a private Xvfb, one call each, its tab behind another tab for longer than Chromium waits before it
// throttles a hidden page's timers; micoff's against the plain browser's in paired windows, with the
// unmuted overhead bars of release-cpu raised by what the ticks cost (HIDDEN_OVERHEAD_OWN,
// HIDDEN_OVERHEAD_TREE). Method and figures: docs/design/faults.md "In a background tab".
// Raw samples: e2e/artifacts/background-cpu.json.
import { SIGNAL_SINK, startAudioRig } from '../rig/audio-rig.ts';
import { extensionServiceWorker, type LaunchedChromium, launchChromium } from '../rig/chromium.ts';
import { expect, test } from '../rig/fixtures.ts';
import { extensionId } from '../rig/host.ts';
import { MeetingPage } from '../rig/meeting-page.ts';
import { need } from '../rig/needs.ts';
import { waitFor } from '../rig/proc.ts';
import { startXvfb, type Xvfb, xvfbMissing } from '../rig/xvfb.ts';
import { BACKGROUND_MS } from './faults-util.ts';
import {
  balancedPairedWindows,
  HIDDEN_OVERHEAD_OWN,
  HIDDEN_OVERHEAD_TREE,
  median,
  ownOverhead,
  PAIRED_WINDOW_S,
  pairedBreakdown,
  saveArtifact,
  setReleaseSettings,
  whenStreams,
} from './release-util.ts';

/** Paired windows, half with each side's audio service the newer (balancedPairedWindows). */
const WINDOWS = Number(process.env.MICOFF_BACKGROUND_CPU_WINDOWS ?? 16);

type Config = 'with' | 'without';

// One rig for both browsers, its own PulseAudio: run it once, in the PulseAudio project.
test.skip(({ audioServer }) => audioServer !== 'pulseaudio', 'own PulseAudio rig: PulseAudio project only');

test('CPU: an unmuted call in a background tab, micoff against the plain browser', async ({ pages }) => {
  need(xvfbMissing());
  test.setTimeout(120_000 + 2 * BACKGROUND_MS + WINDOWS * (PAIRED_WINDOW_S + 2) * 1000);
  const rig = await startAudioRig('pulseaudio', { reader: false, tone: false });
  const browsers: Partial<Record<Config, LaunchedChromium>> = {};
  let x: Xvfb | undefined;
  try {
    x = await startXvfb();
    await rig.playInto(SIGNAL_SINK, 'speech');
    // realFocus: a tab behind another is hidden as for a user (Playwright's own launch keeps every page
    // visible).
    const headful = { display: x.display, realFocus: true, extraArgs: ['--window-size=640,800'] };
    browsers.with = await launchChromium({ env: rig.clientEnv, ...headful });
    browsers.without = await launchChromium({ env: rig.clientEnv, ...headful, withExtension: false });
    const sw = await extensionServiceWorker(browsers.with.context, extensionId());
    await setReleaseSettings(sw, { releaseOnMute: true, releaseDelayMs: 0 });
    const b = browsers as Record<Config, LaunchedChromium>;
    const configs: Config[] = ['with', 'without'];
    const hiddenFor: number[] = [];
    const overhead = await balancedPairedWindows(
      {
        with: { browser: b.with, env: rig.clientEnv },
        without: { browser: b.without, env: rig.clientEnv },
      },
      {
        async up() {
          const calls = {} as Record<Config, MeetingPage>;
          for (const c of configs) {
            calls[c] = await MeetingPage.open(b[c].context, pages.url('meeting.html'));
            await calls[c].ready();
          }
          await whenStreams(rig, 'both calls capturing', (n) => n === 2);
          const fronts = [];
          for (const c of configs) {
            const front = await b[c].context.newPage();
            await front.goto(pages.url('index.html'));
            await front.bringToFront();
            fronts.push(front);
            await waitFor(`${c}'s call hidden`, async () =>
              (await calls[c].page.evaluate('document.visibilityState')) === 'hidden' ? true : null,
            );
          }
          const hidden = Date.now();
          // Past Chromium's delay before it throttles a hidden page's timers: the ticks' case.
          await new Promise((r) => setTimeout(r, BACKGROUND_MS));
          hiddenFor.push(Date.now() - hidden);
          return { calls, fronts };
        },
        async down({ calls, fronts }) {
          for (const f of fronts) await f.close();
          for (const m of Object.values(calls)) {
            await m.hangUp();
            await m.close();
          }
          await whenStreams(rig, 'no capture between the halves', (n) => n === 0, 5000);
        },
      },
      WINDOWS,
    );
    // Still hidden and capturing at the end: the windows measured the case they name.
    for (const c of configs) {
      expect(await overhead.calls.calls[c].page.evaluate('document.visibilityState')).toBe('hidden');
    }
    await whenStreams(rig, 'both calls still capturing', (n) => n === 2, 2000);
    const { paired } = overhead;
    const result = {
      windows: WINDOWS,
      window_s: PAIRED_WINDOW_S,
      hidden_before_ms: hiddenFor,
      overhead_with_over_without: overhead.ratio,
      overhead_halves: overhead.halves,
      overhead_plain_median: median(paired.map((p) => p.ratio)),
      overhead_own_threads: ownOverhead(paired),
      median_pct: {
        with: median(paired.map((p) => p.with_pct)),
        without: median(paired.map((p) => p.without_pct)),
      },
      overhead_breakdown: pairedBreakdown(paired),
      paired,
    };
    saveArtifact('background-cpu.json', result);
    console.log(`background-cpu: ${JSON.stringify({ ...result, paired: undefined })}`);
    for (const m of Object.values(overhead.calls.calls)) await m.hangUp();
    expect
      .soft(result.overhead_own_threads, "hidden call unmuted, micoff's own threads (paired)")
      .toBeLessThanOrEqual(HIDDEN_OVERHEAD_OWN);
    expect
      .soft(result.overhead_with_over_without, 'hidden call unmuted, browser tree (paired)')
      .toBeLessThanOrEqual(HIDDEN_OVERHEAD_TREE);
  } finally {
    await browsers.with?.close();
    await browsers.without?.close();
    await x?.stop();
    await rig.stop();
  }
});
