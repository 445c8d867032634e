// The popup as a user sees it, against the real host and the rig's audio server: live per-thread CPU
// (from the host's cpu subscription), the record streams, and the doctor's findings with their fix commands.
import { expect, test } from '../rig/fixtures.ts';

type Fixtures = Parameters<Parameters<typeof test>[2]>[0];

/** A call with audio flowing, the host connected, and the popup open beside it. */
async function popupOnCall({
  context,
  extensionId,
  ext,
  openMeeting,
}: Pick<Fixtures, 'context' | 'extensionId' | 'ext' | 'openMeeting'>) {
  await ext.waitHostConnected();
  const meeting = await openMeeting();
  await meeting.waitForAudioFlowing();
  const popup = await context.newPage();
  await popup.goto(`chrome-extension://${extensionId}/popup.html`);
  return { meeting, popup };
}

test('the popup shows live CPU, the record stream and the doctor findings from micoff-host', async ({
  context,
  extensionId,
  ext,
  openMeeting,
}, testInfo) => {
  const { popup } = await popupOnCall({ context, extensionId, ext, openMeeting });
  // The pill names the host's version once it answered.
  await expect(popup.locator('#host-pill')).toHaveText(/^host \d+\.\d+\.\d+/);
  await expect(popup.locator('#host-pill')).toHaveClass(/\bok\b/);

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
  await expect(popup.locator('#doctor-body')).not.toContainText(/Not available/);
  // Each finding is labelled like the CLI's statuses.
  const labels = await popup.locator('#doctor-body .finding > .pill').allTextContents();
  expect(labels.length).toBe(await findings.count());
  for (const l of labels) expect(['ok', 'worth changing', 'not applicable']).toContain(l);
  // The host reaches the rig's audio server (the popup's host runs in Chromium's environment).
  const server = findings.filter({ hasText: /^okAudio server/ });
  await expect(server).toHaveCount(1);
  // No sound card on the rig: the sound-card and Intel HDA checks do not apply.
  await expect(findings.filter({ hasText: /HD-audio controller/ }).locator('.pill')).toHaveText(
    'not applicable',
  );
  // A copy button comes only with a runnable command (never with prose).
  for (const cmd of await popup.locator('#doctor-body .finding code').allTextContents()) {
    expect(cmd).not.toMatch(/`|\(or |log in/);
  }

  await popup.screenshot({ path: testInfo.outputPath('popup.png'), fullPage: true });
});

test('the popup charts a release after a mute and counts the CPU it saved', async ({
  extensionId,
  context,
  ext,
  openMeeting,
}, testInfo) => {
  const { meeting, popup } = await popupOnCall({ context, extensionId, ext, openMeeting });
  // The background has sampled since the tab took the microphone: a line of unmuted samples first
  // (the rate a release is measured against).
  const line = popup.locator('#chart svg polyline.cpu');
  await expect
    .poll(async () => ((await line.getAttribute('points').catch(() => null)) ?? '').split(' ').length, {
      timeout: 15_000,
    })
    .toBeGreaterThanOrEqual(3);
  await expect(popup.locator('#chart svg title').first()).toHaveText(/Audio path CPU/);

  await meeting.mute();
  // The released interval is shaded on the chart, with its mute and release marks.
  await expect(popup.locator('#chart svg rect.released')).toHaveCount(1, { timeout: 15_000 });
  await expect(popup.locator('#chart svg line.mark.mute')).toHaveCount(1);
  await expect(popup.locator('#chart svg line.mark.release')).toHaveCount(1);
  // After a few released seconds the saving is above zero (text figure beside the chart).
  await expect
    .poll(async () => Number((await popup.locator('#saved-cpu').textContent())?.match(/≈ ([\d.]+)/)?.[1]), {
      timeout: 15_000,
    })
    .toBeGreaterThan(0);
  // Energy: a figure where the machine reports power, else the reason in plain words.
  const energy = popup.locator('#saved-energy');
  await expect(energy).not.toHaveText(/asking micoff-host/, { timeout: 10_000 });
  const reading = await ext.request({ type: 'power' });
  await expect(energy).toHaveText(
    reading.watts === null
      ? /^This machine reports no power reading: /
      : /J \([\d.]+ Wh\) saved|too few busy/,
  );
  testInfo.annotations.push({ type: 'power', description: JSON.stringify(reading) });

  // The figures behind it (docs/design/popup-savings.md quotes them).
  const h = await ext.worker.evaluate(() =>
    (
      globalThis as unknown as {
        micoff: {
          popups: {
            history(): import('../../extension/src/shared/messages/popup-background.ts').HistorySnapshot;
          };
        };
      }
    ).micoff.popups.history(),
  );
  const released = h.released.at(-1);
  const during = h.points.filter((p) => p.phase === 'released').map((p) => p.pct);
  console.log(
    `popup savings: baseline ${released?.baseline_pct?.toFixed(2)} %, released mean ${(during.reduce((a, b) => a + b, 0) / during.length).toFixed(2)} % over ${during.length} s, saved ${h.saved_cpu_s.toFixed(2)} CPU-s; power ${JSON.stringify(reading)}`,
  );

  await meeting.unmute();
  await expect(popup.locator('#chart svg line.mark.unmute')).toHaveCount(1, { timeout: 15_000 });
  await popup.screenshot({ path: testInfo.outputPath('popup-chart.png'), fullPage: true });
});
