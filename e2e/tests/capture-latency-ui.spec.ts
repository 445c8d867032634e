// Capture latency in the extension's own pages, against the real host and the rig's server: the popup shows for
// the tab the capture latency the server grants (from `latency_status`), echo cancellation as the
// page's tracks got it, and the audio path's CPU; the options page shows the setting with what the host
// reports. Read-only: nothing is set here (`latency_set` would write the user's own config files).
import { expect, test } from '../rig/fixtures.ts';
import { tabIdOf } from './release-util.ts';

test('popup: granted capture latency, echo cancellation and audio-path CPU; options: the setting', async ({
  context,
  extensionId,
  ext,
  serviceWorker,
  openMeeting,
}) => {
  await ext.waitHostConnected();
  const meeting = await openMeeting();
  await meeting.waitForAudioFlowing();
  const tab = await tabIdOf(serviceWorker, meeting.page.url());

  const popup = await context.newPage();
  await popup.goto(`chrome-extension://${extensionId}/popup.html?tab=${tab}`);
  // The rig keeps a 10 ms reader on the mic and Chromium asks 10 ms: the grant is about 10 ms.
  await expect(popup.locator('#tab-latency')).toHaveText(
    /^Capture latency granted by the server: (9|10|11) ms/,
    { timeout: 15_000 },
  );
  await expect(popup.locator('#tab-echo')).toHaveText("Echo cancellation: on for this page's microphone.");
  await expect(popup.locator('#tab-guard')).toHaveCount(0);
  await expect(popup.locator('#tab-cpu')).toHaveText(/^Audio path CPU: \d+(\.\d)? % of one core/, {
    timeout: 15_000,
  });

  const options = await context.newPage();
  await options.goto(`chrome-extension://${extensionId}/options.html`);
  await expect(options.locator('#latency-configured')).toContainText(/^(pulseaudio|pipewire_pulse) /, {
    timeout: 15_000,
  });
  // Not managed here: the user may change it (the select is enabled once the host answered).
  await expect(options.locator('#latency-select')).toBeEnabled();
  await expect(options.locator('#latency-managed')).toBeHidden();
  await expect(options.locator('#latency-error')).toBeHidden();
});
