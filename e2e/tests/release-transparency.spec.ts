// Transparency of release-on-mute: apart from the silence it expects, the page cannot tell the microphone was
// released. On the meeting page and on a page that runs the mic through WebAudio, every consumer made
// BEFORE the release (RTCRtpSender, both kinds of WebAudio source node, a media element, a clone, a
// MediaRecorder) works after the resume, and every property reads as before.
import type { Page } from '@playwright/test';
import { type AudioRig, OUTPUT_SINK } from '../rig/audio-rig.ts';
import { MeetingPage } from '../rig/meeting-page.ts';
import { waitFor } from '../rig/proc.ts';
import { recordLevel, type SourceLevel } from '../rig/source-level.ts';
import { expect, test } from './release-fixtures.ts';
import { holdsFor, sameAsBefore, saveArtifact, setReleaseSettings, whenStreams } from './release-util.ts';

type Snap = Record<string, unknown> & { settings: MediaTrackSettings; cloneState: Record<string, unknown> };
type Levels = { node1: number; node2: number; clone: number };
declare global {
  interface Window {
    probe: {
      attach(c: { track: unknown; stream: unknown; sender: unknown }): Promise<Snap>;
      snap(): Snap;
      levels(): Levels;
      audible(on: boolean): void;
      recordedRms(): Promise<{ rms: number; seconds: number }>;
      events: string[];
      consumers: Record<string, unknown> & { clone: MediaStreamTrack; track: MediaStreamTrack };
    };
  }
}

/** Whether the probe's media element plays the mic: records what the rig's default sink `out` plays,
 * where the element is the only thing playing (the call runs without playout; analysers do not reach
 * the destination), makes the element audible, waits until its loudest 100 ms so far is above LEVEL
 * (heard at least once, as the other consumers are in waitLevels), then mutes it again; its level
 * either way.
 *
 * The element plays muted everywhere else, because what it plays is the mic itself: with echo
 * cancellation on (the pages' default), Chromium's canceller takes the element's playback for the
 * mic's echo and, once converged, removes the mic's signal from the track within seconds: the
 * canceller, not the release (figures: docs/design/release-on-mute.md#transparency-spec-figures). The
 * recorder starts before the element is audible, as what it plays fades for the same reason. With a
 * short fragment (source-level.ts): pipewire-pulse's default record fragment is 2 s, so a recorder that
 * asked none got no sample at all in 1.2 s, which had read as silence there. */
async function elementHeard(rig: AudioRig, page: Page, timeoutMs = 4000): Promise<SourceLevel> {
  const rec = recordLevel(rig, `${OUTPUT_SINK}.monitor`);
  try {
    await page.evaluate(() => window.probe.audible(true));
    await waitFor('the media element heard at the output sink', () => rec.level().peak_rms > LEVEL, {
      timeoutMs,
      intervalMs: 100,
    }).catch(() => {});
  } finally {
    await page.evaluate(() => window.probe.audible(false));
  }
  return rec.stop();
}

const LEVEL = 0.002; // RMS over an analyser window: the tone bursts are far above, silence is 0

async function waitLevels(page: Page, what: string, timeoutMs = 3000): Promise<Levels> {
  // Running maxima: the tone comes in bursts, each consumer must be heard at least once.
  const max: Levels = { node1: 0, node2: 0, clone: 0 };
  try {
    return await waitFor(
      what,
      async () => {
        const l = await page.evaluate(() => window.probe.levels());
        for (const k of Object.keys(max) as (keyof Levels)[]) max[k] = Math.max(max[k], l[k]);
        return Object.values(max).every((v) => v > LEVEL) ? { ...max } : null;
      },
      { timeoutMs, intervalMs: 20 },
    );
  } catch (e) {
    const state = await page.evaluate(() => ({
      ctx: (window.probe.consumers.ctx as AudioContext).state,
      events: window.probe.events,
    }));
    throw new Error(`${(e as Error).message}; max levels ${JSON.stringify(max)}; ${JSON.stringify(state)}`);
  }
}

