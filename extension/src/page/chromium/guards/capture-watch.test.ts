import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FakeTimers } from '../../../background/fakes.test-util.ts';
import {
  CONFIRM_MS,
  createCaptureWatch,
  FAST_POLL_MS,
  FIRST_GAP_MS,
  HEALTHY_MS,
  MAX_GAP_MS,
  POLL_MS,
  RESTART_FIRST_FRAME_MS,
  STALL_MS,
  SUSPECT_MS,
} from './capture-watch.ts';

/** One device `mic`, on while `world.on`; its capture delivers `world.ms` of audio through
 * `world.track` (null read: it cannot tell). A restart hands out a fresh track with no audio yet.
 * `throttled`: a hidden page's timers; `ticked`: the background's ticks on the schedule the watch says
 * (background/ticks.ts: a period restarted when it changes, single ticks), `tickLatencyMs` to arrive. */
function rig(opts: { throttled?: boolean; ticked?: boolean; tickLatencyMs?: number } = {}) {
  const timers = new FakeTimers();
  // A hidden page's timers (Chromium): run on the next whole second, at the earliest when due.
  const delay = (ms: number) =>
    opts.throttled ? Math.ceil((timers.now + ms) / 1000) * 1000 - timers.now : ms;
  const world = {
    on: true,
    track: 't1',
    ms: 0 as number | null,
    restarts: [] as number[],
    reads: 0,
    /** What onSchedule said, in order. */
    schedule: [] as [number | null, number | null][],
  };
  const latency = opts.tickLatencyMs ?? 0;
  const ticks = { every: null as number | null, next: 0, once: null as number | null };
  const watch = createCaptureWatch<string, string>({
    now: () => timers.now,
    setTimer: (cb, ms) => timers.setTimeout(cb, delay(ms)),
    clearTimer: (h) => timers.clearTimeout(h),
    watched: () => (world.on ? ['mic'] : []),
    read: () => {
      world.reads++;
      return world.ms === null ? null : { track: world.track, audioMs: world.ms };
    },
    onSchedule: (everyMs, soonMs) => {
      world.schedule.push([everyMs, soonMs]);
      if (everyMs !== ticks.every) {
        ticks.every = everyMs;
        ticks.next = timers.now + latency + (everyMs ?? 0);
      }
      if (soonMs !== null) ticks.once = timers.now + 2 * latency + soonMs;
    },
    stalled: () => {
      world.restarts.push(timers.now);
      world.track = `t${world.restarts.length + 1}`;
      world.ms = 0;
    },
  });
  /** Let `ms` pass with the capture delivering in real time (or not). */
  const run = (ms: number, delivering: boolean) => {
    for (let t = 0; t < ms; t += 10) {
      if (delivering && world.ms !== null) world.ms += 10;
      timers.advance(10);
      if (!opts.ticked) continue;
      if (ticks.once !== null && timers.now >= ticks.once) {
        ticks.once = null;
        watch.poke();
      }
      if (ticks.every !== null && timers.now >= ticks.next) {
        ticks.next += ticks.every;
        watch.poke();
      }
    }
  };
  return { timers, world, watch, run };
}

test('a capture that delivers is never restarted, however long', () => {
  const { world, watch, run } = rig();
  watch.changed();
  run(60_000, true);
  assert.deepEqual(world.restarts, []);
  assert.ok(world.reads >= 60_000 / POLL_MS - 1, 'read every POLL_MS');
});

test('a capture that stops delivering is restarted STALL_MS to POLL_MS + CONFIRM_MS after its last frame, wherever between two reads it stops', () => {
  for (let phase = 0; phase < POLL_MS; phase += 10) {
    const { timers, world, watch, run } = rig();
    watch.changed();
    run(3000 + phase, true);
    const lastFrame = timers.now;
    run(2 * POLL_MS, false);
    assert.equal(world.restarts.length, 1, `phase ${phase}`);
    const after = (world.restarts[0] ?? 0) - lastFrame;
    assert.ok(
      after >= STALL_MS && after <= POLL_MS + CONFIRM_MS + 10,
      `phase ${phase}: restarted ${after} ms after the last frame`,
    );
  }
});

