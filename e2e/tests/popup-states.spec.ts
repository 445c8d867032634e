// The popup says only what is true, on Chromium: each state a user meets, driven for real against
// micoff-host and the rig's audio server, each sentence checked against what the audio server, the
// badge and the permission show, and a screenshot per state (e2e/artifacts/popup-states/
// chromium-<state>.png). One server: no sentence depends on which. Firefox's states:
// firefox-popup-states.spec.ts; what each state shows: docs/usage.md#the-popup-state-by-state.

import type { BrowserContext, Page, Worker } from '@playwright/test';
import { CLOSED_LATENCY_LINE } from '../../extension/src/popup/latency-section.ts';
import { ONE_TIME_GRANT_NOTE } from '../../extension/src/popup/tab-section.ts';
import { type Badge, MIC_BADGE } from '../../extension/src/shared/mic-state.ts';
import type { AudioRig } from '../rig/audio-rig.ts';
import { extensionServiceWorker, launchChromium } from '../rig/chromium.ts';
import { expect, test } from '../rig/fixtures.ts';
import { extensionId as builtExtensionId } from '../rig/host.ts';
import { MeetingPage } from '../rig/meeting-page.ts';
import { need } from '../rig/needs.ts';
import { isChromium } from '../rig/pactl.ts';
import { waitFor } from '../rig/proc.ts';
import { ExtensionWorker } from '../rig/service-worker.ts';
import { internalNamesIn, POPUP_VIEWPORT, popupShotPath, systemHostPresent } from './popup-states-util.ts';
import { setReleaseSettings, tabIdOf } from './release-util.ts';

test.skip(({ audioServer }) => audioServer !== 'pulseaudio', 'one audio server is enough: PulseAudio only');

/** micoff's release delay here: a muted microphone stays open this long after its reopen, long enough
 * to see that state. */
const DELAY_MS = 6000;

const chromiumRecords = async (rig: AudioRig) => (await rig.recordStreams()).filter(isChromium).length;

/** The toolbar badge of `tabId`: its text and title (the colour is the background's to pick). */
const badgeOf = (sw: Worker, tabId: number) =>
  sw.evaluate(
    async (id) => ({
      text: await chrome.action.getBadgeText({ tabId: id }),
      title: await chrome.action.getTitle({ tabId: id }),
    }),
    tabId,
  );
const said = (b: Badge) => ({ text: b.text, title: b.title });

/** The popup for the meeting's tab, sized like the toolbar's. */
async function popupFor(context: BrowserContext, extensionId: string, tabId: number): Promise<Page> {
  const popup = await context.newPage();
  await popup.setViewportSize(POPUP_VIEWPORT);
  await popup.goto(`chrome-extension://${extensionId}/popup.html?tab=${tabId}`);
  return popup;
}

/** No internal name in what the popup shows, then its screenshot. */
async function shot(popup: Page, state: string): Promise<void> {
  // biome-ignore lint/performance/useDomNodeTextContent: what is rendered is the point (not a closed <details>)
  expect(internalNamesIn(await popup.locator('body').innerText()), state).toEqual([]);
  await popup.screenshot({ path: popupShotPath('chromium', state), fullPage: true });
}

test('Chromium: unmuted, released, muted before the release: each sentence as the server and the badge have it', async ({
  context,
  extensionId,
  serviceWorker,
  ext,
  rig,
  pages,
}) => {
  test.setTimeout(90_000);
  await ext.waitHostConnected();
  await setReleaseSettings(serviceWorker, { releaseOnMute: true, releaseDelayMs: DELAY_MS });
  // A lasting grant before the call, as "Allow while visiting the site" leaves one: the page does not
  // have to ask, so no one-time note.
  const url = pages.url('meeting.html');
  await context.grantPermissions(['microphone'], { origin: new URL(url).origin });
  const meeting = await MeetingPage.open(context, url);
  await meeting.ready();
  await meeting.waitForAudioFlowing();
  const tabId = await tabIdOf(serviceWorker, url);
  const popup = await popupFor(context, extensionId, tabId);
  const state = popup.locator('#tab-state > div').first();
  const server = popup.locator('#tab-server');

  // Unmuted: on, open at the server, the badge names the microphone.
  await expect(state).toHaveText(/^Microphone on since \d/);
  expect(await chromiumRecords(rig)).toBe(1);
  await expect(server).toHaveText(/^Audio server: 1 record stream open: .+ \(live\)\.$/);
  await expect(popup.locator('#tab-grant')).toHaveCount(0);
  await expect.poll(() => badgeOf(serviceWorker, tabId)).toEqual(said(MIC_BADGE.on));
  // The live figures, labelled for people: the whole browser's total beside its busiest audio threads.
  await expect(popup.locator('#cpu-body table')).toBeVisible({ timeout: 15_000 });
  await expect(popup.locator('#cpu-body .totals')).toContainText(
    /^Whole browser [\d.]+ %Audio server [\d.]+ %$/,
  );
  await expect(popup.locator('#streams-body')).toContainText(/chromium/i);
  await expect(popup.locator('#saved-energy')).not.toHaveText(/asking micoff-host/, { timeout: 10_000 });
  await shot(popup, 'unmuted');

  // Released: gone from the server, the chart shades it, no badge.
  await meeting.mute();
  await waitFor('the release (no Chromium record stream)', async () =>
    (await chromiumRecords(rig)) === 0 ? true : null,
  );
  await expect(state).toHaveText(/^Muted: microphone released since \d/);
  await expect(server).toHaveText('Audio server: no record stream from the browser (microphone closed).');
  await expect(popup.locator('#chart svg rect.released')).toHaveCount(1, { timeout: 15_000 });
  await expect.poll(() => badgeOf(serviceWorker, tabId)).toEqual(said(MIC_BADGE.released));
  // No grant is claimed for a capture that is not there.
  await expect(popup.locator('#tab-latency')).toHaveText(CLOSED_LATENCY_LINE);
  await shot(popup, 'released');

  // Muted before the release: unmuted (the device reopens) and muted at once, micoff waits its delay.
  await meeting.unmute();
  await waitFor('the reopen', async () => ((await chromiumRecords(rig)) === 1 ? true : null));
  await expect(state).toHaveText(/^Microphone on since \d/);
  await meeting.mute();
  await expect(state).toHaveText(
    'Muted, microphone still open: micoff releases it once its release delay has passed.',
  );
  await expect(server).toHaveText(/^Audio server: 1 record stream open: .+ \(live\)\.$/);
  await expect.poll(() => badgeOf(serviceWorker, tabId)).toEqual(said(MIC_BADGE.muted_open));
  await shot(popup, 'muted-before-release');
  expect(await chromiumRecords(rig), 'still open after the screenshot').toBe(1);

  expect(await popup.locator('#tab-grant').count(), 'a lasting grant: no one-time note').toBe(0);
});

