// First words: after micoff's unmute the far end hears the user as soon as after the plain flip
// (no extension, device kept open). Two browsers take turns unmute by unmute, each the only recorder
// of its own source; timed in the page from the unmute to the first words leaving the sender (the bar)
// and to the far end playing them (reported). Headful on a private Xvfb. A device that reopens slower
// than the hotkey gives is kept open instead (PipeWire's monitor behind a large-latency player), and the
// popup says so.
// Without micoff-host (first words without the host): micoff either keeps up with the flip or keeps the
// device open and the popup says why.
// Sources, unmute kinds and the bar: docs/design/release-on-mute.md#first-words-spec.
// Raw samples: e2e/artifacts/release-first-words-<project>-<source>.json (-nohost-monitor without the
// host) and the popup's screenshot release-first-words-<project>-nohost-popup.png.
import type { Page, Worker } from '@playwright/test';
import {
  FIRST_AUDIO_SLOW_MS,
  type FirstAudio,
  type FirstAudioEntry,
  firstWordsNote,
  SLOW_REOPEN_WAIT_MS,
  SLOW_REOPENS_IN_A_ROW,
  waitAfterOpen,
} from '../../extension/src/shared/first-words.ts';
import { KEPT } from '../../extension/src/shared/release-decision.ts';
import type { AudioRig, AudioServerKind } from '../rig/audio-rig.ts';
import { extensionServiceWorker, type LaunchedChromium, launchChromium } from '../rig/chromium.ts';
import { expect, test } from '../rig/fixtures.ts';
import { extensionId } from '../rig/host.ts';
import { MeetingPage } from '../rig/meeting-page.ts';
import { need } from '../rig/needs.ts';
import type { PageServer } from '../rig/page-server.ts';
import { ARTIFACTS_DIR } from '../rig/paths.ts';
import { waitFor } from '../rig/proc.ts';
import { startXvfb, type Xvfb, xvfbMissing } from '../rig/xvfb.ts';
import { INSTRUMENT, recordStreamsOn } from './first-words-util.ts';
import { median, saveArtifact, setReleaseSettings, tabIdOf, tabView } from './release-util.ts';

/** Unmutes per kind and call (docs/design/release-on-mute.md "Limits (known, not hidden)" for 9). */
const CYCLES = Number(process.env.MICOFF_FIRST_WORDS_CYCLES ?? 9);
/** Without the host: hotkey and click only, medians of 7 (the count), about a minute per server. */
const NOHOST_CYCLES = Number(process.env.MICOFF_FIRST_WORDS_NOHOST_CYCLES ?? 7);
/** Opus frame length the page's answer asks for (loopback.js `ptime`): a send time includes the
 * frame's phase, 0 to PTIME_MS after the unmute, on both sides alike; 10 ms frames halve that noise
 * against the default 20 (docs/design/release-on-mute.md#first-words-spec). */
const PTIME_MS = 10;
/** A 10 ms encoded frame at least this big carries the signal, one below it is silence (sizes in
 * docs/design/release-on-mute.md#first-words-spec); every frame of the 100 ms before the unmute (if any:
 * a released device sends none) must be a small one for a sample to count. */
const SPEECH_BYTES = 32;
/** Per unmute kind, micoff's median minus the flip's, at most (docs/design/release-on-mute.md#first-words-spec). */
const BAR_MS = 10;
const KINDS = [
  'hotkey',
  'click',
  'visible',
  ...(process.env.MICOFF_FIRST_WORDS_CODE === '1' ? ['code'] : []),
];
type Kind = 'hotkey' | 'click' | 'visible' | 'code';
/** How long the call's tab stays behind another before it comes back (the `visible` kind). */
const HIDDEN_MS = 500;
/** Each call's unmutes before the sampled ones: what micoff learns to read as intent. */
const WARM_UP_KINDS = ['click', 'hotkey'] as const;
const WARM_UP_MUTES = WARM_UP_KINDS.length;

interface Call {
  name: 'micoff' | 'flip';
  source: string;
  browser: LaunchedChromium;
  meeting: MeetingPage;
  /** micoff's: its service worker and the call's tab. */
  sw?: Worker;
  tabId?: number;
}

type Sample = {
  sent_ms: number | null;
  sent_bytes: number | null;
  before: number[];
  heard_ms: number | null;
};

