// Where micoff's cost in an UNMUTED call goes, per process and per thread (a bench, outside npm test):
//   MICOFF_BENCH_UNMUTED=micoff,none npx playwright test -c e2e unmuted-cost --project pulseaudio
// Two sides (micoff, none, background-only, or another build's dir) in one call at once, sampled in
// release-util.ts's paired windows. Sides and method: docs/design/release-on-mute.md#unmuted-cost-bench.
// Raw figures: e2e/artifacts/unmuted-cost-<sides>.json.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startAudioRig } from '../rig/audio-rig.ts';
import { type LaunchedChromium, launchChromium } from '../rig/chromium.ts';
import { expect, test } from '../rig/fixtures.ts';
import { MeetingPage } from '../rig/meeting-page.ts';
import { EXTENSION_DIR } from '../rig/paths.ts';
import {
  median,
  PAIRED_WINDOWS,
  pairedBreakdown,
  pairedWindows,
  saveArtifact,
  whenStreams,
} from './release-util.ts';

const SIDES = process.env.MICOFF_BENCH_UNMUTED?.split(',');
const PAGE = process.env.MICOFF_BENCH_PAGE ?? 'meeting.html';
/** Past the call's start: both backgrounds told, the first host replies sent. */
const SETTLE_MS = 5000;

test.skip(({ audioServer }) => audioServer !== 'pulseaudio', 'own PulseAudio rig: PulseAudio project only');

/** dist/chrome without content scripts, in a temporary folder (removed by the caller). */
function backgroundOnly(): string {
  const dir = mkdtempSync(join(tmpdir(), 'micoff-background-only-'));
  cpSync(EXTENSION_DIR, dir, { recursive: true });
  const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));
  manifest.content_scripts = [];
  writeFileSync(join(dir, 'manifest.json'), JSON.stringify(manifest));
  return dir;
}

test('CPU of an unmuted call, two sides at once, per process and thread (bench)', async ({ pages }) => {
  test.skip(
    SIDES?.length !== 2,
    'a bench: MICOFF_BENCH_UNMUTED=<side>,<side> (micoff, none, background-only or a dir) runs it',
  );
  const sides = SIDES as [string, string];
  test.setTimeout(120_000 + PAIRED_WINDOWS * 5 * 1000);
  const rig = await startAudioRig('pulseaudio', { reader: false, tone: false });
  const browsers: LaunchedChromium[] = [];
  const temp: string[] = [];
  try {
    for (const side of sides) {
      const env = rig.clientEnv;
      if (side === 'none') browsers.push(await launchChromium({ env, withExtension: false }));
      else if (side === 'micoff') browsers.push(await launchChromium({ env }));
      else {
        const dir = side === 'background-only' ? backgroundOnly() : side;
        if (side === 'background-only') temp.push(dir);
        browsers.push(await launchChromium({ env, extensionDir: dir }));
      }
    }
    const [first, second] = browsers as [LaunchedChromium, LaunchedChromium];
    const calls = [
      await MeetingPage.open(first.context, pages.url(PAGE)),
      await MeetingPage.open(second.context, pages.url(PAGE)),
    ];
    await Promise.all(calls.map((c) => c.ready()));
    await whenStreams(rig, 'both browsers capturing', (n) => n === 2);
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    const paired = await pairedWindows(rig, {
      with: await first.browserPid(),
      without: await second.browserPid(),
    });
    for (const c of calls) await c.hangUp();

    const ratios = paired.map((p) => p.ratio);
    const result = {
      sides,
      page: PAGE,
      windows: paired.length,
      median_with_pct: median(paired.map((p) => p.with_pct)),
      median_without_pct: median(paired.map((p) => p.without_pct)),
      median_ratio: median(ratios),
      ratio_range: [Math.min(...ratios), Math.max(...ratios)],
      ...pairedBreakdown(paired),
    };
    saveArtifact(`unmuted-cost-${sides.map((s) => s.replace(/\W+/g, '_')).join('-')}.json`, {
      ...result,
      paired,
    });
    console.log(`unmuted-cost: ${JSON.stringify(result, null, 1)}`);
    expect(paired.length).toBe(PAIRED_WINDOWS);
  } finally {
    for (const b of browsers) await b.close();
    for (const dir of temp) rmSync(dir, { recursive: true, force: true });
    await rig.stop();
  }
});
