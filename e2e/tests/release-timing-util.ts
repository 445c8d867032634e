// The release-timing bars' measurement, for release-timing.spec.ts (the shared rig, whose own 10 ms
// recorder keeps the mic's source running) and release-timing-only-recorder.spec.ts (a rig without it:
// the browser is the source's only recorder, what a reopen really costs on a desktop;
// docs/design/release-on-mute.md, "First words"). Release gone within 250 ms of the release point; a
// record stream back within 250 ms of enable; the receiving peer's audio energy rising within 500 ms.
// Medians over several cycles, raw samples in e2e/artifacts/release-timing{,-only-recorder}.json.
import type { Worker } from '@playwright/test';
import type { AudioRig } from '../rig/audio-rig.ts';
import { expect, type TestFixtures, test } from '../rig/fixtures.ts';
import { waitFor } from '../rig/proc.ts';
import {
  AUDIO_BACK_MS,
  chromiumStreams,
  median,
  RELEASE_MS,
  RESUME_MS,
  saveArtifact,
  setReleaseSettings,
  whenStreams,
} from './release-util.ts';

const CYCLES = 7;
const DELAY_MS = 1000;

export async function releaseAndResume(
  rig: AudioRig,
  openMeeting: TestFixtures['openMeeting'],
  serviceWorker: Worker,
  reader: boolean,
): Promise<void> {
  test.setTimeout(120_000);
  await setReleaseSettings(serviceWorker, { releaseOnMute: true, releaseDelayMs: DELAY_MS });
  const meeting = await openMeeting({ playout: true });
  await meeting.waitForAudioFlowing();
  const energy = async () => (await meeting.stats()).inbound?.totalAudioEnergy ?? 0;
  const samples: { release_ms: number; resume_ms: number; energy_ms: number }[] = [];

  for (let i = 0; i < CYCLES; i++) {
    // On for longer than the delay: the release point is the mute itself.
    await whenStreams(rig, 'a Chromium record stream', (n) => n === 1);
    await new Promise((r) => setTimeout(r, DELAY_MS + 300));
    const mutedAt = Date.now();
    const state = await meeting.mute();
    expect(state).toMatchObject({ enabled: false, readyState: 'live', muted: false });
    const goneAt = await whenStreams(rig, 'the record stream to go', (n) => n === 0);
    // Still the page's live track while released.
    expect((await meeting.stats()).track).toMatchObject({ readyState: 'live', enabled: false, muted: false });
    await new Promise((r) => setTimeout(r, 300));

    const e0 = await energy();
    const unmutedAt = Date.now();
    await meeting.unmute();
    const [backAt, risesAt] = await Promise.all([
      whenStreams(rig, 'a record stream back', (n) => n >= 1),
      waitFor('received energy to rise', async () => ((await energy()) > e0 + 1e-6 ? Date.now() : null), {
        timeoutMs: 5000,
        intervalMs: 10,
      }),
    ]);
    samples.push({
      release_ms: goneAt - mutedAt,
      resume_ms: backAt - unmutedAt,
      energy_ms: risesAt - unmutedAt,
    });
  }
  const result = {
    cycles: CYCLES,
    delay_ms: DELAY_MS,
    median_release_ms: median(samples.map((s) => s.release_ms)),
    median_resume_ms: median(samples.map((s) => s.resume_ms)),
    median_energy_ms: median(samples.map((s) => s.energy_ms)),
    samples,
  };
  saveArtifact(reader ? 'release-timing.json' : 'release-timing-only-recorder.json', result);
  console.log(`release-timing (reader ${reader}): ${JSON.stringify({ ...result, samples: undefined })}`);
  expect(result.median_release_ms).toBeLessThanOrEqual(RELEASE_MS);
  expect(result.median_resume_ms).toBeLessThanOrEqual(RESUME_MS);
  expect(result.median_energy_ms).toBeLessThanOrEqual(AUDIO_BACK_MS);
  expect((await chromiumStreams(rig)).length).toBe(1);
}
