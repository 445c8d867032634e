// Release when nothing can hear the mic (extension/src/page/chromium/graph/audibility.ts): sender-level mutes, a
// WebAudio graph and an insertable-streams pipeline are released and reacquired while the page sees
// nothing change; listeners while muted keep the mic open, each with its reason; the switches turn
// the pipeline/sender rules off. Cases and bars: docs/design/release-on-mute.md#release-paths-bars.
// Raw samples: e2e/artifacts/release-paths-<project>-<case>.json.

import type { Page } from '@playwright/test';
import { KEPT } from '../../extension/src/shared/release-decision.ts';
import { SIGNAL_SINK } from '../rig/audio-rig.ts';
import { expect, test } from '../rig/fixtures.ts';
import { MeetingPage } from '../rig/meeting-page.ts';
import { waitFor } from '../rig/proc.ts';
import {
  HELPERS,
  insertablePage,
  OUT_MUTE,
  OUT_UNMUTE,
  PIPELINE,
  SENDER_INACTIVE,
  SENDER_SENDING,
} from './release-paths-util.ts';
import {
  holdsFor,
  median,
  sameAsBefore,
  saveArtifact,
  setReleaseSettings,
  tabIdOf,
  tabView,
  whenStreams,
} from './release-util.ts';

const CYCLES = 5;
/** Medians over CYCLES, from the release point and from the unmute (docs/design/release-on-mute.md#release-paths-bars). */
const RELEASE_BAR_MS = 250;
const AUDIO_BAR_MS = 500;
const none = (n: number) => n === 0;
const some = (n: number) => n >= 1;

type Rig = Parameters<typeof whenStreams>[0];
interface Sample {
  release_ms: number;
  energy_ms: number;
}

async function energy(m: MeetingPage): Promise<number> {
  return (await m.stats()).inbound?.totalAudioEnergy ?? 0;
}

/** What the page must keep seeing: `tracks` / `streams` (JS object literals of the page's own objects)
 * are watched for events; `same` is a JS expression of booleans (identity of the page's objects) that
 * must all stay true. Uses the transparency probe (e2e/pages/webaudio-probe.js) without its consumers. */
interface Watched {
  page: Page;
  same: string;
}

async function watch(
  page: Page,
  probeUrl: string,
  o: { tracks: string; streams: string; ids: string; same: string },
): Promise<Watched> {
  await page.addScriptTag({ url: probeUrl });
  await page.evaluate(
    `probe.watch({ tracks: ${o.tracks}, streams: ${o.streams} }); window.__ids = ${o.ids}; window.__base = probe.trackSnap(call.track);`,
  );
  return { page, same: o.same };
}

/** The invariants: no event, the mic track reads as before (live, enabled, unmuted, same settings),
 * the page's objects are the same. */
async function invariantsHold(w: Watched, when: string, micEnabled = true): Promise<void> {
  const r = (await w.page.evaluate(
    `({ snap: probe.trackSnap(call.track), base: __base, events: probe.events, same: ${w.same} })`,
  )) as { snap: Record<string, unknown>; base: Record<string, unknown>; events: string[]; same: object };
  expect(r.events, `${when}: no event on the page's tracks and streams`).toEqual([]);
  expect(sameAsBefore(r.snap), `${when}: the mic track reads as before`).toEqual(sameAsBefore(r.base));
  expect(r.snap, `${when}: the mic track`).toMatchObject({
    readyState: 'live',
    enabled: micEnabled,
    muted: false,
  });
  const broken = Object.entries(r.same).filter(([, v]) => v !== true);
  expect(broken, `${when}: the page's objects are the same and in place`).toEqual([]);
}

/** One mute cycle: released after `mute` (ms from the mute, the release point with no delay), the
 * invariants while released, then `unmute` and the far peer's audio (ms from the unmute). `flowing`
 * (a page expression) must grow after the unmute too, when given. */
