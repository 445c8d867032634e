import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { TabReleaseView } from '../shared/messages/popup-background.ts';
import { CpuHistory, HISTORY_SPAN_MS, phaseOf } from './cpu-history.ts';

const view = (state: TabReleaseView['state'], muted = false): TabReleaseView => ({
  origin: null,
  state,
  since_ms: 0,
  reason: null,
  muted,
});

test('the phase of all tabs: an unmuted capture wins, released only when every device is', () => {
  assert.equal(phaseOf([]), 'idle');
  assert.equal(phaseOf([view('released', true), view('capturing')]), 'capturing');
  assert.equal(phaseOf([view('released', true), view('capturing', true)]), 'muted');
  assert.equal(phaseOf([view('released', true), view('not_released', true)]), 'kept');
  assert.equal(phaseOf([view('released', true)]), 'released');
});

test('no baseline, no saving; samples across a phase change count nowhere; old points scroll out', () => {
  let now = 0;
  const h = new CpuHistory(() => now);
  h.setPhase('released'); // released before any unmuted sample was seen
  now += 1000;
  assert.equal(h.addSample(1, 1000), 0);
  assert.equal(h.snapshot().released[0]?.baseline_pct, null);
  now += 500;
  h.setPhase('capturing');
  now += 500;
  h.addSample(9, 1000); // the window saw the unmute
  assert.equal(h.snapshot().points.at(-1)?.phase, 'transition');
  now += 1000;
  h.addSample(3, 1000);
  h.setPhase('released'); // straight from capturing (no release delay): mute and release marks
  assert.equal(h.snapshot().released.at(-1)?.baseline_pct, 3); // the transition sample is not in it
  assert.deepEqual(
    h.snapshot().marks.map((m) => m.kind),
    ['release', 'unmute', 'mute', 'release'],
  );
  now += 1000;
  assert.ok(Math.abs(h.addSample(5, 1000) - -0.02) < 1e-12); // above the baseline: counts against
  now += HISTORY_SPAN_MS + 1;
  h.setPhase('capturing');
  h.restore(1);
  const s = h.snapshot();
  assert.equal(s.points.length, 0);
  assert.equal(s.released.length, 1); // ended just now: still on the chart
  assert.ok(Math.abs(s.saved_cpu_s - 0.98) < 1e-12);
});