/** The two sources of the `monitor` case: null sinks playing speech, each remapped as a microphone. */
async function monitorSources(rig: AudioRig): Promise<[string, string]> {
  await rig.pactl(['load-module', 'module-null-sink', 'sink_name=spk2']);
  await rig.pactl(['load-module', 'module-remap-source', 'source_name=mic2', 'master=spk2.monitor']);
  await rig.playInto('spk', 'speech');
  await rig.playInto('spk2', 'speech');
  return ['mic', 'mic2'];
}

/** micoff (with or without the host) and the flip side by side on `display`, each its source's only
 * recorder, the call instrumented. */
async function openCalls(
  rig: AudioRig,
  display: string,
  sources: [string, string],
  url: string,
  withHost: boolean,
): Promise<Call[]> {
  const calls: Call[] = [];
  try {
    for (const [i, name] of (['micoff', 'flip'] as const).entries()) {
      const source = sources[i] as string;
      const browser = await launchChromium({
        env: { ...rig.clientEnv, PULSE_SOURCE: source },
        display,
        realFocus: true,
        withExtension: name === 'micoff',
        withHost,
        // Side by side: with no window manager a window fully covered by the other counts as
        // occluded to Chromium (X11 visibility), which stops drawing it and delays its input.
        extraArgs: [`--window-position=${i * 640},0`, '--window-size=640,800'],
      });
      const call: Call = { name, source, browser, meeting: undefined as unknown as MeetingPage };
      calls.push(call);
      if (name === 'micoff') {
        call.sw = await extensionServiceWorker(browser.context, extensionId());
        await setReleaseSettings(call.sw, { releaseOnMute: true, releaseDelayMs: 0 });
      }
      call.meeting = await MeetingPage.open(browser.context, url);
      await call.meeting.ready();
      await call.meeting.waitForAudioFlowing();
      await call.meeting.page.evaluate(INSTRUMENT);
      if (call.sw) call.tabId = await tabIdOf(call.sw, call.meeting.page.url());
    }
    return calls;
  } catch (e) {
    for (const c of calls) await c.browser.close();
    throw e;
  }
}

/** A fresh rig, the two calls side by side on a private Xvfb on `sources` of it, then `body`; all of
 * it closed after. */
async function inCalls(
  audioServer: AudioServerKind,
  pages: PageServer,
  sources: (rig: AudioRig) => Promise<[string, string]>,
  withHost: boolean,
  body: (rig: AudioRig, calls: Call[]) => Promise<void>,
): Promise<void> {
  need(xvfbMissing());
  const { startAudioRig } = await import('../rig/audio-rig.ts');
  const rig = await startAudioRig(audioServer, { reader: false, tone: false });
  let x: Xvfb | undefined;
  let calls: Call[] = [];
  try {
    const on = await sources(rig);
    x = await startXvfb();
    const url = pages.url(`meeting.html?playout=1&encoded=1&ptime=${PTIME_MS}`);
    calls = await openCalls(rig, x.display, on, url, withHost);
    await body(rig, calls);
  } finally {
    for (const c of calls) await c.browser.close();
    await x?.stop();
    await rig.stop();
  }
}

/** Per kind, `cycles` unmutes of each call taking turns; `settle` mutes a call and waits until it is
 * where the next unmute starts from. */
async function sampleTurns(
  calls: Call[],
  kinds: Kind[],
  cycles: number,
  settle: (c: Call) => Promise<void>,
  otherTab: (c: Call) => Promise<Page>,
): Promise<Record<string, Record<string, Sample[]>>> {
  // One unmute of each kind first: what micoff learns to read as intent (a control, a key).
  for (const c of calls) {
    for (const kind of WARM_UP_KINDS) {
      await settle(c);
      await unmuteBy(kind, c.meeting.page, () => otherTab(c));
      await new Promise((r) => setTimeout(r, 500));
    }
  }
  const samples: Record<string, Record<string, Sample[]>> = {};
  for (const kind of kinds) {
    samples[kind] = { micoff: [], flip: [] };
    for (let i = 0; i < cycles; i++) {
      // Strictly one after the other, never the same browser twice in a row: back to back, micoff's
      // hotkey unmute came late in this two-browser arrangement (not when micoff's browser is alone;
      // docs/design/release-on-mute.md "First words: priming, and the e2e bar").
      for (const c of calls) {
        await settle(c);
        await c.meeting.page.evaluate('window.__unmutedAt = null');
        const sent = c.meeting.page.evaluate(`__sent(4000, ${SPEECH_BYTES})`) as Promise<{
          ms: number;
          bytes: number;
          before: number[];
        } | null>;
        const heard = c.meeting.page.evaluate('__heard(4000)') as Promise<number | null>;
        await unmuteBy(kind, c.meeting.page, () => otherTab(c));
        const s = await sent;
        samples[kind]?.[c.name]?.push({
          sent_ms: s?.ms ?? null,
          sent_bytes: s?.bytes ?? null,
          before: s?.before ?? [],
          heard_ms: await heard,
        });
      }
    }
  }
  return samples;
}