async function cycle(
  rig: Rig,
  meeting: MeetingPage,
  w: Watched,
  mute: string,
  unmute: string,
  flowing?: string,
  /** The mute is the mic track's own `enabled = false` (the plain rule). */
  plain = false,
): Promise<Sample> {
  const page = meeting.page;
  await whenStreams(rig, `capturing before: ${mute}`, some, 2000);
  const mutedAt = Date.now();
  await page.evaluate(mute);
  const goneAt = await whenStreams(rig, `released after: ${mute}`, none, 3000);
  await invariantsHold(w, `released by: ${mute}`, !plain);
  await new Promise((r) => setTimeout(r, 300));
  const e0 = await energy(meeting);
  const f0 = flowing ? ((await page.evaluate(flowing)) as number) : 0;
  const unmutedAt = Date.now();
  await page.evaluate(unmute);
  await whenStreams(rig, `back after: ${unmute}`, some, 1000);
  const risesAt = await waitFor(
    'received energy to rise',
    async () => ((await energy(meeting)) > e0 + 1e-6 ? Date.now() : null),
    { timeoutMs: 5000, intervalMs: 10 },
  );
  if (flowing) {
    await waitFor(
      `${flowing} to grow after the unmute`,
      async () => ((await page.evaluate(flowing)) as number) > f0,
      {
        timeoutMs: 3000,
      },
    );
  }
  await invariantsHold(w, `after: ${unmute}`);
  return { release_ms: goneAt - mutedAt, energy_ms: risesAt - unmutedAt };
}

/** CYCLES cycles; the bars on the medians. */
async function bars(
  name: string,
  run: () => Promise<Sample>,
): Promise<{ median_release_ms: number; median_energy_ms: number }> {
  const samples: Sample[] = [];
  for (let i = 0; i < CYCLES; i++) samples.push(await run());
  const r = {
    median_release_ms: median(samples.map((s) => s.release_ms)),
    median_energy_ms: median(samples.map((s) => s.energy_ms)),
    samples,
  };
  saveArtifact(`release-paths-${test.info().project.name}-${name.replace(/[^a-z0-9]+/gi, '-')}.json`, r);
  console.log(`release-paths: ${name} ${JSON.stringify(r)}`);
  expect(r.median_release_ms, `${name}: record stream gone after the release point`).toBeLessThanOrEqual(
    RELEASE_BAR_MS,
  );
  expect(r.median_energy_ms, `${name}: audio at the peer after the unmute`).toBeLessThanOrEqual(AUDIO_BAR_MS);
  return r;
}

const MIC = { tracks: '{ track: call.track }', streams: '{ stream: call.stream }' };

// A signal without gaps: with the rig's tone (250 ms bursts every 500 ms) "audio at the peer after the
// unmute" would wait for the next burst (docs/test-rig.md#lanes, r31).
test.use({ rigOptions: { tone: false } });
// Each test stands alone (its own call; the rig's signal played per worker): in the functional lane its
// tests spread over the workers instead of ending the lane alone (docs/test-rig.md#lanes).
test.describe.configure({ mode: 'parallel' });
test.beforeAll(async ({ rig }) => {
  await rig.playInto(SIGNAL_SINK, 'speech');
});