test("in a hidden page (timers once a second) the ticks on the watch's schedule see a stall within POLL_MS + CONFIRM_MS of its last frame, wherever it stops; without them it takes up to 2 s", () => {
  const latency = 20;
  let slowest = { ticked: 0, unticked: 0 };
  for (let phase = 0; phase < 1000; phase += 10) {
    for (const ticked of [true, false]) {
      const { timers, world, watch, run } = rig({ throttled: true, ticked, tickLatencyMs: latency });
      watch.changed();
      run(3000 + phase, true);
      const lastFrame = timers.now;
      run(2500, false);
      assert.ok(world.restarts.length >= 1, `phase ${phase}, ticked ${ticked}: restarted`);
      const after = (world.restarts[0] ?? 0) - lastFrame;
      assert.ok(after >= STALL_MS, `phase ${phase}: restarted ${after} ms after the last frame`);
      const key = ticked ? 'ticked' : 'unticked';
      slowest = { ...slowest, [key]: Math.max(slowest[key], after) };
    }
  }
  assert.ok(
    slowest.ticked <= POLL_MS + CONFIRM_MS + 2 * latency + 10,
    `ticked: ${slowest.ticked} ms at worst`,
  );
  assert.ok(
    slowest.unticked > 1000,
    `unticked: ${slowest.unticked} ms at worst (the throttling is real here)`,
  );
});

test("on the ticks a steady capture is read once per POLL_MS, throttled or not (a page playing audio is not), as on the page's own timers; a read that falls short asks for one tick sooner", () => {
  const plain = rig();
  plain.watch.changed();
  plain.run(20_000, true);
  for (const throttled of [true, false])
    for (let latency = 0; latency < POLL_MS; latency += 10) {
      const { world, watch, run } = rig({ throttled, ticked: true, tickLatencyMs: latency });
      watch.changed();
      run(20_000, true);
      assert.ok(
        Math.abs(world.reads - plain.world.reads) <= 1,
        `throttled ${throttled}, tick phase ${latency}: ${world.reads} reads, own timers alone ${plain.world.reads}`,
      );
    }
  const { world, watch, run } = rig({ throttled: true, ticked: true });
  watch.changed();
  run(2000, true);
  assert.ok(world.schedule.every(([every, soon]) => every === POLL_MS && soon === null));
  // The frames stop halfway between two reads: the next read falls short.
  run(POLL_MS / 2, true);
  run(POLL_MS, false);
  const soon = world.schedule.filter(([, s]) => s !== null);
  assert.equal(soon.length, 1, JSON.stringify(world.schedule));
  assert.ok((soon[0]?.[1] ?? 0) >= CONFIRM_MS && (soon[0]?.[1] ?? 0) < POLL_MS);
});

test('the watch is active only while it reads: released or muted, no pokes wanted', () => {
  const { world, watch, run } = rig();
  /** Reading, by what the watch last said of its schedule. */
  const active = () => (world.schedule.at(-1)?.[0] ?? null) !== null;
  assert.equal(active(), false);
  watch.changed();
  assert.equal(active(), true);
  world.on = false;
  run(POLL_MS + 10, true);
  assert.equal(active(), false);
  const before = world.reads;
  watch.poke();
  assert.equal(world.reads, before, 'a poke while asleep reads nothing');
  assert.deepEqual(world.schedule.at(0), [POLL_MS, null]);
  assert.deepEqual(world.schedule.at(-1), [null, null]);
  const said = world.schedule.length;
  watch.changed();
  assert.equal(active(), false, 'nothing watched: it stays asleep');
  assert.equal(world.schedule.length, said);
});

test('a steady capture is read once per POLL_MS: no second read unless a read falls SUSPECT_MS short', () => {
  const { world, watch, run } = rig();
  watch.changed();
  run(POLL_MS, true);
  const reads = world.reads;
  run(20 * POLL_MS, true);
  assert.equal(world.reads - reads, 20);
  // Frames that run SUSPECT_MS short of a read and then come again: one more read, no restart.
  for (let i = 0; i < 10; i++) {
    run(POLL_MS - SUSPECT_MS, true);
    run(SUSPECT_MS, false);
  }
  assert.deepEqual(world.restarts, []);
});

test('once restarted, the device is read every FAST_POLL_MS until healthy again, then every POLL_MS', () => {
  const { world, watch, run } = rig();
  watch.changed();
  run(1000, true);
  run(2 * POLL_MS, false);
  assert.equal(world.restarts.length, 1);
  let reads = world.reads;
  run(1000, true);
  assert.ok(world.reads - reads >= 1000 / FAST_POLL_MS - 1, `${world.reads - reads} reads in a second`);
  run(HEALTHY_MS, true);
  reads = world.reads;
  run(10_000, true);
  assert.ok(world.reads - reads <= 10_000 / POLL_MS + 1, `${world.reads - reads} reads in 10 s`);
});