/** Per kind, the sides' medians and micoff minus the flip. micoff's samples `slow` marks (a released
 * device whose reopen then waited longer than SLOW_REOPEN_WAIT_MS once open: the audio server's graph,
 * which nothing in micoff shortens) are left out of its median and counted; the rule that keeps such a
 * device open is checked apart (expectRuleKeeps). */
function summarize(
  samples: Record<string, Record<string, Sample[]>>,
  slow: Record<string, boolean[]> = {},
): Record<string, Record<string, number>> {
  const med = (xs: (number | null)[]) => median(xs.map((v) => v ?? Number.POSITIVE_INFINITY));
  const result: Record<string, Record<string, number>> = {};
  for (const [kind, s] of Object.entries(samples)) {
    const judged = (s.micoff ?? []).filter((_, i) => !slow[kind]?.[i]);
    const micoff = med(judged.map((x) => x.sent_ms));
    const flip = med((s.flip ?? []).map((x) => x.sent_ms));
    result[kind] = {
      micoff_sent_ms: micoff,
      flip_sent_ms: flip,
      micoff_minus_flip_ms: micoff - flip,
      micoff_heard_ms: med(judged.map((x) => x.heard_ms)),
      flip_heard_ms: med((s.flip ?? []).map((x) => x.heard_ms)),
      micoff_judged: judged.length,
      micoff_slow_reopens: (s.micoff?.length ?? 0) - judged.length,
    };
  }
  return result;
}

/** The newest measurement in what micoff's background learned (any call, with or without the host). */
function newest(store: unknown): FirstAudio | null {
  const all = Object.values((store ?? {}) as Record<string, FirstAudioEntry>).flatMap((e) =>
    [e.host, e.no_host].filter((x): x is FirstAudio => x !== null),
  );
  return all.reduce<FirstAudio | null>((a, b) => (a && a.at_ms >= b.at_ms ? a : b), null);
}

/** Per mute of micoff's call (`stores[k]`: what the background had learned at mute k), how long the
 * reopen at the unmute after mute k waited once open: known where that mute released the device and the
 * next mute finds a newer measurement of micoff's (`open_ms` > 0), else null. */
function reopenWaits(stores: unknown[], outcomes: Outcome[]): (number | null)[] {
  return outcomes.map((outcome, k) => {
    const before = newest(stores[k]);
    const after = k + 1 < stores.length ? newest(stores[k + 1]) : null;
    if (outcome !== 'released' || !after || after.open_ms <= 0) return null;
    if (before && before.at_ms >= after.at_ms) return null;
    return waitAfterOpen(after);
  });
}

/** Per kind, which of micoff's samples were slow reopens of a released device; `first` is the index
 * of the first sampled mute in `waits` (after the warm-up unmutes), kinds in the order sampled. */
function slowSamples(
  waits: (number | null)[],
  kinds: string[],
  cycles: number,
  first: number,
): Record<string, boolean[]> {
  return Object.fromEntries(
    kinds.map((kind, n) => [
      kind,
      Array.from({ length: cycles }, (_, i) => (waits[first + n * cycles + i] ?? 0) > SLOW_REOPEN_WAIT_MS),
    ]),
  );
}

/** micoff's rule, seen from outside: after SLOW_REOPENS_IN_A_ROW slow reopens in a row (each waited
 * longer than SLOW_REOPEN_WAIT_MS once open) the next mute keeps the device open, on a page unmuted by
 * key. So the slow released samples left out of the medians are at most the rule's evidence plus the
 * single slow ones between fast ones. */