for (const pageName of ['meeting.html', 'webaudio.html']) {
  test(`transparency on ${pageName}`, async ({ rig, context, pages, serviceWorker, audioServer }) => {
    test.setTimeout(60_000);
    await setReleaseSettings(serviceWorker, { releaseOnMute: true, releaseDelayMs: 500 });
    const meeting = await MeetingPage.open(context, pages.url(pageName));
    await meeting.ready();
    await meeting.waitForAudioFlowing();
    const page = meeting.page;
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.addScriptTag({ url: pages.url('webaudio-probe.js') });
    // The pages keep their call in a top-level `const call` (a global binding, not a window property).
    await page.evaluate('window.__call = call');
    const base = await page.evaluate(() => {
      const c = (window as unknown as { __call: { track: unknown; stream: unknown; sender: unknown } })
        .__call;
      const mic = c.stream; // the page's own mic stream on both pages
      return window.probe.attach({
        track: c.track,
        stream: mic,
        sender: location.pathname.endsWith('meeting.html') ? c.sender : null,
      });
    });
    await waitLevels(page, 'every consumer to hear the mic before the release');
    // What the call sends while unmuted, for the "silence while released" check below: over four whole
    // periods of the rig's tone bursts (250 ms every 500 ms), so that the bursts' phase does not move it.
    const sent = async () => (await meeting.stats()).source?.totalAudioEnergy ?? 0;
    const loudFrom = await sent();
    const loudAt = Date.now();
    await new Promise((r) => setTimeout(r, 2000));
    const loudPerS = ((await sent()) - loudFrom) / ((Date.now() - loudAt) / 1000);
    expect(loudPerS).toBeGreaterThan(0);
    // The media element plays the mic into the output sink (on both servers).
    const elementBefore = await elementHeard(rig, page);
    expect(elementBefore.peak_rms, JSON.stringify(elementBefore)).toBeGreaterThan(LEVEL);

    // Mute: the track and its clone disabled -> released.
    await page.evaluate(() => {
      window.probe.consumers.clone.enabled = false;
      window.mute();
    });
    await whenStreams(rig, 'the record stream to go (released)', (n) => n === 0, 3000);
    const released = await page.evaluate(() => window.probe.snap());
    expect(sameAsBefore(released)).toEqual(sameAsBefore(base));
    expect(released).toMatchObject({
      readyState: 'live',
      enabled: false,
      muted: false,
      streamActive: true,
      streamTracksSame: true,
      streamById: true,
      senderSame: true,
      node1Stream: true,
      node2Stream: true,
      elementSrc: true,
      ownStreamActive: true,
      cloneStreamActive: true,
      recorderStream: true,
      isTrack: true,
      nativeLooking: true,
      cloneState: { readyState: 'live', enabled: false, label: base.label },
    });

    // While released the call carries nothing or silence: the sender's source energy stands (nearly)
    // still, after what was already in the pipeline when the track was disabled (WebAudio buffers a
    // few hundred ms; its silence is not bit-exact zero on PipeWire), so the quiet second starts 1 s after
    // the release (docs/test-rig.md#lanes, r25).
    await new Promise((r) => setTimeout(r, 1000));
    const quietFrom = await sent();
    await new Promise((r) => setTimeout(r, 1000));
    const quietPerS = (await sent()) - quietFrom;
    expect(quietPerS).toBeLessThan(loudPerS / 100);

    // applyConstraints while released: kept, read back, applied on reacquire.
    // A value the track does not have yet, so that losing it on the reacquire shows: once on again,
    // getConstraints() reads the reacquired real track's own constraints. (Chromium records audio
    // constraints without reconfiguring a live capture: settings stay as they are, on or off.)
    const applied = { autoGainControl: !base.settings.autoGainControl };
    await page.evaluate((c) => window.probe.consumers.track.applyConstraints(c), applied);
    expect(await page.evaluate(() => window.probe.consumers.track.getConstraints())).toEqual(applied);

    // Resume: every consumer made before the release hears the mic again.
    const e0 = await sent();
    await page.evaluate(() => {
      window.unmute();
      window.probe.consumers.clone.enabled = true;
    });
    await whenStreams(rig, 'a record stream back', (n) => n >= 1, 3000);
    const levels = await waitLevels(page, 'every consumer to hear the mic after the resume');
    await waitFor('sent energy to rise', async () => (await sent()) > e0, { timeoutMs: 3000 });
    const elementAfter = await elementHeard(rig, page);
    expect(elementAfter.peak_rms, JSON.stringify(elementAfter)).toBeGreaterThan(LEVEL);
    // The MediaRecorder made before the release records after it.
    // At least 0.6 s of it, more than one burst-and-gap period of the rig's tone (250 ms each): a shorter
    // one can miss the burst (docs/design/release-on-mute.md#transparency-spec-figures).
    await page.evaluate(() => (window.probe.consumers.recorder as MediaRecorder).start(100));
    await waitFor(
      'MediaRecorder data',
      () => page.evaluate(() => (window.probe.consumers.chunks as number[]).filter((n) => n > 0).length >= 6),
      { timeoutMs: 5000 },
    );
    await page.evaluate(
      () =>
        new Promise((resolve) => {
          const rec = window.probe.consumers.recorder as MediaRecorder;
          rec.addEventListener('stop', resolve, { once: true });
          rec.stop();
        }),
    );
    // ...and what it recorded is the mic, not silence.
    const recorded = await page.evaluate(() => window.probe.recordedRms());
    expect(recorded.seconds).toBeGreaterThan(0.2);
    expect(recorded.rms).toBeGreaterThan(LEVEL);

    const after = await page.evaluate(() => window.probe.snap());
    expect(sameAsBefore({ ...after, constraints: base.constraints })).toEqual(sameAsBefore(base));
    expect(after.constraints).toEqual(applied);
    expect(after).toMatchObject({
      readyState: 'live',
      enabled: true,
      senderSame: true,
      streamTracksSame: true,
    });
    const events = await page.evaluate(() => window.probe.events);
    expect(events).toEqual([]);
    expect(errors).toEqual([]);
    saveArtifact(`release-transparency-${audioServer}-${pageName}.json`, {
      base,
      released,
      after,
      levels,
      events,
      elementBefore,
      elementAfter,
      recorded,
      sent_energy_per_s: { unmuted: loudPerS, released: quietPerS },
    });
  });
}

