// Trust boundary: what a web page (and code in a web page's renderer) can get out of micoff.
// The attacks run for real on Chromium: page scripts forging the page <-> content events, and the
// content script's own isolated world (reached through the DevTools protocol, standing in for a
// compromised or confused content script) opening the popup's port. Design and results:
// docs/design/security.md.
import type { Frame, Page } from '@playwright/test';
import { spyOnEventBuiltins } from '../../extension/src/shared/messages/page-script-spy.ts';
import { POPUP_PORT } from '../../extension/src/shared/messages/popup-background.ts';
import { MeetingPage } from '../rig/meeting-page.ts';
import { waitFor } from '../rig/proc.ts';
import { expect, test } from './release-fixtures.ts';
import {
  BLUETOOTH_RIG_ONLY,
  releaseFrames,
  saveArtifact,
  tabIdOf,
  tabView,
  whenStreams,
  withBluetoothRig,
} from './release-util.ts';

/** Evaluates `expression` in micoff's content-script world (the isolated world named after the
 * extension) of the page's top frame, through the DevTools protocol. */
async function inContentScriptWorld<T>(page: Page, expression: string): Promise<T> {
  const cdp = await page.context().newCDPSession(page);
  const worlds: { id: number; name: string; auxData?: { type?: string; frameId?: string } }[] = [];
  cdp.on('Runtime.executionContextCreated', (e) => worlds.push(e.context));
  await cdp.send('Runtime.enable');
  const { frameTree } = await cdp.send('Page.getFrameTree');
  const world = await waitFor('micoff content-script world', async () =>
    worlds.find(
      (w) =>
        w.name === 'micoff' && w.auxData?.type === 'isolated' && w.auxData.frameId === frameTree.frame.id,
    ),
  );
  const r = await cdp.send('Runtime.evaluate', {
    expression,
    contextId: world.id,
    awaitPromise: true,
    returnByValue: true,
  });
  await cdp.detach();
  if (r.exceptionDetails)
    throw new Error(`in the content-script world: ${JSON.stringify(r.exceptionDetails)}`);
  return r.result.value as T;
}

test('popup port: a content-script context opening the popup port is refused (told nothing, runs nothing)', async ({
  ext,
  serviceWorker,
  pages,
  context,
}) => {
  await ext.waitHostConnected();
  const page = await context.newPage();
  await page.goto(pages.url('index.html'));
  const seen = await inContentScriptWorld<{ disconnected: boolean; got: string[] }>(
    page,
    `new Promise((resolve) => {
      const got = [];
      const port = chrome.runtime.connect({ name: ${JSON.stringify(POPUP_PORT)} });
      port.onMessage.addListener((m) => got.push(m.type));
      port.onDisconnect.addListener(() => resolve({ disconnected: true, got }));
      port.postMessage({ type: 'popup_hello', tab_id: 1 });
      port.postMessage({ type: 'run_doctor' });
      setTimeout(() => resolve({ disconnected: false, got }), 3000);
    })`,
  );
  expect(seen).toEqual({ disconnected: true, got: [] });
  // The background holds no popup for it (so no CPU subscription at the host either).
  expect(
    await serviceWorker.evaluate(() =>
      (globalThis as unknown as { micoff: { popups: { count(): number } } }).micoff.popups.count(),
    ),
  ).toBe(0);

  // Control: our own popup page, on the same port name, is answered.
  const popup = await context.newPage();
  await popup.goto(`chrome-extension://${await serviceWorker.evaluate(() => chrome.runtime.id)}/popup.html`);
  await expect(popup.locator('#host-pill')).toHaveText(/^host \d+\.\d+\.\d+/);
});

type Answers = Record<string, { allow: boolean; reason: string | null } | null>;
const probe = (f: Frame, labels: string[]) =>
  f.evaluate((l) => (window as unknown as { probe(l: string[]): Promise<Answers> }).probe(l), labels);

