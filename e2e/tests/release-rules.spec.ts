// Release-on-mute's rules as a user meets them: the delay rule, clones, the page's own stop(), the
// per-site switch, the legacy prefixed getUserMedia, about:blank and srcdoc frames, the badge and the
// popup.

import { MIC_BADGE } from '../../extension/src/shared/mic-state.ts';
import { waitFor } from '../rig/proc.ts';
import { expect, test } from './release-fixtures.ts';
import { holdsFor, setReleaseSettings, tabIdOf, tabView, whenStreams } from './release-util.ts';

const none = (n: number) => n === 0;
const some = (n: number) => n >= 1;

test('delay rule: max(0, delay - time since on); re-enable cancels a pending release', async ({
  rig,
  openMeeting,
  serviceWorker,
}) => {
  const DELAY = 2000;
  await setReleaseSettings(serviceWorker, { releaseOnMute: true, releaseDelayMs: DELAY });
  const meeting = await openMeeting();
  const tabId = await tabIdOf(serviceWorker, meeting.page.url());
  // When the device came on, in the page's own clock (the same machine's epoch ms as ours).
  const onAt = await waitFor('the tab view capturing', async () => {
    const v = await tabView(serviceWorker, tabId);
    return v?.state === 'capturing' ? (v.since_ms ?? null) : null;
  });
  // Mute about 1 s after it came on: the release waits for the REST of the delay, ~1 s from the mute.
  await new Promise((r) => setTimeout(r, Math.max(0, onAt + 1000 - Date.now())));
  await meeting.mute();
  const mutedAt = Date.now();
  const goneAt = await whenStreams(rig, 'the release after the delay', none, 5000);
  // Not before `delay` since it came on (a little slack for the two clocks' reads)...
  expect(goneAt - onAt).toBeGreaterThan(DELAY - 100);
  // ...and not a full delay from the mute either (that would be >= 2000 ms here).
  expect(goneAt - mutedAt).toBeLessThan(DELAY - 500);
  expect(goneAt - onAt).toBeLessThan(DELAY + 250);

  await meeting.unmute();
  await whenStreams(rig, 'a record stream back', some);
  // Muted shortly after coming on, unmuted before the delay: never released.
  await meeting.mute();
  await holdsFor(rig, 'kept during the delay', some, 800);
  await meeting.unmute();
  await holdsFor(rig, 'a cancelled release', some, 2000);
});

test('an enabled clone keeps the device on; stop() releases for good', async ({
  rig,
  releasing: meeting,
}) => {
  const page = meeting.page;
  await page.evaluate('window.__clone = call.track.clone()');
  await meeting.mute();
  await holdsFor(rig, 'on while the clone is enabled', some, 800);
  await page.evaluate('window.__clone.enabled = false');
  await whenStreams(rig, 'released once the clone is disabled too', none, 1000);
  await page.evaluate('window.__clone.enabled = true');
  await whenStreams(rig, 'back for the clone', some, 1000);
  expect(await page.evaluate('[window.__clone.readyState, call.track.readyState]')).toEqual(['live', 'live']);

  await page.evaluate('window.__clone.stop(); call.track.stop()');
  await whenStreams(rig, 'released by stop()', none, 1000);
  expect(await page.evaluate('[window.__clone.readyState, call.track.readyState]')).toEqual([
    'ended',
    'ended',
  ]);
  await page.evaluate('call.track.enabled = true; window.__clone.enabled = true');
  await holdsFor(rig, 'a stopped track never comes back', none, 1000);
});