test.describe('released when nothing hears', () => {
  test.beforeEach(async ({ serviceWorker }) => {
    await setReleaseSettings(serviceWorker, { releaseOnMute: true, releaseDelayMs: 0, followPaths: true });
  });

  test('sender-level mutes: transceiver inactive, active:false, replaceTrack(null)', async ({
    rig,
    openMeeting,
    pages,
  }) => {
    test.setTimeout(120_000);
    const meeting = await openMeeting({ playout: true });
    await meeting.waitForAudioFlowing();
    await meeting.page.evaluate(HELPERS);
    const w = await watch(meeting.page, pages.url('webaudio-probe.js'), {
      ...MIC,
      ids: '{ sender: call.sender, tx: __tx(), pc: call.pcs[0] }',
      same: `({
        sender: call.sender === __ids.sender,
        inPc: __ids.pc.getSenders().includes(__ids.sender),
        transceiver: __tx() === __ids.tx && __ids.tx.sender === __ids.sender,
        senderTrack: __ids.sender.track === call.track || __ids.sender.track === null,
        stream: call.stream.active && call.stream.getTracks().length === 1 && call.stream.getTracks()[0] === call.track,
      })`,
    });
    const setActive = (on: boolean) =>
      `(async () => { const p = call.sender.getParameters(); p.encodings.forEach((e) => e.active = ${on}); await call.sender.setParameters(p); })()`;
    const mutes: [name: string, mute: string, unmute: string][] = [
      ['transceiver inactive', SENDER_INACTIVE, SENDER_SENDING],
      ['encodings active:false', setActive(false), setActive(true)],
      ['replaceTrack(null)', 'call.sender.replaceTrack(null)', 'call.sender.replaceTrack(call.track)'],
    ];
    for (const [name, mute, unmute] of mutes) {
      await bars(`sender: ${name}`, () => cycle(rig, meeting, w, mute, unmute));
    }
    expect(await meeting.page.evaluate('call.sender.track === call.track')).toBe(true);
  });

  test('WebAudio pipeline: mic -> nodes -> destination track (disabled) -> sender', async ({
    rig,
    openMeeting,
    pages,
  }) => {
    test.setTimeout(60_000);
    const meeting = await openMeeting({ playout: true });
    await meeting.waitForAudioFlowing();
    await meeting.page.evaluate(PIPELINE);
    await holdsFor(rig, 'the capture stays open while the pipeline output is sent', some, 800);
    const w = await watch(meeting.page, pages.url('webaudio-probe.js'), {
      tracks: '{ track: call.track, out: __out }',
      streams: '{ stream: call.stream, dest: __nodes.dest.stream }',
      ids: '{ ...__nodes, out: __out, sender: call.sender }',
      same: `({
        nodes: ['ctx', 'src', 'hp', 'gain', 'dest'].every((k) => __nodes[k] === __ids[k]),
        source: __nodes.src.mediaStream === call.stream && __nodes.src.context === __nodes.ctx,
        running: __nodes.ctx.state === 'running',
        dest: __nodes.dest.stream.getAudioTracks()[0] === __ids.out && __out === __ids.out,
        outLive: __out.readyState === 'live',
        sender: call.sender === __ids.sender && call.sender.track === __out,
      })`,
    });
    await bars('WebAudio pipeline', () =>
      cycle(rig, meeting, w, '__out.enabled = false', '__out.enabled = true'),
    );
  });

  for (const link of ['worker', 'page'] as const) {
    test(`insertable-streams pipeline, transform in the ${link}: processor -> transform -> generator (disabled) -> sender`, async ({
      rig,
      context,
      pages,
    }) => {
      test.setTimeout(90_000);
      const meeting = await MeetingPage.open(context, pages.url(insertablePage(link)));
      await meeting.ready();
      await meeting.waitForAudioFlowing();
      await holdsFor(rig, 'the capture stays open while the generator is sent', some, 800);
      const w = await watch(meeting.page, pages.url('webaudio-probe.js'), {
        tracks: '{ track: call.track, out: call.out }',
        streams: '{ stream: call.stream }',
        ids: '{ processor: call.processor, readable: call.processor.readable, out: call.out, writable: call.out.writable, sender: call.sender }',
        same: `({
          processor: call.processor === __ids.processor && call.processor.readable === __ids.readable,
          generator: call.out === __ids.out && call.out.writable === __ids.writable,
          outLive: call.out.readyState === 'live',
          sender: call.sender === __ids.sender && call.sender.track === call.out,
          pipeline: call.pipeError === null,
        })`,
      });
      await bars(`insertable pipeline (${link})`, () =>
        cycle(rig, meeting, w, OUT_MUTE, OUT_UNMUTE, 'call.frames'),
      );
      // The plain disabled-track mute of the same page: the processor outlives the release too.
      const plain = await cycle(
        rig,
        meeting,
        w,
        'call.track.enabled = false',
        'call.track.enabled = true',
        'call.frames',
        true,
      );
      console.log(
        `release-paths: insertable pipeline (${link}), mic track disabled ${JSON.stringify(plain)}`,
      );
      // The page's stop() ends its processor's stream as it would without micoff: the pipe to the
      // generator completes and closes the generator's writable, which ends its track.
      await meeting.page.evaluate('call.track.stop()');
      await waitFor('the pipeline to end with the stopped track', () =>
        meeting.page.evaluate(`call.out.readyState === 'ended' && call.pipeError === null`),
      );
      await meeting.close();
    });
  }
});