test('cross-tab probing: a page without microphone permission learns nothing about another tab`s Bluetooth capture', async ({
  pages,
  audioServer,
}) => {
  test.skip(audioServer !== 'pulseaudio', BLUETOOTH_RIG_ONLY);
  test.setTimeout(120_000);
  await withBluetoothRig(async ({ bt, browser, sw, ext }) => {
    const sources = JSON.parse(await bt.pactl(['-f', 'json', 'list', 'sources'])) as {
      name: string;
      description: string;
    }[];
    const mic = sources.find((x) => x.name === 'mic');
    if (!mic) throw new Error(`no source \`mic\` at the rig: ${JSON.stringify(sources)}`);
    // Chromium's label for the default device, the source's own description, and guesses.
    const labels = ['Default', mic.description, `Default - ${mic.description}`, 'Headset', 'Bluetooth'];

    // The attacker: a page on another origin whose microphone permission is "denied" (Chromium's fake
    // permission UI grants every origin; the DevTools protocol takes this one back), embedding a frame of
    // the meeting's own origin without allow="microphone" (denied by the permissions policy).
    const attackerOrigin = pages.origin.replace('127.0.0.1', 'localhost');
    const attacker = await browser.context.newPage();
    const cdp = await browser.context.newCDPSession(attacker);
    await cdp.send('Browser.setPermission', {
      permission: { name: 'microphone' },
      setting: 'denied',
      origin: attackerOrigin,
    });
    await attacker.goto(`${attackerOrigin}/probe.html?frame=${encodeURIComponent(pages.url('probe.html'))}`);
    const frame = await waitFor('the embedded probe frame', async () => {
      const f = attacker.frames().find((x) => x !== attacker.mainFrame() && x.url().startsWith(pages.origin));
      return f && (await f.evaluate(() => typeof (window as { probe?: unknown }).probe === 'function'))
        ? f
        : null;
    });
    const permissions = await Promise.all(
      [attacker.mainFrame(), frame].map((f) =>
        f.evaluate(async () => (await navigator.permissions.query({ name: 'microphone' })).state),
      ),
    );
    expect(permissions).toEqual(['denied', 'denied']);

    const quiet = { top: await probe(attacker.mainFrame(), labels), frame: await probe(frame, labels) };

    // Another tab captures from the Bluetooth source (the default one), as the host sees.
    const meeting = await MeetingPage.open(browser.context, pages.url('meeting.html'));
    await meeting.ready();
    await ext.waitAudio('a Chromium record stream on a bluetooth source (host view)', (s) =>
      s.streams.some(
        (x) => x.kind === 'record' && /chrom/i.test(`${x.application_name}`) && x.device_bus === 'bluetooth',
      ),
    );
    const busy = { top: await probe(attacker.mainFrame(), labels), frame: await probe(frame, labels) };
    saveArtifact('trust-probe-answers.json', { labels, quiet, busy });
    expect(busy).toEqual(quiet);

    // Its forged reports did not count: no devices, no badge, for the attacker's tab.
    const meetingTab = await tabIdOf(sw, meeting.page.url());
    const frames = await releaseFrames(sw);
    expect(Object.keys(frames)).toEqual([String(meetingTab)]);

    // Control: the meeting itself, which really captures from the headset, still gets the Bluetooth
    // verdict (its label "Default" names the server's default source).
    await meeting.mute();
    const v = await waitFor('meeting tab view not_released', async () => {
      const x = await tabView(sw, meetingTab);
      return x?.state === 'not_released' ? x : null;
    });
    expect(v.reason).toMatch(/bluetooth/i);
  });
});

/** What a page script can try against the page <-> content channel: the event names micoff used before
 * the secret channel (anyone could read them in page.js), and a handshake offer of its own secret followed by
 * messages on the names that secret would give. `direction` picks who it pretends to be. */
function forge(page: Page, direction: 'to-content' | 'to-page', message: unknown): Promise<void> {
  return page.evaluate(
    ({ direction, text }) => {
      const secret = Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) =>
        b.toString(16).padStart(2, '0'),
      ).join('');
      const fire = (type: string, detail: string) =>
        window.dispatchEvent(new CustomEvent(type, { detail, cancelable: true }));
      fire('micoff:handshake', secret);
      fire(`micoff:${secret}:${direction}`, text);
      fire(direction === 'to-content' ? 'micoff:page' : 'micoff:content', text);
    },
    { direction, text: JSON.stringify(message) },
  );
}

test('page channel, page -> content: a page script cannot fake its tab`s state (badge) by forging reports', async ({
  rig,
  serviceWorker,
  releasing: meeting,
}) => {
  const tabId = await tabIdOf(serviceWorker, meeting.page.url());
  await meeting.mute();
  await whenStreams(rig, 'released', (n) => n === 0, 2000);
  await waitFor('tab view released', async () => (await tabView(serviceWorker, tabId))?.state === 'released');
  // The page claims its microphone is on (badge MIC) while it is released.
  await forge(meeting.page, 'to-content', {
    type: 'state',
    groups: [
      {
        id: '0.1',
        state: 'capturing',
        since_ms: Date.now(),
        reason: null,
        label: 'Default',
        tracks: 1,
        enabled: 1,
      },
    ],
  });
  const end = Date.now() + 1500;
  while (Date.now() < end) {
    expect((await tabView(serviceWorker, tabId))?.state).toBe('released');
    await new Promise((r) => setTimeout(r, 50));
  }
});

test('page channel, content -> page: a page script cannot turn release off by forging the content script`s config', async ({
  rig,
  releasing: meeting,
}) => {
  await meeting.waitForAudioFlowing();
  await forge(meeting.page, 'to-page', {
    type: 'config',
    delay_ms: 10_000,
    release: false,
    reason: 'forged',
  });
  await meeting.mute();
  // Released at once (the real config: delay 0), not kept open by the forged one.
  await whenStreams(rig, 'released despite the forged config', (n) => n === 0, 2000);
});

test('page channel: a page script listening and hooking the DOM reads none of the channel`s traffic', async ({
  rig,
  releasing: meeting,
}) => {
  await meeting.waitForAudioFlowing();
  // What a page script can do once it runs: listen on every name it can know, and wrap the DOM's event
  // built-ins to see whatever goes through them from now on.
  await meeting.page.evaluate(() => {
    const seen: string[] = [];
    (window as unknown as { __seen: string[] }).__seen = seen;
    for (const type of ['micoff:page', 'micoff:content', 'micoff:handshake']) {
      window.addEventListener(type, (e) => seen.push(`${type}: ${String((e as CustomEvent).detail)}`), true);
    }
    const parse = JSON.parse;
    JSON.parse = (text: string, ...rest: unknown[]) => {
      seen.push(`parse ${text.slice(0, 80)}`);
      return parse(text, ...(rest as []));
    };
  });
  await meeting.page.evaluate(`(${spyOnEventBuiltins})(window.__seen)`);
  // Traffic on the channel: state reports, a release question and its answer, a reacquire.
  await meeting.mute();
  await whenStreams(rig, 'released', (n) => n === 0, 2000);
  await meeting.unmute();
  await whenStreams(rig, 'capturing again', (n) => n === 1, 3000);
  const seen = await meeting.page.evaluate(() => (window as unknown as { __seen: string[] }).__seen);
  expect(seen.filter((s) => /micoff|groups|policy|config/.test(s))).toEqual([]);
});