test('a gap shorter than STALL_MS (a busy machine) is not a stall, wherever it falls between reads', () => {
  const { world, watch, run } = rig();
  watch.changed();
  for (let phase = 0; phase < POLL_MS; phase += 10) {
    run(2000 + phase, true);
    run(STALL_MS - 10, false);
  }
  assert.deepEqual(world.restarts, []);
});

test('a fresh capture before its first frame is not a stall (first-audio.ts measures slow starts)', () => {
  const { world, watch, run } = rig();
  watch.changed();
  run(10_000, false);
  assert.deepEqual(world.restarts, []);
});

test('a track that cannot tell (held back, muted by the system, no stats) is not watched', () => {
  const { world, watch, run } = rig();
  watch.changed();
  run(2000, true);
  world.ms = null;
  run(10_000, false);
  assert.deepEqual(world.restarts, []);
  // Readable again with the same count: its silence counts from then, not from before.
  world.ms = 2000;
  run(STALL_MS - 20, false);
  assert.deepEqual(world.restarts, []);
});

test('released or muted: the watch sleeps (no timer) until something changes, then reads again', () => {
  const { timers, world, watch, run } = rig();
  watch.changed();
  run(1000, true);
  world.on = false;
  run(POLL_MS * 2, false);
  assert.equal(timers.pending(), 0, 'no timer while nothing is watched');
  const reads = world.reads;
  run(10_000, false);
  assert.equal(world.reads, reads);
  world.on = true;
  watch.changed();
  watch.changed();
  assert.equal(timers.pending(), 1, 'one timer however often it is woken');
  run(1000, true);
  assert.ok(world.reads > reads);
});

test('a device that stalls again and again: restarts spaced by a doubling gap, up to MAX_GAP_MS', () => {
  const { world, watch, run } = rig();
  watch.changed();
  run(1000, true);
  run(2 * POLL_MS, false);
  for (let t = 0; t < 600_000; t += 1000) {
    run(200, true); // every fresh capture delivers a little, then stalls
    run(800, false);
  }
  const gaps = world.restarts.slice(1).map((t, i) => t - (world.restarts[i] ?? 0));
  assert.ok(gaps.length >= 5, `${world.restarts.length} restarts`);
  assert.ok((gaps[0] ?? 0) >= FIRST_GAP_MS);
  for (let i = 1; i < gaps.length; i++) {
    const want = Math.min(FIRST_GAP_MS * 2 ** i, MAX_GAP_MS);
    assert.ok((gaps[i] ?? 0) >= want, `gap ${i}: ${gaps[i]} ms, want >= ${want}`);
  }
  assert.ok(Math.max(...gaps) <= MAX_GAP_MS + 1000);
});

test('a capture healthy for HEALTHY_MS clears the gap: the next stall restarts at once', () => {
  const { world, watch, run } = rig();
  watch.changed();
  run(1000, true);
  run(2 * POLL_MS, false);
  assert.equal(world.restarts.length, 1);
  run(HEALTHY_MS + POLL_MS, true);
  const before = world.restarts.length;
  run(2 * POLL_MS, false);
  assert.equal(world.restarts.length, before + 1);
});

test('a read that throws is treated as one that cannot tell', () => {
  const timers = new FakeTimers();
  let restarts = 0;
  const watch = createCaptureWatch<string, string>({
    now: () => timers.now,
    setTimer: (cb, ms) => timers.setTimeout(cb, ms),
    clearTimer: (h) => timers.clearTimeout(h),
    watched: () => ['mic'],
    read: () => {
      throw new Error('stats gone');
    },
    stalled: () => {
      restarts++;
    },
  });
  watch.changed();
  timers.advance(10_000);
  assert.equal(restarts, 0);
});

test('a restart whose fresh capture never delivers: restarted again (after the gap), unlike a first open', () => {
  const { world, watch, run } = rig();
  watch.changed();
  run(1000, true);
  run(2 * POLL_MS, false);
  assert.equal(world.restarts.length, 1);
  run(RESTART_FIRST_FRAME_MS + FAST_POLL_MS, false);
  assert.equal(world.restarts.length, 1, 'not before the gap since the last restart');
  run(FIRST_GAP_MS, false);
  assert.equal(world.restarts.length, 2);
  const [a = 0, b = 0] = world.restarts;
  assert.ok(b - a >= FIRST_GAP_MS && b - a <= FIRST_GAP_MS + FAST_POLL_MS, `${b - a} ms apart`);
  run(500, true); // this one delivers
  const n = world.restarts.length;
  run(30_000, true);
  assert.equal(world.restarts.length, n);
});
