// Release-on-mute at the device: reacquire failure ends the track (the spec's MUST), and the
// device-aware Bluetooth policy.

import { MeetingPage } from '../rig/meeting-page.ts';
import { waitFor } from '../rig/proc.ts';
import { expect, test } from './release-fixtures.ts';
import {
  BLUETOOTH_RIG_ONLY,
  holdsFor,
  saveArtifact,
  setReleaseSettings,
  tabIdOf,
  tabView,
  whenStreams,
  withBluetoothRig,
} from './release-util.ts';

test('reacquire failure: the source is gone at the server while released -> `ended` within 1 s', async ({
  rig,
  releasing: meeting,
}) => {
  const page = meeting.page;
  await meeting.mute();
  await whenStreams(rig, 'released', (n) => n === 0, 2000);
  try {
    // By name (pactl 16's JSON module list has no index): the rig's only remap module is `mic`.
    await rig.pactl(['unload-module', 'module-remap-source']);
    await waitFor(
      '`mic` gone at the server',
      async () => !(await rig.pactl(['list', 'short', 'sources'])).match(/\bmic\b/),
    );
    await page.evaluate(`
      window.__ended = null;
      call.track.addEventListener('ended', () => { window.__ended = performance.now(); });
      window.__unmutedAt = performance.now();
      call.track.enabled = true;`);
    const r = await waitFor(
      '`ended` on the page track',
      () =>
        page.evaluate(`window.__ended === null ? null
          : { after_ms: window.__ended - window.__unmutedAt, readyState: call.track.readyState }`) as Promise<{
          after_ms: number;
          readyState: string;
        } | null>,
      { timeoutMs: 3000 },
    ).catch(async (e) => {
      const seen = await page.evaluate(
        '({ readyState: call.track.readyState, enabled: call.track.enabled })',
      );
      const streams = await rig.recordStreams();
      throw new Error(
        `${(e as Error).message}; page ${JSON.stringify(seen)}; streams ${JSON.stringify(streams)}`,
      );
    });
    saveArtifact('release-reacquire-failure.json', r);
    expect(r.readyState).toBe('ended');
    expect(r.after_ms).toBeLessThan(1000);
  } finally {
    await rig.restart(); // brings `mic`, the tone and the reader back for the next tests
  }
});

test('Bluetooth policy: a source with device.bus=bluetooth is not released by default', async ({
  pages,
  audioServer,
}) => {
  test.skip(audioServer !== 'pulseaudio', BLUETOOTH_RIG_ONLY);
  test.setTimeout(90_000);
  // The Bluetooth policy stays at its default (a fresh profile): that default is what is tested.
  await withBluetoothRig(async ({ bt, browser, sw, ext }) => {
    const meeting = await MeetingPage.open(browser.context, pages.url('meeting.html'));
    await meeting.ready();
    // The host sees Chromium's record stream on a Bluetooth source.
    const snap = await ext
      .waitAudio('a Chromium record stream on a bluetooth source (host view)', (s) =>
        s.streams.some(
          (x) =>
            x.kind === 'record' &&
            /chrom/i.test(`${x.application_name} ${x.application_process_binary}`) &&
            (x as unknown as { device_bus?: string }).device_bus === 'bluetooth',
        ),
      )
      .catch(async (e) => {
        const seen = JSON.stringify((await ext.audioSnapshot()).streams);
        const sources = await bt.pactl(['-f', 'json', 'list', 'sources']);
        throw new Error(`${(e as Error).message}; host sees ${seen}; sources ${sources}`);
      });
    saveArtifact('release-bluetooth-streams.json', snap.streams);
    const tabId = await tabIdOf(sw, meeting.page.url());
    await meeting.mute();
    await holdsFor(bt, 'kept open (Bluetooth)', (n) => n >= 1, 1500);
    const v = await waitFor('tab view not_released', async () => {
      const x = await tabView(sw, tabId);
      return x?.state === 'not_released' ? x : null;
    });
    expect(v.reason).toMatch(/bluetooth/i);

    // The option: release Bluetooth sources too.
    await setReleaseSettings(sw, { bluetoothPolicy: 'release' });
    await whenStreams(bt, 'released once the policy allows it', (n) => n === 0, 2000);
  });
});
