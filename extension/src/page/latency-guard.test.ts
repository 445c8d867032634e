import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { guardLatency, guardReason, unguardedConstraints } from './latency-guard.ts';

// Plain objects: the DOM typings lack `latency`.
type Constraints = { audio?: unknown; video?: unknown };
type Case = [name: string, input: Constraints | undefined, guarded: boolean];

const CASES: Case[] = [
  ['no constraints', undefined, false],
  ['audio: true', { audio: true }, false],
  ['audio: false, video', { audio: false, video: true }, false],
  ['latency 40 ms, EC unconstrained', { audio: { latency: 0.04 } }, true],
  ['latency {ideal: 40 ms}', { audio: { latency: { ideal: 0.04 } } }, true],
  ['latency 60 ms with a deviceId', { audio: { deviceId: 'abc', latency: 0.06 } }, true],
  ['latency 5 ms (below the processed 10 ms)', { audio: { latency: 0.005 } }, true],
  [
    'latency {ideal: 40 ms, max: 100 ms} (10 ms admitted)',
    { audio: { latency: { ideal: 0.04, max: 0.1 } } },
    true,
  ],
  [
    'latency ideal 40 ms, NS and AGC off, EC not asked',
    { audio: { latency: 0.04, noiseSuppression: false, autoGainControl: false } },
    true,
  ],
  ['latency 10 ms (the processed value)', { audio: { latency: 0.01 } }, false],
  ['latency 10.2 ms (same as processed)', { audio: { latency: 0.0102 } }, false],
  ['explicitly unprocessed: EC false', { audio: { latency: 0.04, echoCancellation: false } }, false],
  [
    'explicitly unprocessed: EC {exact: false}',
    { audio: { latency: 0.04, echoCancellation: { exact: false } } },
    false,
  ],
  ['EC already pinned on', { audio: { latency: 0.04, echoCancellation: true } }, false],
  ['EC {ideal: true}', { audio: { latency: 0.04, echoCancellation: { ideal: true } } }, false],
  [
    "required exact latency (the page gets Chromium's answer)",
    { audio: { latency: { exact: 0.04 } } },
    false,
  ],
  ['required min latency above 10 ms', { audio: { latency: { min: 0.02, ideal: 0.04 } } }, false],
  ['required max below 10 ms', { audio: { latency: { max: 0.005, ideal: 0.004 } } }, false],
  ['latency only in advanced sets (left alone)', { audio: { advanced: [{ latency: 0.04 }] } }, false],
  ['junk latency (the browser throws its own TypeError)', { audio: { latency: 'x' } }, false],
  ['no latency at all', { audio: { noiseSuppression: false } }, false],
];

describe('guardLatency', () => {
  for (const [name, input, guarded] of CASES) {
    test(`${guarded ? 'guards' : 'leaves'}: ${name}`, () => {
      const before = JSON.stringify(input);
      const r = guardLatency(input as MediaStreamConstraints | undefined);
      assert.equal(r.guarded, guarded);
      assert.equal(JSON.stringify(input), before, 'the page object is never mutated');
      if (!guarded) {
        assert.equal(r.constraints, input, 'unchanged: the very same object goes to the browser');
        assert.equal(r.latency_s, null);
        return;
      }
      const audio = (r.constraints as { audio: MediaTrackConstraints }).audio;
      assert.equal(audio.echoCancellation, true);
      // Everything the page asked is still there, latency included: micoff only adds the pin.
      assert.deepEqual(unguardedConstraints(audio), (input as { audio: MediaTrackConstraints }).audio);
      assert.ok(r.latency_s !== null && r.latency_s > 0);
    });
  }
});

test('guarded: other members (video) are kept as they are', () => {
  const video = { width: 640 };
  const r = guardLatency({ audio: { latency: 0.04 }, video } as MediaStreamConstraints);
  assert.equal((r.constraints as { video: unknown }).video, video);
});

test('guardReason names the latency', () => {
  assert.match(guardReason(0.04), /40 ms capture latency/);
  assert.match(guardReason(null), /kept echo cancellation on/);
});
