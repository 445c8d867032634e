// What both Firefox quiet specs use (firefox-quiet.spec.ts, the CPU bars; firefox-quiet-unmute.spec.ts,
// the page's, the popup's and the far end's view): micoff's delay as the installer gives it, a call on
// the meeting page, the moment micoff took a muted call's senders off the wire.
import type { Page } from 'puppeteer-core';
import { QUIET_HOLD_MS } from '../../extension/src/shared/firefox-release.ts';
import type { AudioRig } from '../rig/audio-rig.ts';
import { backgroundTabs, type LaunchedFirefox, pageWaitFor, updateSettings } from '../rig/firefox.ts';
import { MeetingPage } from '../rig/meeting-page.ts';
import { isFirefox } from '../rig/pactl.ts';
import type { PageServer } from '../rig/page-server.ts';
import { waitFor } from '../rig/proc.ts';

/** Firefox's delay and micoff's (the installer gives Firefox micoff's): short, so the release follows
 * the mute at once. */
export const DELAY_MS = 300;

export const firefoxRecords = async (rig: AudioRig) => (await rig.recordStreams()).filter(isFirefox).length;

/** A fresh call on the meeting page, once Firefox's record stream runs at the server. */
export async function openCall(ff: LaunchedFirefox, rig: AudioRig, pages: PageServer, query = '') {
  const url = pages.url(`meeting.html${query}`);
  const page = await ff.browser.newPage();
  await page.goto(url);
  const meeting = new MeetingPage(page, url);
  await pageWaitFor(page, 'the meeting page', () => window.ready !== undefined);
  await meeting.ready();
  await waitFor('Firefox capturing at the server', async () =>
    (await firefoxRecords(rig)) > 0 ? true : null,
  );
  return meeting;
}

/** The sender's packetsSent, read by the page (outbound-rtp). */
const packetsSent = (page: Page) =>
  page.evaluate(() => window.stats().then((s) => s.outbound?.packetsSent ?? 0)) as Promise<number>;

/** When micoff took a muted tab's senders off the wire, as the page world reported it to the background
 * (`quiet_since_ms`, read through `extensionPage`). */
export async function whenQuiet(
  extensionPage: Page,
  timeoutMs = DELAY_MS + QUIET_HOLD_MS + 5000,
): Promise<number> {
  return waitFor(
    'micoff to take the muted call’s senders off the wire (the tab’s quiet_since_ms)',
    async () => {
      const quiet = Object.values(await backgroundTabs(extensionPage)).find((v) => v.quiet_since_ms);
      return quiet?.quiet_since_ms ?? null;
    },
    { timeoutMs, intervalMs: 100 },
  );
}

/** Packets the page's sender sent over `ms`. */
export async function sentOver(page: Page, ms: number): Promise<number> {
  const a = await packetsSent(page);
  await new Promise((r) => setTimeout(r, ms));
  return (await packetsSent(page)) - a;
}

/** micoff's release delay as the installer gives it to Firefox. */
export async function micoffDelay(ff: LaunchedFirefox): Promise<void> {
  const options = await ff.openExtensionPage('options.html');
  await updateSettings(options, { releaseDelayMs: DELAY_MS });
  await options.close();
}
