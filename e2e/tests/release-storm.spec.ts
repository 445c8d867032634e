// Toggle storm, the release logic under fast muting: 200 mute/unmute cycles at random intervals of 50-600
// ms (seeded, the seed is logged and kept with the samples): no leaked record streams at the server (every
// 20th cycle, after the unmute: never two, and none only until the reacquire brings it back within 2 s),
// audio flows after the last unmute, no page errors. Delay 200 ms so the storm exercises both paths about
// equally: releases cancelled by an early unmute (interval < 200 ms) and releases (~15 ms after the delay)
// followed by a reacquire racing the next mute. Intervals up to 1.5 s added nothing but wall time (5 min).

import { expect, test } from '../rig/fixtures.ts';
import { chromiumStreams, holdsFor, saveArtifact, setReleaseSettings, whenStreams } from './release-util.ts';

const CYCLES = Number(process.env.MICOFF_STORM_CYCLES ?? 200);
/** Every this many cycles the record streams are counted after the unmute. */
const SAMPLE_EVERY = 20;
/** A stream not yet back at a sample (the reacquire after a release still on its way) must come within. */
const BACK_WITHIN_MS = 2000;

/** The record streams at one sample: after an unmute and the wait after it. */
interface Sample {
  cycle: number;
  /** From the unmute to the count. */
  since_unmute_ms: number;
  streams: number;
  /** With none there: from the unmute to a stream back (null: not within BACK_WITHIN_MS). */
  back_ms: number | null;
}

function rng(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
}

// ~2 minutes: on the PulseAudio project only (the PipeWire project runs the functional specs).
test.skip(({ audioServer }) => audioServer !== 'pulseaudio', 'long run: PulseAudio project only');

test('toggle storm: 200 random mute/unmute cycles leak nothing', async ({
  rig,
  openMeeting,
  serviceWorker,
}) => {
  test.setTimeout(120_000 + CYCLES * 700 * 2);
  await setReleaseSettings(serviceWorker, { releaseOnMute: true, releaseDelayMs: 200 });
  const meeting = await openMeeting();
  const errors: string[] = [];
  meeting.page.on('pageerror', (e) => errors.push(String(e)));
  meeting.page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  await meeting.waitForAudioFlowing();
  const seed = Number(process.env.MICOFF_STORM_SEED ?? Date.now() % 2 ** 31);
  const rand = rng(seed);
  const wait = () => new Promise((r) => setTimeout(r, 50 + Math.floor(rand() * 550)));
  const samples: Sample[] = [];
  const started = Date.now();
  for (let i = 0; i < CYCLES; i++) {
    await meeting.mute();
    await wait();
    await meeting.unmute();
    const unmutedAt = Date.now();
    await wait();
    if (i % SAMPLE_EVERY === 0) {
      const streams = (await chromiumStreams(rig)).length;
      const sample: Sample = { cycle: i, since_unmute_ms: Date.now() - unmutedAt, streams, back_ms: null };
      if (streams === 0) {
        const back = await whenStreams(rig, 'a stream back', (n) => n >= 1, BACK_WITHIN_MS).catch(() => null);
        sample.back_ms = back === null ? null : back - unmutedAt;
      }
      samples.push(sample);
    }
  }
  const stormMs = Date.now() - started;
  const counts = samples.map((x) => x.streams);
  const artifact = () => ({ seed, cycles: CYCLES, storm_ms: stormMs, counts, samples, errors });
  saveArtifact('release-storm.json', artifact()); // kept when a check below fails
  // Unmuted, the call holds one record stream: never two (a capture leaked by a release or a reacquire
  // racing the next mute), and none only while the reacquire after a release is on its way.
  expect(
    samples.filter((x) => x.streams > 1),
    'more than one record stream after an unmute',
  ).toEqual([]);
  expect(
    samples.filter((x) => x.streams === 0 && x.back_ms === null),
    `no record stream within ${BACK_WITHIN_MS} ms of an unmute`,
  ).toEqual([]);
  // Unmuted at the end: exactly one record stream (nothing leaked), audio flows, the track is the same.
  await whenStreams(rig, 'exactly one record stream after the storm', (n) => n === 1, 3000);
  await holdsFor(rig, 'one record stream, steady', (n) => n === 1, 1000);
  await meeting.waitForAudioFlowing(5000);
  const track = (await meeting.stats()).track;
  expect(track).toMatchObject({ readyState: 'live', enabled: true, muted: false });
  // And it still releases cleanly.
  await meeting.mute();
  await whenStreams(rig, 'released after the storm', (n) => n === 0, 2000);
  await meeting.unmute();
  await whenStreams(rig, 'back after the storm', (n) => n === 1, 2000);
  saveArtifact('release-storm.json', artifact());
  expect(errors).toEqual([]);
});
