// Real SDK code on the page: meeting SDKs from npm (simple-peer's standalone build,
// mediasoup-client bundled by esbuild in beforeAll) on a loopback call in e2e/pages/sdk/sdk.html. For
// each SDK's own mute: the device released within 250 ms of the mute (releaseDelayMs 0: the release
// point is the mute), audio at the far peer within 500 ms of the unmute (medians over CYCLES), and the
// SDK reports nothing (no error, close, track end or transport state change). mediasoup-client runs
// without an SFU: the page glues its send transport to a plain RTCPeerConnection (sdk-loopback.js).
// One browser for all cases; raw samples in e2e/artifacts/release-sdk.json.

import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { SIGNAL_SINK } from '../rig/audio-rig.ts';
import { expect, test } from '../rig/fixtures.ts';
import { PAGES_DIR, ROOT } from '../rig/paths.ts';
import { waitFor } from '../rig/proc.ts';
import {
  AUDIO_BACK_MS,
  median,
  RELEASE_MS,
  saveArtifact,
  setReleaseSettings,
  whenStreams,
} from './release-util.ts';

const CYCLES = 3;
const SDK_DIR = join(PAGES_DIR, 'sdk');

type SdkCase = {
  sdk: string;
  /** The SDK's own view while muted and after the unmute (sdk.state() minus the track; `direction` is
   * the transceiver's negotiated currentDirection). */
  muted: Record<string, unknown>;
  unmuted: Record<string, unknown>;
  /** track.enabled while muted: the SDK's own choice. */
  trackEnabledWhileMuted: boolean;
};

const CASES: SdkCase[] = [
  {
    sdk: 'simple-peer',
    muted: { connected: true, destroyed: false },
    unmuted: { connected: true, destroyed: false },
    trackEnabledWhileMuted: false,
  },
  {
    // Producer.pause() with its defaults: disableTrackOnPause (track.enabled = false), RTP keeps flowing.
    sdk: 'mediasoup',
    muted: { paused: true, closed: false, transportState: 'connected', direction: 'sendonly' },
    unmuted: { paused: false, closed: false, transportState: 'connected', direction: 'sendonly' },
    trackEnabledWhileMuted: false,
  },
  {
    // zeroRtpOnPause without disableTrackOnPause: the transceiver goes inactive, the track stays enabled.
    sdk: 'mediasoup-zero-rtp',
    muted: { paused: true, closed: false, transportState: 'connected', direction: 'inactive' },
    unmuted: { paused: false, closed: false, transportState: 'connected', direction: 'sendonly' },
    trackEnabledWhileMuted: true,
  },
];

// The SDKs' mute reaches micoff through the same page-world rules on either server (release-paths.spec.ts
// runs those on both): one project keeps the suite cheap.
test.skip(({ audioServer }) => audioServer !== 'pulseaudio', 'SDK pages: PulseAudio project only');

test.beforeAll(async () => {
  mkdirSync(join(SDK_DIR, 'bundle'), { recursive: true });
  copyFileSync(
    join(ROOT, 'node_modules', 'simple-peer', 'simplepeer.min.js'),
    join(SDK_DIR, 'bundle', 'simplepeer.min.js'),
  );
  await build({
    entryPoints: [join(SDK_DIR, 'sdk-loopback.js')],
    bundle: true,
    format: 'iife',
    platform: 'browser',
    outfile: join(SDK_DIR, 'bundle', 'sdk-loopback.js'),
    logLevel: 'warning',
  });
});

// A signal without gaps: with the rig's tone (250 ms bursts every 500 ms) "audio back" would wait for
// the next burst (docs/test-rig.md#lanes, r27).
test.use({ rigOptions: { tone: false } });
test.beforeAll(async ({ rig }) => {
  await rig.playInto(SIGNAL_SINK, 'speech');
});

test('real SDKs: released on their mute, audio back on their unmute, no SDK event', async ({
  rig,
  context,
  pages,
  serviceWorker,
}) => {
  test.setTimeout(90_000);
  await setReleaseSettings(serviceWorker, { releaseOnMute: true, releaseDelayMs: 0, followPaths: true });
  const results: Record<string, unknown> = {};
  for (const c of CASES) {
    const page = await context.newPage();
    await page.goto(pages.url(`sdk/sdk.html?sdk=${c.sdk}`));
    await page.waitForFunction(() => (window as unknown as { sdk?: unknown }).sdk !== undefined);
    await page.evaluate('sdk.ready');
    const energy = async () => (await page.evaluate('sdk.energy()')) as number;
    const samples: { release_ms: number; energy_ms: number }[] = [];
    for (let i = 0; i < CYCLES; i++) {
      await whenStreams(rig, `${c.sdk}: a record stream`, (n) => n === 1);
      const mutedAt = Date.now();
      await page.evaluate('sdk.mute()');
      const goneAt = await whenStreams(rig, `${c.sdk}: released after mute`, (n) => n === 0, 2000);
      // The SDK's renegotiation (zeroRtpOnPause) may still be under way when the device is gone:
      // currentDirection follows when it completes.
      await expect
        .poll(() => page.evaluate('sdk.state()'), { timeout: 3000 })
        .toEqual({
          track: { readyState: 'live', enabled: c.trackEnabledWhileMuted, muted: false },
          ...c.muted,
        });
      await new Promise((r) => setTimeout(r, 300));
      const e0 = await energy();
      const unmutedAt = Date.now();
      await page.evaluate('sdk.unmute()');
      const risesAt = await waitFor(
        `${c.sdk}: received energy to rise`,
        async () => ((await energy()) > e0 + 1e-6 ? Date.now() : null),
        { timeoutMs: 5000, intervalMs: 10 },
      );
      await expect
        .poll(() => page.evaluate('sdk.state()'), { timeout: 3000 })
        .toEqual({
          track: { readyState: 'live', enabled: true, muted: false },
          ...c.unmuted,
        });
      samples.push({ release_ms: goneAt - mutedAt, energy_ms: risesAt - unmutedAt });
    }
    expect(await page.evaluate('sdk.events'), `${c.sdk}: the SDK reported nothing`).toEqual([]);
    const r = {
      median_release_ms: median(samples.map((s) => s.release_ms)),
      median_energy_ms: median(samples.map((s) => s.energy_ms)),
      samples,
    };
    results[c.sdk] = r;
    console.log(`release-sdk: ${c.sdk} ${JSON.stringify({ ...r, samples: undefined })}`);
    await page.close();
  }
  saveArtifact('release-sdk.json', results);
  for (const [sdk, r] of Object.entries(results) as [
    string,
    { median_release_ms: number; median_energy_ms: number },
  ][]) {
    expect(r.median_release_ms, `${sdk}: release`).toBeLessThanOrEqual(RELEASE_MS);
    expect(r.median_energy_ms, `${sdk}: audio back`).toBeLessThanOrEqual(AUDIO_BACK_MS);
  }
});
