import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { test } from 'node:test';
import {
  AFTER_BUILDS_TIMING_SPECS,
  CPU_SPECS,
  ECHO_SPECS,
  LANE_WORKERS,
  LANES,
  laneFilter,
  laneOf,
  MOVED_ON,
  SHORT_TIMING_SPECS,
  TIMING_SPECS,
} from './lanes.ts';

test('every named spec exists, and none is in two lanes', () => {
  const specs = new Set(readdirSync(new URL('./tests/', import.meta.url)));
  const named = [
    ...CPU_SPECS,
    ...SHORT_TIMING_SPECS,
    ...TIMING_SPECS,
    ...ECHO_SPECS,
    ...AFTER_BUILDS_TIMING_SPECS,
  ];
  for (const f of named) assert.ok(specs.has(f), f);
  assert.equal(new Set(named).size, named.length);
});

test('the functional lane leaves out exactly the specs of the other lanes; unset takes all', () => {
  const others =
    CPU_SPECS.length +
    SHORT_TIMING_SPECS.length +
    TIMING_SPECS.length +
    ECHO_SPECS.length +
    AFTER_BUILDS_TIMING_SPECS.length;
  for (const server of ['pulseaudio', 'pipewire'] as const) {
    assert.equal(laneFilter('functional', server).testIgnore?.length, others);
    assert.deepEqual(laneFilter(null, server), {});
  }
  const glob = (files: readonly string[]) => files.map((f) => `**/${f}`);
  const movedOnPulse = ['firefox-quiet-unmute.spec.ts'];
  assert.deepEqual(laneFilter('cpu', 'pulseaudio'), {
    testMatch: glob([
      ...[...CPU_SPECS, ...SHORT_TIMING_SPECS].filter((f) => !movedOnPulse.includes(f)),
      'release-timing.spec.ts',
    ]),
  });
  assert.deepEqual(laneFilter('echo', 'pulseaudio'), {
    testMatch: glob([...movedOnPulse, ...ECHO_SPECS, ...AFTER_BUILDS_TIMING_SPECS]),
  });
  assert.deepEqual(laneFilter('cpu', 'pipewire'), {
    testMatch: glob([
      ...CPU_SPECS,
      ...SHORT_TIMING_SPECS,
      'release-timing.spec.ts',
      'capture-latency-aec.spec.ts',
    ]),
  });
  assert.deepEqual(laneFilter('timing', 'pipewire'), {
    testMatch: glob(['release-first-words.spec.ts', 'release-rules.spec.ts']),
  });
  assert.equal(laneOf({}), null);
  assert.equal(laneOf({ MICOFF_E2E_LANE: 'timing' }), 'timing');
  assert.throws(() => laneOf({ MICOFF_E2E_LANE: 'quiet' }), /expected one of/);
});

test('a moved spec runs in its lane on that server only, every spec once per server in all', () => {
  const runs = (f: string, server: 'pulseaudio' | 'pipewire') =>
    (['cpu', 'timing', 'echo'] as const).filter((l) => laneFilter(l, server).testMatch?.includes(`**/${f}`));
  assert.deepEqual(runs('capture-latency-aec.spec.ts', 'pipewire'), ['cpu']);
  assert.deepEqual(runs('capture-latency-aec.spec.ts', 'pulseaudio'), ['echo']);
  assert.deepEqual(runs('firefox-quiet-unmute.spec.ts', 'pulseaudio'), ['echo']);
  assert.deepEqual(runs('firefox-quiet-unmute.spec.ts', 'pipewire'), ['cpu']);
  for (const server of ['pulseaudio', 'pipewire'] as const)
    for (const [f, lane] of Object.entries(MOVED_ON[server])) assert.deepEqual(runs(f, server), [lane]);
  for (const f of [
    ...CPU_SPECS,
    ...SHORT_TIMING_SPECS,
    ...TIMING_SPECS,
    ...ECHO_SPECS,
    ...AFTER_BUILDS_TIMING_SPECS,
  ])
    for (const server of ['pulseaudio', 'pipewire'] as const)
      assert.equal(runs(f, server).length, 1, `${f} ${server}`);
});

test('the CPU, timing and echo specs run one at a time; every lane has its workers', () => {
  assert.equal(LANE_WORKERS.cpu, 1);
  assert.equal(LANE_WORKERS.timing, 1);
  assert.equal(LANE_WORKERS.echo, 1);
  for (const lane of LANES) assert.ok(LANE_WORKERS[lane] >= 1, lane);
});
