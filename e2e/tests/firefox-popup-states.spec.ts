// The popup says only what is true, on Firefox ESR: each state a user meets, driven for real against
// micoff-host and the rig's audio server, each sentence checked against what the audio server, the
// call and the badge show, and a screenshot per state (e2e/artifacts/popup-states/firefox-<state>.png).
// One server: no sentence depends on which. A one-time grant is Chromium's alone (popup-states.spec.ts);
// what each state shows: docs/usage.md#the-popup-state-by-state.
import type { Page } from 'puppeteer-core';
import { type Badge, MIC_BADGE } from '../../extension/src/shared/mic-state.ts';
import type { AudioRig } from '../rig/audio-rig.ts';
import {
  backgroundTabs,
  firefoxMissing,
  type LaunchedFirefox,
  launchFirefox,
  pageWaitFor,
  popupForTab,
  updateSettings,
} from '../rig/firefox.ts';
import { expect, test } from '../rig/fixtures.ts';
import { need } from '../rig/needs.ts';
import type { PageServer } from '../rig/page-server.ts';
import { waitFor } from '../rig/proc.ts';
import { firefoxRecords, openCall } from './firefox-quiet-util.ts';
import { internalNamesIn, POPUP_VIEWPORT, popupShotPath, systemHostPresent } from './popup-states-util.ts';

test.skip(({ audioServer }) => audioServer !== 'pulseaudio', 'one audio server is enough: PulseAudio only');

/** Firefox's release delay and micoff's: Firefox closes a muted microphone once it has been on this
 * long, so a microphone muted right after it came on stays open that long, long enough to see it. */
const DELAY_MS = 5000;

/** The toolbar badge of `tabId` (text and title), read from one of the extension's pages. */
async function badgeOf(extensionPage: Page, tabId: number): Promise<{ text: string; title: string }> {
  const json = await extensionPage.evaluate(async (id) => {
    type Action = {
      getBadgeText(d: { tabId: number }): Promise<string>;
      getTitle(d: { tabId: number }): Promise<string>;
    };
    const a = (globalThis as unknown as { browser: { action: Action } }).browser.action;
    return JSON.stringify({
      text: await a.getBadgeText({ tabId: id }),
      title: await a.getTitle({ tabId: id }),
    });
  }, tabId);
  return JSON.parse(json);
}
const said = (b: Badge) => ({ text: b.text, title: b.title });

/** Waits until the popup's `selector` reads `re`; returns the text. */
async function shows(popup: Page, selector: string, re: RegExp, timeoutMs = 15_000): Promise<string> {
  const text = await pageWaitFor(
    popup,
    `the popup's ${selector} reading ${re}`,
    (arg: string) => {
      const [sel, source] = JSON.parse(arg) as [string, string];
      const text = document.querySelector(sel)?.textContent ?? '';
      return new RegExp(source).test(text) ? text : null;
    },
    timeoutMs,
    JSON.stringify([selector, re.source]),
  );
  return text ?? '';
}

/** No internal name in what the popup shows, then its screenshot. */
async function shot(popup: Page, state: string): Promise<void> {
  // biome-ignore lint/performance/useDomNodeTextContent: what is rendered is the point (not a closed <details>)
  const text = await popup.evaluate(() => document.body.innerText);
  expect(internalNamesIn(text), state).toEqual([]);
  await popup.screenshot({ path: popupShotPath('firefox', state), fullPage: true });
}

/** A call on the meeting page, capturing at the server, and the popup for its tab with the tab's id. */
async function callWithPopup(ff: LaunchedFirefox, rig: AudioRig, pages: PageServer, extensionPage: Page) {
  const meeting = await openCall(ff, rig, pages);
  const url = meeting.url;
  const origin = new URL(url).origin;
  const popup = await popupForTab(ff, extensionPage, origin);
  await popup.setViewport(POPUP_VIEWPORT);
  const tabId = Number(
    Object.entries(await backgroundTabs(extensionPage)).find(([, v]) => v.origin === origin)?.[0],
  );
  return { meeting, popup, tabId };
}

const STATE = '#tab-state > div';