test('a MediaRecorder started while released starts, and records the mic once unmuted', async ({
  rig,
  releasing: meeting,
}) => {
  const page = meeting.page;
  await page.evaluate(`window.__rec = { ev: [], blobs: [] };
    __rec.r = new MediaRecorder(call.stream);
    __rec.r.ondataavailable = (e) => __rec.blobs.push(e.data);
    __rec.r.onerror = (e) => __rec.ev.push('error:' + e.error?.name);
    __rec.r.onstop = () => __rec.ev.push('stop');`);
  await meeting.mute();
  await whenStreams(rig, 'released', (n) => n === 0, 3000);
  // Without micoff this is a recorder on a disabled (silent) track: start() must not throw.
  expect(await page.evaluate(`__rec.r.start(100), __rec.r.state`)).toBe('recording');
  await meeting.unmute();
  await whenStreams(rig, 'back on unmute', (n) => n >= 1, 3000);
  await new Promise((r) => setTimeout(r, 2000));
  // While it records, a mute keeps the device (like a recorder running before the release).
  await meeting.mute();
  await holdsFor(rig, 'kept open while recording', (n) => n >= 1, 800);
  const out = (await page.evaluate(`(async () => {
    const state = __rec.r.state;
    await new Promise((r) => { __rec.r.addEventListener('stop', r, { once: true }); __rec.r.stop(); });
    const blob = new Blob(__rec.blobs, { type: __rec.r.mimeType });
    const audio = await new AudioContext().decodeAudioData(await blob.arrayBuffer());
    const d = audio.getChannelData(0);
    let s = 0;
    for (const v of d) s += v * v;
    return { state, ev: __rec.ev, seconds: audio.duration, rms: Math.sqrt(s / Math.max(1, d.length)) };
  })()`)) as { state: string; ev: string[]; seconds: number; rms: number };
  expect(out.state).toBe('recording');
  expect(out.ev).toEqual(['stop']);
  expect(out.rms).toBeGreaterThan(LEVEL);
  // The recording over, the mute that was kept for it releases.
  await whenStreams(rig, 'released once the recorder stopped', (n) => n === 0, 3000);
  saveArtifact(`release-recorder-started-while-released-${rig.kind}.json`, out);
});
