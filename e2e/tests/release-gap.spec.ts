// What a release costs the far end's jitter buffer (a bench, not part of npm test: ~2 min; run with
// MICOFF_BENCH_GAP=1). While released the sender has no track to send, so the RTP stream pauses
// for as long as the device is off; WebRTC's receiver (NetEq) reads a pause shorter than its arrival
// history as network jitter and raises its target delay. Per configuration, one call: warm up, mute,
// a gap of GAP_MS (from the release; without micoff from the mute, the device stays open and the
// disabled track keeps sending silence), unmute, then the receiving end's jitter buffer every 2 s for
// 40 s (mean target delay and mean delay of the samples it emitted in each window, from inbound-rtp
// jitterBufferTargetDelay / jitterBufferDelay / jitterBufferEmittedCount).
// Asserted: only the control (without a release the target delay stays under 200 ms); the figures
// are logged and saved (e2e/artifacts/release-gap.json, docs/design/release-on-mute.md).
import { extensionServiceWorker, type LaunchedChromium, launchChromium } from '../rig/chromium.ts';
import { expect, test } from '../rig/fixtures.ts';
import { extensionId } from '../rig/host.ts';
import { MeetingPage } from '../rig/meeting-page.ts';
import { saveArtifact, setReleaseSettings, whenStreams } from './release-util.ts';

const GAPS_MS = (process.env.MICOFF_GAP_MS ?? '1000,4000').split(',').map(Number);
const AFTER_WINDOWS = 20;

test.skip(({ audioServer }) => audioServer !== 'pulseaudio', 'PulseAudio project only');
test.skip(!process.env.MICOFF_BENCH_GAP, 'a bench: MICOFF_BENCH_GAP=1 runs it');

const READ = `window.__jb = async () => {
  for (const r of (await call.pcs[1].getStats()).values())
    if (r.type === 'inbound-rtp' && r.kind === 'audio')
      return { n: r.jitterBufferEmittedCount, target: r.jitterBufferTargetDelay, delay: r.jitterBufferDelay };
};`;

test('far-end jitter buffer after a release gap, with and without micoff', async ({ rig, pages }) => {
  test.setTimeout(60_000 + GAPS_MS.length * 2 * 70_000);
  const results: Record<string, unknown> = {};
  for (const gap of GAPS_MS) {
    for (const config of ['micoff', 'plain'] as const) {
      let b: LaunchedChromium | undefined;
      try {
        b = await launchChromium({ env: rig.clientEnv, withExtension: config === 'micoff' });
        if (config === 'micoff') {
          const sw = await extensionServiceWorker(b.context, extensionId());
          await setReleaseSettings(sw, { releaseOnMute: true, releaseDelayMs: 0 });
        }
        const m = await MeetingPage.open(b.context, pages.url('meeting.html?playout=1'));
        await m.ready();
        await m.waitForAudioFlowing();
        await m.page.evaluate(READ);
        const window2s = async (phase: string) => {
          type Jb = { n: number; target: number; delay: number };
          const a = (await m.page.evaluate('__jb()')) as Jb;
          await new Promise((r) => setTimeout(r, 2000));
          const z = (await m.page.evaluate('__jb()')) as Jb;
          const n = Math.max(1, z.n - a.n);
          return {
            phase,
            target_ms: Math.round(((z.target - a.target) / n) * 1000),
            delay_ms: Math.round(((z.delay - a.delay) / n) * 1000),
          };
        };
        const windows = [];
        for (let i = 0; i < 3; i++) windows.push(await window2s('before'));
        await m.mute();
        const from =
          config === 'micoff' ? await whenStreams(rig, 'released', (n) => n === 0, 2000) : Date.now();
        await new Promise((r) => setTimeout(r, Math.max(0, gap - (Date.now() - from))));
        await m.unmute();
        await whenStreams(rig, 'capturing after the unmute', (n) => n === 1, 2000);
        for (let i = 0; i < AFTER_WINDOWS; i++) windows.push(await window2s(`${2 * i}-${2 * i + 2} s after`));
        const after = windows.filter((w) => w.phase !== 'before');
        const r = {
          max_target_ms: Math.max(...after.map((w) => w.target_ms)),
          max_delay_ms: Math.max(...after.map((w) => w.delay_ms)),
          windows,
        };
        results[`${config}, gap ${gap} ms`] = r;
        console.log(`release-gap: ${config}, gap ${gap} ms: ${JSON.stringify({ ...r, windows: undefined })}`);
        if (config === 'plain') expect(r.max_target_ms, 'control: no release, no jitter').toBeLessThan(200);
        await m.close();
      } finally {
        await b?.close();
      }
    }
  }
  saveArtifact('release-gap.json', results);
});