function expectRuleKeeps(waits: (number | null)[], outcomes: Outcome[]): void {
  for (let k = SLOW_REOPENS_IN_A_ROW; k < outcomes.length; k++) {
    const run = waits.slice(k - SLOW_REOPENS_IN_A_ROW, k);
    if (run.every((w) => w !== null && w > SLOW_REOPEN_WAIT_MS)) {
      expect(
        outcomes[k],
        `mute ${k}: kept after ${SLOW_REOPENS_IN_A_ROW} slow reopens in a row (${run.join('/')} ms once open)`,
      ).toBe('kept');
    }
  }
}

function expectSamples(samples: Record<string, Record<string, Sample[]>>): void {
  for (const [kind, s] of Object.entries(samples)) {
    for (const [who, list] of Object.entries(s)) {
      for (const x of list) {
        expect(x.sent_ms, `${kind} ${who}: the first words left the sender`).not.toBeNull();
        expect(
          Math.max(0, ...x.before),
          `${kind} ${who}: silence just before the unmute (${x.before.join('/')} bytes)`,
        ).toBeLessThan(SPEECH_BYTES);
      }
    }
  }
}

/** What micoff's background learned of the calls' first audio (background/first-audio-store.ts). */
function learned(sw: Worker): Promise<unknown> {
  return sw.evaluate(() =>
    (globalThis as unknown as { micoff: { release: { firstAudio(): unknown } } }).micoff.release.firstAudio(),
  );
}

type Outcome = 'released' | 'kept';

/** After a mute of micoff's call: its device released, or kept open for `why` (the tab view says so). */
async function settled(rig: AudioRig, c: Call, why: string): Promise<Outcome> {
  const sw = c.sw as Worker;
  return waitFor(
    `${c.source} released, or kept open: ${why}`,
    async () => {
      if ((await recordStreamsOn(rig, c.source)) === 0) return 'released' as const;
      const v = await tabView(sw, c.tabId as number);
      return v?.state === 'not_released' && v.reason === why ? ('kept' as const) : null;
    },
    { timeoutMs: 5000 },
  );
}

/** micoff keeps a device open for a reopen slower than the key gives only where one was: once a reopen
 * of micoff's waited longer than SLOW_REOPEN_WAIT_MS once open (the latest one the background learned:
 * none comes after a keep), on either server. PulseAudio's devices wait 0-23 ms once open on an idle
 * machine, but a fresh machine's first timing spec, beside the builds, read two slow ones in a row there
 * (docs/design/release-on-mute.md#first-words-spec): how fast the server reopens is not micoff's to
 * hold, only that the rule acts on what it measured. */
function expectKeptOnlyWhenSlow(outcomes: Outcome[], firstAudio: unknown): void {
  if (!outcomes.includes('kept')) return;
  const latest = Object.values(firstAudio as Record<string, FirstAudioEntry>).flatMap((e) =>
    [e.host, e.no_host].filter((x) => x !== null),
  );
  expect(
    latest.some((x) => x.open_ms > 0 && x.ms - x.open_ms > SLOW_REOPEN_WAIT_MS),
    `kept open after a reopen that waited more than ${SLOW_REOPEN_WAIT_MS} ms once open (learned: ${JSON.stringify(firstAudio)})`,
  ).toBe(true);
  const first = outcomes.indexOf('kept');
  expect(outcomes.slice(first), 'kept from then on').toEqual(outcomes.slice(first).map(() => 'kept'));
}

/** Unmute the way `kind` says; the page's own handler flips `enabled`. */
async function unmuteBy(kind: Kind, page: Page, other: () => Promise<Page>): Promise<void> {
  const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
  switch (kind) {
    case 'hotkey':
      await page.keyboard.down('Control');
      await pause(100);
      await page.keyboard.press('KeyD');
      await page.keyboard.up('Control');
      return;
    case 'click': {
      const box = await page.locator('#unmute').boundingBox();
      if (!box) throw new Error('no unmute button');
      await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2, { steps: 4 });
      await pause(400);
      await page.mouse.down();
      await pause(100);
      await page.mouse.up();
      return;
    }
    case 'visible': {
      const tab = await other();
      await tab.bringToFront();
      await waitFor('the call hidden', async () =>
        (await page.evaluate('document.visibilityState')) === 'hidden' ? true : null,
      );
      await pause(HIDDEN_MS);
      await page.bringToFront();
      await waitFor('the call visible', async () =>
        (await page.evaluate('document.visibilityState')) === 'visible' ? true : null,
      );
      await pause(400);
      await page.evaluate('window.unmute()');
      return;
    }
    case 'code':
      await page.evaluate('window.unmute()');
  }
}