test('per-site switch keeps the mic open, with the reason in the tab view; badge and popup', async ({
  rig,
  serviceWorker,
  context,
  extensionId,
  releasing: meeting,
}) => {
  const origin = new URL(meeting.url).origin;
  const tabId = await tabIdOf(serviceWorker, meeting.page.url());
  await waitFor(
    'tab view capturing',
    async () => (await tabView(serviceWorker, tabId))?.state === 'capturing',
  );

  await serviceWorker.evaluate(
    (o) =>
      (
        globalThis as unknown as {
          micoff: { settings: { setSiteOverride(o: string, v: unknown): Promise<unknown> } };
        }
      ).micoff.settings.setSiteOverride(o, { release: false }),
    origin,
  );
  await meeting.mute();
  await holdsFor(rig, 'kept open: release off for the site', some, 1000);
  const kept = await waitFor('tab view not_released', async () => {
    const v = await tabView(serviceWorker, tabId);
    return v?.state === 'not_released' ? v : null;
  });
  expect(kept.reason).toMatch(/off for this site/);

  // The popup shows why, and flipping its per-site switch back releases at once.
  const popup = await context.newPage();
  await popup.goto(`chrome-extension://${extensionId}/popup.html?tab=${tabId}`);
  await expect(popup.locator('#tab-state')).toContainText(/off for this site/i);
  await expect(popup.locator('#tab-server')).toContainText(/1 record stream open/);
  const box = popup.locator('#site-release');
  await expect(popup.locator('#site-row')).toBeVisible();
  await expect(box).not.toBeChecked();
  await box.check();
  await whenStreams(rig, 'released after the popup switch flips', none, 2000);
  await waitFor('tab view released', async () => (await tabView(serviceWorker, tabId))?.state === 'released');
  const badge = await serviceWorker.evaluate((id) => chrome.action.getBadgeText({ tabId: id }), tabId);
  expect(badge).toBe(MIC_BADGE.released.text);
  await expect(popup.locator('#tab-state')).toContainText(/released since \d/i);
  await expect(popup.locator('#tab-server')).toContainText(/no record stream from the browser/);
  await popup.close();
  await meeting.unmute();
  await whenStreams(rig, 'back on unmute', some, 1000);
  await waitFor(
    'tab view capturing',
    async () => (await tabView(serviceWorker, tabId))?.state === 'capturing',
  );
});

test('legacy webkitGetUserMedia, about:blank and srcdoc frames are covered', async ({
  rig,
  context,
  pages,
  serviceWorker,
}) => {
  await setReleaseSettings(serviceWorker, { releaseOnMute: true, releaseDelayMs: 0 });
  const page = await context.newPage();
  await page.goto(pages.url('index.html'));
  const cases: Record<string, string> = {
    legacy: `new Promise((ok, fail) => navigator.webkitGetUserMedia({ audio: true }, (s) => ok(s.getAudioTracks()[0]), fail))`,
    aboutBlank: `(() => { const f = document.createElement('iframe'); document.body.append(f);
      return f.contentWindow.navigator.mediaDevices.getUserMedia({ audio: true }).then((s) => s.getAudioTracks()[0]); })()`,
    srcdoc: `new Promise((ok) => { const f = document.createElement('iframe');
      f.srcdoc = '<script>navigator.mediaDevices.getUserMedia({audio: true}).then((s) => { window.t = s.getAudioTracks()[0]; parent.postMessage("srcdoc-ready", "*"); });<\\/script>';
      addEventListener('message', (e) => e.data === 'srcdoc-ready' && ok(f.contentWindow.t)); document.body.append(f); })`,
  };
  for (const [name, expr] of Object.entries(cases)) {
    await page.evaluate(`window.__t = null; (${expr}).then((t) => { window.__t = t; })`);
    await waitFor(`${name}: a track`, () => page.evaluate('!!window.__t'));
    await whenStreams(rig, `${name}: capturing`, some);
    await page.evaluate('window.__t.enabled = false');
    await whenStreams(rig, `${name}: released`, none, 1000);
    expect(await page.evaluate('window.__t.readyState')).toBe('live');
    await page.evaluate('window.__t.enabled = true');
    await whenStreams(rig, `${name}: back`, some, 1000);
    await page.evaluate('window.__t.stop()');
    await whenStreams(rig, `${name}: stopped`, none, 1000);
  }
});

test('a sender the page emptied (removeTrack) stays empty across a reacquire', async ({
  rig,
  releasing: meeting,
}) => {
  const page = meeting.page;
  // A second sender for the same track on another connection, emptied by the page while released.
  await page.evaluate(
    `window.__pc = new RTCPeerConnection(); window.__s2 = __pc.addTrack(call.track, call.stream)`,
  );
  await meeting.mute();
  await whenStreams(rig, 'released', none, 3000);
  await page.evaluate('__pc.removeTrack(__s2)');
  await meeting.unmute();
  await whenStreams(rig, 'back', some, 3000);
  await meeting.waitForAudioFlowing();
  // The call's own sender got the new track behind the page's; the emptied one did not come back.
  expect(await page.evaluate('[call.sender.track === call.track, __s2.track]')).toEqual([true, null]);
});
