// The popup as a user sees it, against the real host and the rig's audio server: live per-thread CPU
// and the chart of the audio path's CPU (micoff-host's history, subscribed to while the popup is open),
// the record streams, and the doctor's findings with their fix commands.
import { NO_POWER_READING } from '../../extension/src/popup/chart.ts';
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

  // Live CPU arrives with the host's 1 Hz history samples: a table with the audio server among its rows.
  await expect(popup.locator('#cpu-body table')).toBeVisible({ timeout: 15_000 });
  await expect(popup.locator('#cpu-body table')).toContainText('audio server');

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
  // The host has sampled since the tab took the microphone: a line of unmuted samples first (the rate
  // a release is measured against).
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
    reading.watts === null ? NO_POWER_READING : /J \([\d.]+ Wh\) saved|too few busy/,
  );
  testInfo.annotations.push({ type: 'power', description: JSON.stringify(reading) });

  // The figures behind it (docs/design/popup-savings.md quotes them).
  const h = await ext.popupHistory();
  if (!h) throw new Error('the popup is open but has no history');
  const released = h.released.at(-1);
  const during = h.points.filter((p) => p.phase === 'released').map((p) => p.pct);
  console.log(
    `popup savings: baseline ${released?.baseline_pct?.toFixed(2)} %, released mean ${(during.reduce((a, b) => a + b, 0) / during.length).toFixed(2)} % over ${during.length} s, saved ${h.saved_cpu_s.toFixed(2)} CPU-s; power ${JSON.stringify(reading)}`,
  );

  await meeting.unmute();
  await expect(popup.locator('#chart svg line.mark.unmute')).toHaveCount(1, { timeout: 15_000 });
  await popup.screenshot({ path: testInfo.outputPath('popup-chart.png'), fullPage: true });
});

test('a popup opened mid-call draws the history the host kept; the call cost the background no request per tick', async ({
  context,
  extensionId,
  ext,
  openMeeting,
}) => {
  test.setTimeout(120_000);
  await ext.waitHostConnected();
  const meeting = await openMeeting();
  await meeting.waitForAudioFlowing();
  const before = await ext.hostTraffic();
  // Three of the host's 5 s samples with no popup open.
  const host = await expect
    .poll(async () => (await ext.request({ type: 'history' })).points.length, {
      timeout: 25_000,
      intervals: [1000],
    })
    .toBeGreaterThanOrEqual(3)
    .then(() => ext.request({ type: 'history' }));
  const after = await ext.hostTraffic();
  // What the call cost the background meanwhile: no cpu or history subscription, no sample request,
  // not one event of either. Requests made once may fall in the window (the phase, told when the call
  // came up; the capture-latency check made once when the host connected); a request per tick would
  // be one per host sample, three or more.
  const delta = (a: Record<string, number | undefined>, b: Record<string, number | undefined>) =>
    Object.fromEntries(
      Object.keys({ ...a, ...b })
        .map((k) => [k, (b[k] ?? 0) - (a[k] ?? 0)] as const)
        .filter(([, n]) => n !== 0),
    );
  const requests = delta(before.requests, after.requests);
  const { history: asked = 0, phase = 0, latency_status = 0, ...others } = requests;
  expect(asked).toBeGreaterThanOrEqual(1); // this test's own
  expect(others, JSON.stringify(requests)).toEqual({});
  expect(phase + latency_status, JSON.stringify(requests)).toBeLessThanOrEqual(2);
  expect(after.requests.phase ?? 0, 'the phase, told on a change').toBeLessThanOrEqual(2);
  expect(after.requests.subscribe ?? 0, 'the audio subscription only').toBe(1);
  const events = delta(before.events, after.events);
  expect(events.history ?? 0).toBe(0);
  expect(events.cpu ?? 0).toBe(0);
  expect(host.phase).toBe('capturing');
  const windows = host.points.map((p) => Math.round(p.window_ms / 1000));
  expect(windows.filter((w) => w === 5).length, `windows ${windows}`).toBeGreaterThanOrEqual(2);

  // The popup opens: the chart is drawn at once from those samples (before 1 s samples could make three).
  const opened = Date.now();
  const popup = await context.newPage();
  await popup.goto(`chrome-extension://${extensionId}/popup.html`);
  const line = popup.locator('#chart svg polyline.cpu');
  await expect
    .poll(async () => ((await line.getAttribute('points').catch(() => null)) ?? '').split(' ').length, {
      timeout: 3_000,
      intervals: [100],
    })
    .toBeGreaterThanOrEqual(host.points.length);
  const shown = await ext.popupHistory();
  expect(shown?.points.slice(0, host.points.length).map((p) => p.t_ms)).toEqual(
    host.points.map((p) => p.t_ms),
  );
  expect(host.points.every((p) => p.t_ms <= opened)).toBe(true);
  // While it is open the host samples every second, and the live table comes with each sample.
  await expect(popup.locator('#cpu-body table')).toBeVisible({ timeout: 5_000 });
  await expect
    .poll(async () => (await ext.popupHistory())?.points.at(-1)?.window_ms ?? 0, { timeout: 5_000 })
    .toBeLessThan(2_000);
  expect((await ext.hostTraffic()).events.history ?? 0).toBeGreaterThanOrEqual(2);
  await popup.close();
  await meeting.hangUp();
});