test('Firefox ESR: unmuted, Firefox’s release, micoff’s quiet part, muted before the release: each sentence as the server, the call and the badge have it', async ({
  rig,
  pages,
}) => {
  need(firefoxMissing());
  test.setTimeout(120_000);
  const ff = await launchFirefox({ env: rig.clientEnv, nativeRelease: { delayMs: DELAY_MS } });
  try {
    const options = await ff.openExtensionPage('options.html');
    await updateSettings(options, { releaseDelayMs: DELAY_MS });
    const { meeting, popup, tabId } = await callWithPopup(ff, rig, pages, options);

    // Unmuted: on, open at the server; both parts say what they do at a mute.
    await shows(popup, STATE, /^Microphone on since \d/);
    await shows(popup, '#tab-server', /^Audio server: 1 record stream open: .+ \(live\)\.$/);
    await shows(popup, '#tab-native-release', /^Firefox's part: .* at the next mute\.$/);
    await shows(popup, '#tab-micoff-part', /^micoff's part: while you are muted, /);
    await shows(popup, '#cpu-body', /^Whole browser /);
    await expect.poll(() => badgeOf(options, tabId)).toEqual(said(MIC_BADGE.on));
    await shot(popup, 'unmuted');

    // Firefox's release: gone from the server; the first line, Firefox's part and the chart (a released
    // interval: the saving counts from there) all say released.
    await meeting.mute();
    await waitFor('Firefox’s release', async () => ((await firefoxRecords(rig)) === 0 ? true : null), {
      timeoutMs: DELAY_MS + 5000,
    });
    await shows(popup, STATE, /^Muted since .+: Firefox released the microphone\.$/);
    await shows(
      popup,
      '#tab-server',
      /^Audio server: no record stream from the browser \(microphone closed\)\.$/,
    );
    await shows(
      popup,
      '#tab-native-release',
      /^Firefox's part: Firefox released the microphone (as you muted|\d+\.\d s after the mute): its own release is in effect\.$/,
    );
    await pageWaitFor(popup, 'the chart shading the release', () =>
      document.querySelectorAll('#chart svg rect.released').length === 1 ? true : null,
    );
    await expect.poll(() => badgeOf(options, tabId)).toEqual(said(MIC_BADGE.released_by_firefox));
    await shot(popup, 'firefox-release');

    // micoff's quiet part: the call sends nothing, and the popup says since when.
    await shows(popup, '#tab-micoff-part', /^micoff's part: the call has sent nothing since \d/, 20_000);
    const sent = async () => (await meeting.stats()).outbound?.packetsSent ?? 0;
    const before = await sent();
    await new Promise((r) => setTimeout(r, 1000));
    expect((await sent()) - before, 'no packets while the popup says so').toBeLessThanOrEqual(2);
    await shot(popup, 'micoff-quiet');
    console.log(
      `firefox popup states: ${await popup.evaluate(() => document.querySelector('#saved-cpu')?.textContent)}`,
    );

    // Muted before the release: unmuted (the device reopens) and muted at once; Firefox waits its delay.
    await meeting.unmute();
    await waitFor('the reopen', async () => ((await firefoxRecords(rig)) === 1 ? true : null));
    await shows(popup, STATE, /^Microphone on since \d/);
    await meeting.mute();
    await shows(
      popup,
      STATE,
      /^Muted since .+, microphone still open: Firefox's own release closes it after its delay\.$/,
    );
    await shows(
      popup,
      '#tab-native-release',
      /^Firefox's part: checking at the audio server whether .* At the last mute, Firefox released/,
    );
    await shows(popup, '#tab-server', /^Audio server: 1 record stream open: .+ \(live\)\.$/);
    await expect.poll(() => badgeOf(options, tabId)).toEqual(said(MIC_BADGE.muted_open));
    await shot(popup, 'muted-before-release');
    expect(await firefoxRecords(rig), 'still open after the screenshot').toBe(1);
  } finally {
    await ff.close();
  }
});

test('Firefox ESR without micoff-host: the popup says what needs it, and still what the tab does', async ({
  rig,
  pages,
}) => {
  need(firefoxMissing());
  need(systemHostPresent('firefox'));
  test.setTimeout(60_000);
  const ff = await launchFirefox({
    env: rig.clientEnv,
    nativeRelease: { delayMs: DELAY_MS },
    withHost: false,
  });
  try {
    const options = await ff.openExtensionPage('options.html');
    const { popup, tabId } = await callWithPopup(ff, rig, pages, options);
    await shows(popup, '#host-pill', /^host not installed$/);
    await shows(popup, '#host .notice b', /^micoff-host is not installed for this browser$/);
    await shows(popup, STATE, /^Microphone on since \d/);
    await shows(popup, '#tab-native-release', /^Firefox's part: .*, which needs micoff-host\.$/);
    await shows(popup, '#tab-cpu', /^Audio path CPU: needs micoff-host \(see above\)\.$/);
    await shows(popup, '#chart', /^Needs micoff-host \(see above\)\.$/);
    await expect.poll(() => badgeOf(options, tabId)).toEqual(said(MIC_BADGE.on));
    await shot(popup, 'no-host');
  } finally {
    await ff.close();
  }
});
