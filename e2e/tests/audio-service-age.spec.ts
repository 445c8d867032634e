// Bench (MICOFF_BENCH_AUDIO_SERVICE_AGE=1): why the unmuted overhead is measured in balanced halves
// (balancedPairedWindows, docs/design/release-on-mute.md "Unmuted cost: the newer audio service"). Two
// browsers capture at once from one rig, first both WITHOUT micoff (a null pair), then one with micoff;
// before each quarter the audio service of one side is restarted with both calls down, alternating, so
// that side's service is the newer. Per quarter: the median of 10 paired 3 s windows (ratio of the first
// browser's tree to the second's) and the median difference of the audio service's AudioProcessing
// thread. The newer service's side costs more whichever browser carries micoff; the balanced ratio
// (geometric mean over the quarters) is what is left. Raw windows: e2e/artifacts/audio-service-age.json.
import { startAudioRig } from '../rig/audio-rig.ts';
import { type LaunchedChromium, launchChromium } from '../rig/chromium.ts';
import { test } from '../rig/fixtures.ts';
import { restartAudioService } from '../rig/host.ts';
import { MeetingPage } from '../rig/meeting-page.ts';
import { median, pairedBreakdown, pairedWindows, saveArtifact, whenStreams } from './release-util.ts';

test.skip(
  process.env.MICOFF_BENCH_AUDIO_SERVICE_AGE !== '1',
  'a benchmark: MICOFF_BENCH_AUDIO_SERVICE_AGE=1',
);
test.skip(({ audioServer }) => audioServer !== 'pulseaudio', 'own PulseAudio rig: PulseAudio project only');

const QUARTER_WINDOWS = 10;
const AP = 'audio_service/AudioProcessing';

test('the newer audio service costs more, with or without micoff', async ({ pages }) => {
  test.setTimeout(20 * 60_000);
  const rig = await startAudioRig('pulseaudio', { reader: false, tone: false });
  const out: Record<string, unknown> = {};
  try {
    for (const pair of ['null', 'micoff'] as const) {
      const first = await launchChromium({ env: rig.clientEnv, withExtension: pair === 'micoff' });
      const second = await launchChromium({ env: rig.clientEnv, withExtension: false }).catch(async (e) => {
        await first.close();
        throw e;
      });
      const sides = { with: first, without: second } as Record<'with' | 'without', LaunchedChromium>;
      try {
        const pids = { with: await first.browserPid(), without: await second.browserPid() };
        // Both audio services up once, so that each quarter's restart makes its side the newer.
        for (const b of [first, second]) {
          const m = await MeetingPage.open(b.context, pages.url('meeting.html'));
          await m.ready();
          await whenStreams(rig, 'warm-up capture', (n) => n === 1);
          await m.hangUp();
          await m.close();
          await whenStreams(rig, 'warm-up over', (n) => n === 0, 5000);
        }
        const quarters = [];
        for (const newer of ['with', 'without', 'with', 'without'] as const) {
          await restartAudioService(pids[newer], rig.clientEnv);
          const calls = [
            await MeetingPage.open(first.context, pages.url('meeting.html')),
            await MeetingPage.open(second.context, pages.url('meeting.html')),
          ];
          await Promise.all(calls.map((c) => c.ready()));
          await whenStreams(rig, 'both capturing', (n) => n === 2);
          await new Promise((r) => setTimeout(r, 2000));
          const paired = await pairedWindows(rig, pids, 3, QUARTER_WINDOWS);
          const q = {
            newer: newer === 'with' ? 'first' : 'second',
            ratio: median(paired.map((p) => p.ratio)),
            audio_processing_diff_pct: pairedBreakdown(paired, 0).by_thread[AP]?.median_diff_pct ?? 0,
            paired,
          };
          quarters.push(q);
          console.log(
            `audio-service-age ${pair}: newer=${q.newer} first/second ${q.ratio.toFixed(3)}, AudioProcessing first-second ${q.audio_processing_diff_pct} % of a core`,
          );
          for (const c of calls) {
            await c.hangUp();
            await c.close();
          }
          await whenStreams(rig, 'no capture between quarters', (n) => n === 0, 5000);
        }
        const balanced = quarters.reduce((x, q) => x * q.ratio, 1) ** (1 / quarters.length);
        console.log(`audio-service-age ${pair}: balanced first/second ${balanced.toFixed(3)}`);
        out[pair] = { balanced, quarters };
      } finally {
        for (const b of Object.values(sides)) await b.close();
      }
    }
  } finally {
    saveArtifact('audio-service-age.json', out);
    await rig.stop();
  }
});
