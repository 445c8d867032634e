import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { HistorySnapshot } from '../shared/protocol.ts';
import { EMPTY_REPORT } from './fakes.test-util.ts';
import { nextHistory } from './history-view.ts';

const snap = (now_ms: number, ts: number[], saved_cpu_s = 0): HistorySnapshot => ({
  now_ms,
  span_ms: 300_000,
  points: ts.map((t_ms) => ({ t_ms, pct: 1, window_ms: 1000, phase: 'capturing' })),
  marks: [],
  released: [],
  saved_cpu_s,
  phase: 'capturing',
});
const report = EMPTY_REPORT;

test('the first event is the whole history; a sample is appended and old points scroll out', () => {
  const first = nextHistory(null, {
    type: 'history',
    history: snap(400_000, [99_000, 150_000]),
    report: null,
  });
  assert.deepEqual(
    first.points.map((p) => p.t_ms),
    [99_000, 150_000],
  );
  const next = nextHistory(first, { type: 'history', history: snap(401_000, [401_000], 0.5), report });
  assert.deepEqual(
    next.points.map((p) => p.t_ms),
    [150_000, 401_000],
  );
  assert.equal(next.saved_cpu_s, 0.5);
  // A resubscription (report null) starts over.
  assert.deepEqual(
    nextHistory(next, { type: 'history', history: snap(402_000, []), report: null }).points,
    [],
  );
});