for (const sourceKind of ['monitor', 'clock'] as const) {
  test(`first words on a ${sourceKind} source: micoff's unmute within ${BAR_MS} ms of the plain flip (hotkey, click, tab back in front)`, async ({
    audioServer,
    pages,
  }) => {
    test.setTimeout(480_000);
    /** Per browser, the tab the call hides behind: opened at the first tab switch, kept. */
    const others = new Map<Call, Page>();
    const sources = async (rig: AudioRig): Promise<[string, string]> => {
      if (sourceKind === 'monitor') return monitorSources(rig);
      await rig.addClockedSource('clock1');
      await rig.addClockedSource('clock2');
      return ['clock1', 'clock2'];
    };
    await inCalls(audioServer, pages, sources, true, async (rig, calls) => {
      const otherTab = async (c: Call) => {
        let tab = others.get(c);
        if (!tab) {
          tab = await c.browser.context.newPage();
          await tab.goto(pages.url('index.html').replace('127.0.0.1', 'localhost'));
          others.set(c, tab);
        }
        return tab;
      };
      /** Per mute of micoff's call: released, or kept open because it reopens slower than the key. */
      const outcomes: Outcome[] = [];
      /** Per mute of micoff's call, what its background had learned just before it. */
      const stores: unknown[] = [];
      const sw = calls[0]?.sw as Worker;
      /** Muted, and micoff's device released or kept open saying why (the flip's stays open by
       * definition). */
      const muteAndSettle = async (c: Call) => {
        if (c.name === 'micoff') stores.push(await learned(sw));
        await c.meeting.mute();
        await c.meeting.page.mouse.move(900, 700); // the pointer away from the controls, in one step
        if (c.name === 'micoff') outcomes.push(await settled(rig, c, KEPT.slowReopen));
        await new Promise((r) => setTimeout(r, 700));
      };
      const samples = await sampleTurns(calls, KINDS as Kind[], CYCLES, muteAndSettle, otherTab);
      const firstAudio = await learned(sw);
      const waits = reopenWaits([...stores, firstAudio], outcomes);
      const result = summarize(samples, slowSamples(waits, KINDS, CYCLES, WARM_UP_MUTES));
      saveArtifact(`release-first-words-${audioServer}-${sourceKind}.json`, {
        result,
        samples,
        outcomes,
        waits,
        firstAudio,
      });
      console.log(
        `release-first-words ${audioServer} ${sourceKind}: ${JSON.stringify({ result, outcomes, firstAudio })}`,
      );
      expectSamples(samples);
      expectKeptOnlyWhenSlow(outcomes, firstAudio);
      expectRuleKeeps(waits, outcomes);
      const micoff = calls[0] as Call;
      if (outcomes.includes('kept')) {
        // What the popup says while muted (the last turn left micoff's call unmuted: mute it again).
        await muteAndSettle(micoff);
        const popup = await micoff.browser.context.newPage();
        await popup.goto(`chrome-extension://${extensionId()}/popup.html?tab=${micoff.tabId}`);
        await expect(popup.locator('#tab-state')).toContainText(
          `Muted, microphone kept open: ${KEPT.slowReopen}`,
        );
        await popup.screenshot({
          path: `${ARTIFACTS_DIR}/release-first-words-${audioServer}-${sourceKind}-kept-popup.png`,
          fullPage: true,
        });
        await popup.close();
      }
      for (const kind of ['hotkey', 'click', 'visible']) {
        expect(
          result[kind]?.micoff_minus_flip_ms,
          `${kind}: micoff minus the plain flip (ms)`,
        ).toBeLessThanOrEqual(BAR_MS);
      }
    });
  });
}

