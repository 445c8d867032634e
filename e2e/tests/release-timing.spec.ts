// Release-on-mute's timing bars (a release must not be noticeable, a resume must be quick): release gone
// within 250 ms of the release point; a record stream back within 250 ms of enable; the receiving peer's
// audio energy rising within 500 ms. Medians over several cycles, raw samples in
// e2e/artifacts/release-timing.json.

import { expect, test } from '../rig/fixtures.ts';
import { waitFor } from '../rig/proc.ts';
import { chromiumStreams, median, saveArtifact, setReleaseSettings, whenStreams } from './release-util.ts';

const CYCLES = 7;
const DELAY_MS = 1000;

test('release and resume latency (medians over cycles)', async ({ rig, openMeeting, serviceWorker }) => {
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
  saveArtifact('release-timing.json', result);
  console.log(`release-timing: ${JSON.stringify({ ...result, samples: undefined })}`);
  expect(result.median_release_ms).toBeLessThanOrEqual(250);
  expect(result.median_resume_ms).toBeLessThanOrEqual(250);
  expect(result.median_energy_ms).toBeLessThanOrEqual(500);
  expect((await chromiumStreams(rig)).length).toBe(1);
});
