// Release when nothing can hear the mic (extension/src/page/audibility.ts). On the loopback
// meeting (meeting.html, playout on): sender-level mutes (transceiver inactive, encodings active:false,
// replaceTrack(null)) and a WebAudio noise-suppression-style graph whose destination track is disabled
// are released while muted, with audio at the peer again after the unmute; listeners while muted (an
// enabled clone, a polled AnalyserNode, an AudioWorklet with its port in use) keep the mic open, each
// with its reason in the tab view; the settings switch turns the pipeline/sender rules off.

import type { Page } from '@playwright/test';
import { KEPT } from '../../extension/src/shared/release-decision.ts';
import { expect, test } from '../rig/fixtures.ts';
import type { MeetingPage } from '../rig/meeting-page.ts';
import { waitFor } from '../rig/proc.ts';
import { HELPERS, PIPELINE, SENDER_INACTIVE, SENDER_SENDING } from './release-paths-util.ts';
import { holdsFor, setReleaseSettings, tabIdOf, tabView, whenStreams } from './release-util.ts';

const none = (n: number) => n === 0;
const some = (n: number) => n >= 1;

async function energy(m: MeetingPage): Promise<number> {
  return (await m.stats()).inbound?.totalAudioEnergy ?? 0;
}

/** Released after `mute`, back after `unmute` with the peer's received energy rising, the page's track
 * live and enabled throughout. */
async function releasedAndBack(
  rig: Parameters<typeof whenStreams>[0],
  meeting: MeetingPage,
  mute: string,
  unmute: string,
): Promise<void> {
  const page: Page = meeting.page;
  await page.evaluate(mute);
  await whenStreams(rig, `released after: ${mute}`, none, 2000);
  expect(await page.evaluate('[call.track.readyState, call.track.enabled, call.track.muted]')).toEqual([
    'live',
    true,
    false,
  ]);
  await new Promise((r) => setTimeout(r, 300));
  const e0 = await energy(meeting);
  const t0 = Date.now();
  await page.evaluate(unmute);
  await whenStreams(rig, `back after: ${unmute}`, some, 1000);
  await waitFor('received energy to rise', async () => ((await energy(meeting)) > e0 + 1e-6 ? true : null), {
    timeoutMs: 5000,
    intervalMs: 10,
  });
  const backMs = Date.now() - t0;
  console.log(`release-paths: ${mute} -> audio back ${backMs} ms after unmute`);
  expect(backMs).toBeLessThanOrEqual(500); // the bar: audio at the peer within 500 ms
}

test.describe('released when nothing hears', () => {
  test.beforeEach(async ({ serviceWorker }) => {
    await setReleaseSettings(serviceWorker, { releaseOnMute: true, releaseDelayMs: 0, followPaths: true });
  });

  test('sender-level mutes: transceiver inactive, active:false, replaceTrack(null)', async ({
    rig,
    openMeeting,
  }) => {
    test.setTimeout(120_000);
    const meeting = await openMeeting({ playout: true });
    await meeting.waitForAudioFlowing();
    await meeting.page.evaluate(HELPERS);
    await releasedAndBack(rig, meeting, SENDER_INACTIVE, SENDER_SENDING);
    await releasedAndBack(
      rig,
      meeting,
      `(async () => { const p = call.sender.getParameters(); p.encodings.forEach((e) => e.active = false); await call.sender.setParameters(p); })()`,
      `(async () => { const p = call.sender.getParameters(); p.encodings.forEach((e) => e.active = true); await call.sender.setParameters(p); })()`,
    );
    await releasedAndBack(
      rig,
      meeting,
      'call.sender.replaceTrack(null)',
      'call.sender.replaceTrack(call.track)',
    );
    expect(await meeting.page.evaluate('call.sender.track === call.track')).toBe(true);
  });

  test('WebAudio pipeline: mic -> nodes -> destination track (disabled) -> sender', async ({
    rig,
    openMeeting,
  }) => {
    test.setTimeout(60_000);
    const meeting = await openMeeting({ playout: true });
    await meeting.waitForAudioFlowing();
    await meeting.page.evaluate(PIPELINE);
    await holdsFor(rig, 'the capture stays open while the pipeline output is sent', some, 800);
    await releasedAndBack(rig, meeting, '__out.enabled = false', '__out.enabled = true');
  });
});

test.describe('kept open while the page listens', () => {
  test.beforeEach(async ({ serviceWorker }) => {
    await setReleaseSettings(serviceWorker, { releaseOnMute: true, releaseDelayMs: 0, followPaths: true });
  });

  const cases: [name: string, setup: string, reason: string][] = [
    ['an enabled clone', 'window.__clone = call.track.clone()', KEPT.clone],
    [
      'an AnalyserNode on the raw mic, polled',
      `(() => {
        const ctx = new AudioContext();
        const an = ctx.createAnalyser();
        ctx.createMediaStreamSource(call.stream).connect(an);
        const buf = new Float32Array(an.fftSize);
        window.__poll = setInterval(() => an.getFloatTimeDomainData(buf), 100);
      })()`,
      KEPT.analyser,
    ],
    [
      'an AudioWorklet reading the raw mic (port in use)',
      `(async () => {
        const ctx = new AudioContext();
        const code = "registerProcessor('vad', class extends AudioWorkletProcessor { process(i) { if (i[0] && i[0][0]) this.port.postMessage(i[0][0][0]); return true; } });";
        await ctx.audioWorklet.addModule(URL.createObjectURL(new Blob([code], { type: 'text/javascript' })));
        const node = new AudioWorkletNode(ctx, 'vad');
        node.port.onmessage = () => { window.__heard = (window.__heard ?? 0) + 1; };
        ctx.createMediaStreamSource(call.stream).connect(node);
        await ctx.resume();
      })()`,
      KEPT.worklet,
    ],
  ];
  for (const [name, setup, reason] of cases) {
    test(`${name}: the sender is muted (inactive), the mic stays open with the reason`, async ({
      rig,
      openMeeting,
      serviceWorker,
    }) => {
      const meeting = await openMeeting();
      const tabId = await tabIdOf(serviceWorker, meeting.page.url());
      await meeting.page.evaluate(HELPERS);
      await meeting.page.evaluate(setup);
      await meeting.page.evaluate(
        `(async () => { __tx().direction = 'inactive'; await __renegotiate(); })()`,
      );
      await holdsFor(rig, `kept open: ${name}`, some, 1500);
      const v = await waitFor('tab view not_released', async () => {
        const t = await tabView(serviceWorker, tabId);
        return t?.state === 'not_released' ? t : null;
      });
      expect(v.reason).toBe(reason);
    });
  }
});

test('the setting turns the pipeline/sender rules off; the disabled-track rule stays', async ({
  rig,
  openMeeting,
  serviceWorker,
}) => {
  await setReleaseSettings(serviceWorker, { releaseOnMute: true, releaseDelayMs: 0, followPaths: false });
  const meeting = await openMeeting();
  await meeting.page.evaluate(HELPERS);
  await meeting.page.evaluate(SENDER_INACTIVE);
  await holdsFor(rig, 'kept: sender rule off', some, 1500);
  await meeting.mute();
  await whenStreams(rig, 'released by the plain rule', none, 2000);
  await meeting.unmute();
  // The device reopens in tens of ms; then it must stay open (the sender rule is still off).
  await whenStreams(rig, 'back after the unmute', some, 2000);
  await holdsFor(rig, 'kept: sender rule still off', some, 800);
  await setReleaseSettings(serviceWorker, { followPaths: true });
  await whenStreams(rig, 'released once the rule is on again', none, 2000);
});