test(`first words without micoff-host on a monitor source: micoff's hotkey and click unmutes within ${BAR_MS} ms of the plain flip, or the device kept open and the popup saying why`, async ({
  audioServer,
  pages,
}) => {
  test.setTimeout(240_000);
  await inCalls(audioServer, pages, monitorSources, false, async (rig, calls) => {
    const micoff = calls[0] as Call;
    const sw = micoff.sw as Worker;
    expect((await tabView(sw, micoff.tabId as number))?.state, 'the call captures').toBe('capturing');
    /** Per mute of micoff's call: released, or kept open for the first words. */
    const outcomes: Outcome[] = [];
    /** Every measurement the background learned, as it came (each open's: the store keeps the latest). */
    const measured: string[] = [];
    /** Per mute of micoff's call, what its background had learned just before it. */
    const stores: unknown[] = [];
    const muteAndSettle = async (c: Call) => {
      if (c.name === 'micoff') {
        const store = await learned(sw);
        stores.push(store);
        const now = JSON.stringify(store);
        if (now !== measured.at(-1)) measured.push(now);
      }
      await c.meeting.mute();
      await c.meeting.page.mouse.move(900, 700); // the pointer away from the controls, in one step
      // PulseAudio without the host: kept for the idle null sink (the host would fix it); PipeWire: kept
      // only for a reopen slower than the key gives (as with the host).
      const why = audioServer === 'pulseaudio' ? KEPT.firstWords : KEPT.slowReopen;
      if (c.name === 'micoff') outcomes.push(await settled(rig, c, why));
      await new Promise((r) => setTimeout(r, 700));
    };
    const samples = await sampleTurns(calls, ['hotkey', 'click'], NOHOST_CYCLES, muteAndSettle, async () => {
      throw new Error('no tab-switch unmute here');
    });
    const firstAudio = await learned(sw);
    const waits = reopenWaits([...stores, firstAudio], outcomes);
    const result = summarize(samples, slowSamples(waits, ['hotkey', 'click'], NOHOST_CYCLES, WARM_UP_MUTES));
    // What the popup says while muted (the last settle left micoff's call unmuted: mute it again).
    await muteAndSettle(micoff);
    const view = await tabView(sw, micoff.tabId as number);
    const popup = await micoff.browser.context.newPage();
    await popup.goto(`chrome-extension://${extensionId()}/popup.html?tab=${micoff.tabId}`);
    const note = view?.first_words_need_host_ms ? firstWordsNote(view.first_words_need_host_ms) : null;
    if (note) {
      await expect(popup.locator('#tab-first-words')).toHaveText(note);
      await expect(popup.locator('#tab-state')).toContainText(
        `Muted, microphone kept open: ${KEPT.firstWords}`,
      );
    } else {
      await expect(popup.locator('#tab-first-words')).toHaveCount(0);
    }
    await popup.screenshot({
      path: `${ARTIFACTS_DIR}/release-first-words-${audioServer}-nohost-popup.png`,
      fullPage: true,
    });
    const popupText = await popup.locator('#tab').textContent();
    await popup.close();
    saveArtifact(`release-first-words-${audioServer}-nohost-monitor.json`, {
      result,
      samples,
      outcomes,
      waits,
      firstAudio,
      measured: measured.map((m) => JSON.parse(m)),
      view,
      popup: popupText,
    });
    console.log(
      `release-first-words ${audioServer} nohost-monitor: ${JSON.stringify({ result, outcomes, firstAudio })}`,
    );
    expectSamples(samples);
    for (const kind of ['hotkey', 'click']) {
      expect(
        result[kind]?.micoff_minus_flip_ms,
        `${kind}: micoff without the host minus the plain flip (ms)`,
      ).toBeLessThanOrEqual(BAR_MS);
    }
    const sampled = outcomes.slice(WARM_UP_MUTES, WARM_UP_MUTES + 2 * NOHOST_CYCLES);
    if (audioServer === 'pulseaudio') {
      // PulseAudio's idle null sink delivers a fresh capture's first data up to 2 s late: learned, kept.
      expect(sampled, 'every sampled mute kept the device open').toEqual(sampled.map(() => 'kept'));
      expect(view?.first_words_need_host_ms ?? 0, 'the slow figure the popup names').toBeGreaterThan(
        FIRST_AUDIO_SLOW_MS,
      );
      expect(note, 'the popup says why').not.toBeNull();
    } else {
      // pipewire-pulse has no such delay: released as with the host, or kept where a reopen of micoff's
      // was slower than the key gives (as with the host), never for the host's sake.
      expectKeptOnlyWhenSlow(outcomes, firstAudio);
      expectRuleKeeps(waits, outcomes);
      expect(view?.first_words_need_host_ms ?? null, 'nothing to say about the host').toBeNull();
    }
  });
});
