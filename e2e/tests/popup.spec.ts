// The popup as a user sees it, against the real host and the rig's audio server: live per-thread CPU
// (issue 3), the record streams, and the doctor's findings with their fix commands (issue 5).
import { expect, test } from '../rig/fixtures.ts';

test('the popup shows live CPU, the record stream and the doctor findings from micoff-host', async ({
  context,
  extensionId,
  ext,
  openMeeting,
}, testInfo) => {
  await ext.waitHostConnected();
  const meeting = await openMeeting();
  await meeting.waitForAudioFlowing();

  const popup = await context.newPage();
  await popup.goto(`chrome-extension://${extensionId}/popup.html`);
  await expect(popup.locator('#host-pill')).toContainText(/connected/i);

  // Live CPU arrives from the host's 1 Hz subscription: a table with the audio server among its rows.
  await expect(popup.locator('#cpu-body table')).toBeVisible({ timeout: 15_000 });
  await expect(popup.locator('#cpu-body')).toContainText(/pulseaudio|pipewire/);

  // Chromium's record stream as the audio server sees it.
  await expect(popup.locator('#streams-body')).toContainText(/chromium/i, { timeout: 15_000 });

  // The doctor runs in the host; the popup lists its findings, each with a status.
  await popup.locator('#doctor-run').click();
  const findings = popup.locator('#doctor-body .finding');
  await expect(findings.first()).toBeVisible({ timeout: 20_000 });
  expect(await findings.count()).toBeGreaterThanOrEqual(10);
  await expect(popup.locator('#doctor-body')).toContainText(/audio server/i);
  // No sound card on the rig: the Intel HDA checks do not apply, and the popup says so rather than erring.
  await expect(popup.locator('#doctor-body')).not.toContainText(/Not available/);

  await popup.screenshot({ path: testInfo.outputPath('popup.png'), fullPage: true });
});
