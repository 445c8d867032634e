import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { test } from 'node:test';
import { CPU_SPECS, laneFilter, laneOf, TIMING_SPECS } from './lanes.ts';

test('every named spec exists, and none is in two lanes', () => {
  const specs = new Set(readdirSync(new URL('./tests/', import.meta.url)));
  for (const f of [...CPU_SPECS, ...TIMING_SPECS]) assert.ok(specs.has(f), f);
  assert.equal(new Set([...CPU_SPECS, ...TIMING_SPECS]).size, CPU_SPECS.length + TIMING_SPECS.length);
});

test('the functional lane leaves out exactly the CPU and timing specs; unset takes all', () => {
  assert.deepEqual(laneFilter('functional').testIgnore?.length, CPU_SPECS.length + TIMING_SPECS.length);
  assert.deepEqual(laneFilter('cpu'), { testMatch: CPU_SPECS.map((f) => `**/${f}`) });
  assert.deepEqual(laneFilter(null), {});
  assert.equal(laneOf({}), null);
  assert.equal(laneOf({ MICOFF_E2E_LANE: 'timing' }), 'timing');
  assert.throws(() => laneOf({ MICOFF_E2E_LANE: 'quiet' }), /expected one of/);
});