test('Chromium: a site that had to ask for the microphone: the one-time note, true for either answer', async ({
  rig,
  pages,
}) => {
  test.setTimeout(60_000);
  // Chromium's own permission layer (no auto-accepting fake UI): the page's first ask meets no grant
  // (headless answers the prompt "no"), then the site is allowed and the page asks again, as after a
  // prompt the user answered.
  const b = await launchChromium({ env: rig.clientEnv, realPermissions: true });
  try {
    const extensionId = builtExtensionId();
    const sw = await extensionServiceWorker(b.context, extensionId);
    await new ExtensionWorker(sw).waitHostConnected();
    const url = pages.url('index.html');
    const page = await b.context.newPage();
    await page.goto(url);
    const ask = () =>
      page.evaluate(() =>
        navigator.mediaDevices.getUserMedia({ audio: true }).then(
          (s) => {
            (window as unknown as { held: MediaStream }).held = s;
            return 'granted';
          },
          (e: Error) => e.name,
        ),
      );
    expect(await ask(), 'no grant at the first ask').toBe('NotAllowedError');
    await b.context.grantPermissions(['microphone'], { origin: new URL(url).origin });
    expect(await ask()).toBe('granted');
    const tabId = await tabIdOf(sw, url);
    const popup = await popupFor(b.context, extensionId, tabId);
    await expect(popup.locator('#tab-state > div').first()).toHaveText(/^Microphone on since \d/);
    await expect(popup.locator('#tab-grant')).toHaveText(ONE_TIME_GRANT_NOTE);
    await expect(popup.locator('#cpu-body table')).toBeVisible({ timeout: 15_000 }); // the whole popup, drawn
    await shot(popup, 'one-time-grant');
  } finally {
    await b.close();
  }
});

test('Chromium without micoff-host: the popup says what needs it, and still what the tab does', async ({
  rig,
  pages,
}) => {
  need(systemHostPresent('chromium'));
  test.setTimeout(60_000);
  const b = await launchChromium({ env: rig.clientEnv, withHost: false });
  try {
    const extensionId = builtExtensionId();
    const sw = await extensionServiceWorker(b.context, extensionId);
    const url = pages.url('meeting.html');
    const meeting = await MeetingPage.open(b.context, url);
    await meeting.ready();
    const tabId = await tabIdOf(sw, url);
    const popup = await popupFor(b.context, extensionId, tabId);
    await expect(popup.locator('#host-pill')).toHaveText('host not installed');
    await expect(popup.locator('#host .notice b')).toHaveText(
      'micoff-host is not installed for this browser',
    );
    await expect(popup.locator('#host .notice .command code')).toHaveText(/^micoff-host install/);
    // The tab's state is the extension's own: said as with the host.
    await expect(popup.locator('#tab-state > div').first()).toHaveText(/^Microphone on since \d/);
    await expect.poll(() => badgeOf(sw, tabId)).toEqual(said(MIC_BADGE.on));
    // What needs the host says so, not "waiting".
    await expect(popup.locator('#tab-cpu')).toHaveText('Audio path CPU: needs micoff-host (see above).');
    await expect(popup.locator('#cpu-body')).toHaveText('Needs micoff-host (see above).');
    await expect(popup.locator('#chart')).toHaveText('Needs micoff-host (see above).');
    await expect(popup.locator('#tab-latency')).toHaveText(/^Capture latency: not available/);
    await shot(popup, 'no-host');
  } finally {
    await b.close();
  }
});