test.describe('kept open while the page listens', () => {
  test.beforeEach(async ({ serviceWorker }) => {
    await setReleaseSettings(serviceWorker, { releaseOnMute: true, releaseDelayMs: 0, followPaths: true });
  });

  // Each: the call is muted (the mic's sender inactive, or the pipeline's output disabled), and the page
  // still listens; the mic stays open, the tab view and the popup say why.
  const sendInactive = `(async () => { __tx().direction = 'inactive'; await __renegotiate(); })()`;
  const cases: [name: string, page: string, setup: string, mute: string, reason: string][] = [
    ['an enabled clone', 'meeting.html', 'window.__clone = call.track.clone()', sendInactive, KEPT.clone],
    [
      'an AnalyserNode on the raw mic, polled',
      'meeting.html',
      `(() => {
        const ctx = new AudioContext();
        const an = ctx.createAnalyser();
        ctx.createMediaStreamSource(call.stream).connect(an);
        const buf = new Float32Array(an.fftSize);
        window.__poll = setInterval(() => an.getFloatTimeDomainData(buf), 100);
      })()`,
      sendInactive,
      KEPT.analyser,
    ],
    [
      'an AudioWorklet reading the raw mic (port in use)',
      'meeting.html',
      `(async () => {
        const ctx = new AudioContext();
        const code = "registerProcessor('vad', class extends AudioWorkletProcessor { process(i) { if (i[0] && i[0][0]) this.port.postMessage(i[0][0][0]); return true; } });";
        await ctx.audioWorklet.addModule(URL.createObjectURL(new Blob([code], { type: 'text/javascript' })));
        const node = new AudioWorkletNode(ctx, 'vad');
        node.port.onmessage = () => { window.__heard = (window.__heard ?? 0) + 1; };
        ctx.createMediaStreamSource(call.stream).connect(node);
        await ctx.resume();
      })()`,
      sendInactive,
      KEPT.worklet,
    ],
    [
      'a processor read by page code (no pipe micoff can follow)',
      insertablePage('own'),
      '',
      OUT_MUTE,
      KEPT.processor,
    ],
  ];
  for (const [name, url, setup, mute, reason] of cases) {
    test(`${name}: muted, the mic stays open with the reason (tab view and popup)`, async ({
      rig,
      context,
      pages,
      serviceWorker,
      extensionId,
    }) => {
      const meeting = await MeetingPage.open(context, pages.url(url));
      await meeting.ready();
      const tabId = await tabIdOf(serviceWorker, meeting.page.url());
      await meeting.page.evaluate(HELPERS);
      if (setup) await meeting.page.evaluate(setup);
      await meeting.page.evaluate(mute);
      await holdsFor(rig, `kept open: ${name}`, some, 1500);
      const v = await waitFor('tab view not_released', async () => {
        const t = await tabView(serviceWorker, tabId);
        return t?.state === 'not_released' ? t : null;
      });
      expect(v.reason).toBe(reason);
      // What the user sees: the popup's "This tab" section.
      const popup = await context.newPage();
      await popup.goto(`chrome-extension://${extensionId}/popup.html?tab=${tabId}`);
      await expect(popup.locator('#tab-state')).toContainText(`Muted, microphone kept open: ${reason}`);
      await expect(popup.locator('#tab-server')).toContainText(/1 record stream open/);
      await popup.close();
      await meeting.close();
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

test('per site: the rules off for this site only keep a sender mute open, the disabled-track rule stays; the popup turns them back on', async ({
  rig,
  openMeeting,
  pages,
  serviceWorker,
  context,
  extensionId,
}) => {
  // On everywhere, off for the meeting's site.
  await setReleaseSettings(serviceWorker, {
    releaseOnMute: true,
    releaseDelayMs: 0,
    followPaths: true,
    followPathsSites: { [pages.origin]: false },
  });
  const meeting = await openMeeting();
  const tabId = await tabIdOf(serviceWorker, meeting.page.url());
  await meeting.page.evaluate(HELPERS);
  await meeting.page.evaluate(SENDER_INACTIVE);
  await holdsFor(rig, 'kept: sender rule off for the site', some, 1500);
  await meeting.mute();
  await whenStreams(rig, 'released by the plain rule', none, 2000);
  await meeting.unmute();
  await whenStreams(rig, 'back after the unmute', some, 2000);
  await holdsFor(rig, 'kept: sender rule still off for the site', some, 800);
  // The popup's per-site switch reads off; turned on, the sender mute releases.
  const popup = await context.newPage();
  await popup.goto(`chrome-extension://${extensionId}/popup.html?tab=${tabId}`);
  await expect(popup.locator('#site-paths-row')).toBeVisible();
  const box = popup.locator('#site-paths');
  await expect(box).not.toBeChecked();
  await box.check();
  await whenStreams(rig, 'released once the popup turned the rules on for the site', none, 2000);
  const stored = (await serviceWorker.evaluate(() =>
    (globalThis as unknown as { micoff: { settings: { get(): Promise<unknown> } } }).micoff.settings.get(),
  )) as { followPathsSites: Record<string, boolean> };
  // Back to the global setting: the exception is gone rather than set to true.
  expect(stored.followPathsSites).toEqual({});
  await popup.close();
});
