// Two builds of micoff side by side in one call, unmuted and then muted (a bench, outside npm test):
//   MICOFF_BENCH_BUILD=<dir> npx playwright test -c e2e build-cost --project pulseaudio
// <dir> holds another build (<dir>/chrome, <dir>/micoff-host); per-process CPU of each browser tree
// (host included) over paired windows. Method: docs/design/popup-savings.md#build-cost-bench.
// Medians in the log and e2e/artifacts/build-cost.json.
import { join } from 'node:path';
import { startAudioRig } from '../rig/audio-rig.ts';
import { type LaunchedChromium, launchChromium } from '../rig/chromium.ts';
import { expect, test } from '../rig/fixtures.ts';
import { MeetingPage } from '../rig/meeting-page.ts';
import {
  median,
  PAIRED_WINDOWS,
  type PairedWindow,
  pairedWindows,
  saveArtifact,
  whenStreams,
} from './release-util.ts';

const OTHER = process.env.MICOFF_BENCH_BUILD;
const WINDOW_S = Number(process.env.MICOFF_BENCH_WINDOW_S ?? 10);
/** Past a change of state: both backgrounds told, both hosts past a sample of the new phase. */
const SETTLE_MS = 15_000;

test.skip(({ audioServer }) => audioServer !== 'pulseaudio', 'own PulseAudio rig: PulseAudio project only');

/** Medians of the paired windows: whole trees and per process (role:comm). */
function summary(paired: PairedWindow[]) {
  const keys = [
    ...new Set(paired.flatMap((p) => Object.keys({ ...p.with_by_process, ...p.without_by_process }))),
  ];
  return {
    windows: paired.length,
    median_other_pct: median(paired.map((p) => p.with_pct)),
    median_this_pct: median(paired.map((p) => p.without_pct)),
    median_ratio_other_over_this: median(paired.map((p) => p.ratio)),
    median_diff_pct: median(paired.map((p) => p.with_pct - p.without_pct)),
    by_process: Object.fromEntries(
      keys.sort().map((k) => {
        const diffs = paired.map((p) => (p.with_by_process[k] ?? 0) - (p.without_by_process[k] ?? 0));
        return [
          k,
          {
            other_pct: median(paired.map((p) => p.with_by_process[k] ?? 0)),
            this_pct: median(paired.map((p) => p.without_by_process[k] ?? 0)),
            median_diff_pct: median(diffs),
          },
        ];
      }),
    ),
  };
}

test('CPU of two builds of micoff in the same call, unmuted and muted (bench)', async ({ pages }) => {
  test.skip(!OTHER, 'a bench: MICOFF_BENCH_BUILD=<dir with chrome/ and micoff-host> runs it');
  const other = OTHER as string;
  test.setTimeout(180_000 + 2 * PAIRED_WINDOWS * (WINDOW_S + 3) * 1000);
  const rig = await startAudioRig('pulseaudio', { reader: false, tone: false });
  const browsers: LaunchedChromium[] = [];
  try {
    const mine = await launchChromium({ env: rig.clientEnv });
    browsers.push(mine);
    const theirs = await launchChromium({
      env: rig.clientEnv,
      extensionDir: join(other, 'chrome'),
      hostBinary: join(other, 'micoff-host'),
    });
    browsers.push(theirs);
    const pids = { with: await theirs.browserPid(), without: await mine.browserPid() };
    const calls = [
      await MeetingPage.open(mine.context, pages.url('meeting.html')),
      await MeetingPage.open(theirs.context, pages.url('meeting.html')),
    ];
    await Promise.all(calls.map((c) => c.ready()));
    await whenStreams(rig, 'both browsers capturing', (n) => n === 2);
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    const unmuted = await pairedWindows(rig, pids, WINDOW_S);

    for (const c of calls) await c.mute();
    // micoff releases both devices after its delay (3 s by default).
    await whenStreams(rig, 'both browsers released', (n) => n === 0, 15_000);
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    const muted = await pairedWindows(rig, pids, WINDOW_S);
    for (const c of calls) await c.hangUp();

    const result = {
      other_build: other,
      window_s: WINDOW_S,
      unmuted: summary(unmuted),
      muted: summary(muted),
      paired: { unmuted, muted },
    };
    saveArtifact('build-cost.json', result);
    console.log(`build-cost: ${JSON.stringify({ ...result, paired: undefined }, null, 1)}`);
    expect(unmuted.length).toBe(PAIRED_WINDOWS);
    expect(muted.length).toBe(PAIRED_WINDOWS);
  } finally {
    for (const b of browsers) await b.close();
    await rig.stop();
  }
});
