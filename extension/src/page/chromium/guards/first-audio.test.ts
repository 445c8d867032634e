import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FakeTimers } from '../../../background/fakes.test-util.ts';
import { FIRST_AUDIO_SLOW_MS, FIRST_AUDIO_WINDOW_MS, type FirstAudio } from '../../../shared/first-words.ts';
import { createFirstAudio, POLL_MS } from './first-audio.ts';

/** One device `mic`; its tap's frame count is `world.frames` (null: the browser cannot tell). */
function rig(withTap = true) {
  const timers = new FakeTimers();
  const world = { frames: 0 as number | null, taps: 0, stopped: 0, samples: [] as FirstAudio[] };
  const fa = createFirstAudio<string, string>({
    now: () => timers.now,
    dateNow: () => 1_000_000 + timers.now,
    setTimer: (cb, ms) => timers.setTimeout(cb, ms),
    clearTimer: (h) => timers.clearTimeout(h),
    tap: () => {
      if (!withTap) return null;
      world.taps++;
      return {
        audioMs: () => world.frames,
        stop: () => {
          world.stopped++;
        },
      };
    },
    measured: (_g, s) => world.samples.push(s),
  });
  return { timers, world, fa };
}

test('a fast device: measured from the open to the first frame, the open itself apart; the tap stopped, no timer left', () => {
  const { timers, world, fa } = rig();
  const start = timers.now;
  timers.advance(40); // getUserMedia took 40 ms
  fa.watch('mic', 'track', start);
  timers.advance(25);
  world.frames = 5;
  timers.advance(POLL_MS);
  assert.equal(world.samples.length, 1);
  const ms = world.samples[0]?.ms ?? -1;
  assert.ok(ms >= 65 && ms <= 65 + POLL_MS, `${ms}`);
  assert.equal(world.samples[0]?.open_ms, 40);
  assert.equal(world.stopped, 1);
  assert.equal(timers.pending(), 0);
});

test('a device with frames at once: measured at the first read, no timer', () => {
  const { timers, world, fa } = rig();
  world.frames = 5;
  fa.watch('mic', 'track', timers.now - 30);
  assert.deepEqual(
    world.samples.map((s) => s.ms),
    [30],
  );
  assert.equal(timers.pending(), 0);
});

test('a device that delivers nothing: the window is reported, then the tap ends', () => {
  const { timers, world, fa } = rig();
  fa.watch('mic', 'track', timers.now);
  timers.advance(FIRST_AUDIO_WINDOW_MS + POLL_MS);
  assert.equal(world.samples.length, 1);
  assert.ok((world.samples[0]?.ms ?? 0) >= FIRST_AUDIO_WINDOW_MS);
  assert.equal(world.stopped, 1);
  assert.equal(timers.pending(), 0);
});

test('the window counts from the track in hand: a slow open does not shorten the wait', () => {
  const { timers, world, fa } = rig();
  const start = timers.now;
  timers.advance(1000);
  fa.watch('mic', 'track', start, timers.now);
  timers.advance(FIRST_AUDIO_WINDOW_MS - 2 * POLL_MS);
  assert.equal(world.samples.length, 0);
  timers.advance(3 * POLL_MS);
  assert.equal(world.samples[0]?.open_ms, 1000);
  assert.ok((world.samples[0]?.ms ?? 0) >= 1000 + FIRST_AUDIO_WINDOW_MS);
});

test('a release cuts the tap: a wait past the slow mark is reported as a lower bound, a short one is not', () => {
  const slow = rig();
  slow.fa.watch('mic', 'track', slow.timers.now);
  slow.timers.advance(FIRST_AUDIO_SLOW_MS + 50);
  slow.fa.cut('mic');
  assert.equal(slow.world.stopped, 1);
  assert.deepEqual(
    slow.world.samples.map((s) => s.ms),
    [FIRST_AUDIO_SLOW_MS + 50],
  );
  assert.equal(slow.timers.pending(), 0);

  const short = rig();
  const start = short.timers.now;
  short.timers.advance(FIRST_AUDIO_SLOW_MS); // a slow open, then a short wait: not the host's to fix
  short.fa.watch('mic', 'track', start);
  short.timers.advance(60);
  short.fa.cut('mic');
  assert.equal(short.world.stopped, 1);
  assert.deepEqual(short.world.samples, []);
  assert.equal(short.timers.pending(), 0);
});

test('a newer open supersedes the running tap without a report; cut on an idle device does nothing', () => {
  const { timers, world, fa } = rig();
  fa.cut('mic');
  fa.watch('mic', 'a', timers.now);
  timers.advance(FIRST_AUDIO_SLOW_MS * 2);
  fa.watch('mic', 'b', timers.now);
  assert.equal(world.stopped, 1);
  assert.equal(world.samples.length, 0);
  world.frames = 1;
  timers.advance(POLL_MS);
  assert.equal(world.samples.length, 1);
  assert.ok((world.samples[0]?.ms ?? 99) <= POLL_MS);
  assert.equal(world.taps, 2);
});

test('no frame count in this browser, or a tap that stops telling: nothing measured, nothing left running', () => {
  const none = rig(false);
  none.fa.watch('mic', 'track', none.timers.now);
  assert.equal(none.timers.pending(), 0);
  assert.deepEqual(none.world.samples, []);

  const { timers, world, fa } = rig();
  fa.watch('mic', 'track', timers.now);
  world.frames = null;
  timers.advance(POLL_MS);
  assert.deepEqual(world.samples, []);
  assert.equal(world.stopped, 1);
  assert.equal(timers.pending(), 0);
});

test('a read that a busy page delays: the first frame is placed by the audio had by then, not by the read', () => {
  let now = 0;
  let pending: (() => void) | null = null;
  const samples: FirstAudio[] = [];
  const arrival = 30; // the device's first frame, 30 ms after the open
  const fa = createFirstAudio<string, string>({
    now: () => now,
    dateNow: () => now,
    setTimer: (cb) => {
      pending = cb;
      return 1;
    },
    clearTimer: () => {
      pending = null;
    },
    tap: () => ({ audioMs: () => Math.max(0, now - arrival), stop: () => {} }),
    measured: (_g, s) => samples.push(s),
  });
  fa.watch('mic', 'track', 0);
  now = 400; // a long task held the page's thread
  (pending as (() => void) | null)?.();
  assert.deepEqual(
    samples.map((s) => s.ms),
    [arrival],
  );
});
