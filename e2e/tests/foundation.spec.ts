// The foundation end to end, what every other spec builds on: (a) the service worker runs, (b) Chromium's
// record stream exists at the rig's server while the meeting is unmuted and audio flows, (c) the extension
// reaches micoff-host over native messaging and gets an answer.
import { isInTree } from '../rig/chromium.ts';
import { expect, test } from '../rig/fixtures.ts';
import { isChromium } from '../rig/pactl.ts';
import { waitFor } from '../rig/proc.ts';

test('the extension service worker runs in Chromium', async ({ serviceWorker, extensionId, ext }) => {
  expect(serviceWorker.url()).toBe(`chrome-extension://${extensionId}/background.js`);
  expect(await ext.hasTestSurface()).toBe(true);
  expect(
    await serviceWorker.evaluate(
      () => (globalThis as unknown as { micoff: { browser: string } }).micoff.browser,
    ),
  ).toBe('chrome');
});

test('an unmuted meeting has a Chromium record stream at the rig server and audio flows', async ({
  rig,
  openMeeting,
  browserPid,
}) => {
  const meeting = await openMeeting({ playout: true });
  const stats = await meeting.waitForAudioFlowing();
  expect(stats.track).toMatchObject({ readyState: 'live', enabled: true, muted: false });
  expect(stats.inbound?.audioLevel).toBeGreaterThan(0);

  const stream = await waitFor('a Chromium record stream at the rig server', async () =>
    (await rig.recordStreams()).find(isChromium),
  );
  expect(stream.processId).toBeGreaterThan(0);
  // The stream belongs to this browser: its pid is the browser or one of its descendants.
  expect(isInTree(stream.processId ?? -1, browserPid)).toBe(true);
  expect(stream.corked).toBe(false);
});

test('the extension reaches micoff-host over native messaging', async ({ ext, extensionId }) => {
  await ext.waitHostConnected();
  const v = await ext.request({ type: 'version' });
  expect(v.protocol_version).toBe(1);
  expect(v.host_version).toMatch(/^\d+\.\d+\.\d+/);
  expect(v.origin).toBe(`chrome-extension://${extensionId}/`);
  expect(v.extension_id).toBe(extensionId);
  expect(v.browser_family).toBe('chromium');
  expect(v.pid).toBeGreaterThan(0);
});
