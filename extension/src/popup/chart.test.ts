import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { HistorySnapshot } from '../shared/protocol.ts';
import { CHART, chartModel, NO_POWER_READING, savingsLines } from './chart.ts';

const history = (over: Partial<HistorySnapshot> = {}): HistorySnapshot => ({
  now_ms: 300_000,
  span_ms: 300_000,
  points: [
    { t_ms: 150_000, pct: 4, window_ms: 1000, phase: 'capturing' },
    { t_ms: 300_000, pct: 1, window_ms: 1000, phase: 'released' },
  ],
  marks: [
    { t_ms: 200_000, kind: 'mute' },
    { t_ms: 201_000, kind: 'release' },
  ],
  released: [{ start_ms: 201_000, end_ms: null, baseline_pct: 4, saved_cpu_s: 2.5 }],
  saved_cpu_s: 2.5,
  phase: 'released',
  ...over,
});

test('the chart model places samples, released bands and marks on the time axis', () => {
  const m = chartModel(history());
  assert.equal(m.max_pct, 5); // 4 % peak + 10 %, rounded up
  // Plot area: y from CHART.top (max_pct) to height - bottom (0 %): 76 px tall here.
  const [first, last] = m.line.split(' ');
  assert.equal(first, `${CHART.width / 2},21.2`); // 4 of 5 %
  assert.equal(last, `${CHART.width},66.8`); // 1 of 5 %
  assert.equal(m.released.length, 1);
  assert.equal(m.released[0]?.open, true);
  assert.equal(m.released[0]?.x, Math.round((201_000 / 300_000) * CHART.width * 10) / 10);
  assert.equal((m.released[0]?.x ?? 0) + (m.released[0]?.width ?? 0), CHART.width); // up to now
  assert.deepEqual(
    m.marks.map((k) => k.kind),
    ['mute', 'release'],
  );
  assert.equal(m.now_pct, 1);
  assert.equal(chartModel(history({ points: [] })).line, '');
});

test('savings say CPU-s, and joules only from a power reading, else why not', () => {
  assert.match(savingsLines(2.54, null).cpu, /^≈ 2\.5 CPU-s saved/);
  assert.match(savingsLines(-0.01, null).cpu, /^≈ 0\.0 CPU-s saved/, 'never "-0.0"');
  assert.match(savingsLines(-0.1, null).cpu, /^Nothing saved yet/, 'never "≈ -0.1 CPU-s saved"');
  const none = savingsLines(2.5, {
    ok: true,
    reading: {
      source: null,
      watts: null,
      busy_cores: 0.3,
      watts_per_busy_core: null,
      window_ms: 1000,
      unavailable: ['no RAPL: x', 'no battery in y'],
    },
  });
  assert.equal(none.energy, NO_POWER_READING);
  assert.doesNotMatch(none.energy, /RAPL/);
  assert.equal(none.energy_detail, 'no RAPL: x; no battery in y', 'the host’s reasons, kept for the tooltip');
  const rapl = savingsLines(2, {
    ok: true,
    reading: {
      source: 'rapl',
      watts: 8,
      busy_cores: 0.5,
      watts_per_busy_core: 16,
      window_ms: 1000,
      unavailable: [],
    },
  });
  assert.match(rapl.energy, /^≈ 32 J \(0\.0089 Wh\) saved/);
  assert.match(rapl.energy, /the CPU's power meter read/);
  assert.match(savingsLines(1, { ok: false, message: 'host gone' }).energy, /host gone/);
});
