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
  ['latency 15 ms (EC off on pipewire-pulse, measured)', { audio: { latency: 0.015 } }, true],
  [
    'latency 5 ms (the processed 10 ms is closer: EC stays on, measured)',
    { audio: { latency: 0.005 } },
    false,
  ],
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
  // Advanced sets: every value required; a set only the unprocessed path meets turns EC off (measured).
  [
    'advanced exact 40 ms (no choice meets it: Chromium skips the set, EC stays on)',
    { audio: { advanced: [{ latency: 0.04 }] } },
    false,
  ],
  [
    'advanced {exact: 23.2 ms} (not met either, measured)',
    { audio: { advanced: [{ latency: { exact: 0.0232 } }] } },
    false,
  ],
  [
    'advanced {max: 5 ms} (met by no choice, measured)',
    { audio: { advanced: [{ latency: { max: 0.005 } }] } },
    false,
  ],
  [
    'advanced {min: 20 ms} (met by the unprocessed path only)',
    { audio: { advanced: [{ latency: { min: 0.02 } }] } },
    true,
  ],
  [
    'advanced {min: 20 ms} in the second set, a first without latency',
    { audio: { advanced: [{ channelCount: 1 }, { latency: { min: 0.02 } }] } },
    true,
  ],
  ['advanced {max: 50 ms} (10 ms admitted)', { audio: { advanced: [{ latency: { max: 0.05 } }] } }, false],
  [
    'advanced {ideal: 40 ms} (ideal means nothing in an advanced set)',
    { audio: { advanced: [{ latency: { ideal: 0.04 } }] } },
    false,
  ],
  ['advanced exact 10 ms', { audio: { advanced: [{ latency: 0.01 }] } }, false],
  [
    'advanced set asks about EC: the page decided',
    { audio: { advanced: [{ latency: { min: 0.02 }, echoCancellation: false }] } },
    false,
  ],
  [
    'EC asked in one advanced set, latency in another: the page decided',
    { audio: { advanced: [{ echoCancellation: true }, { latency: { min: 0.02 } }] } },
    false,
  ],
  [
    'advanced not an array (the browser throws its own TypeError)',
    { audio: { advanced: { latency: 0.04 } } },
    false,
  ],
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
        assert.equal(r.asked, null);
        return;
      }
      const audio = (r.constraints as { audio: MediaTrackConstraints }).audio;
      const asked = (input as { audio: MediaTrackConstraints & { latency?: unknown } }).audio;
      // The pin goes where the latency that would cost EC is: the basic set, or each such advanced set.
      if (asked.latency !== undefined) assert.equal(audio.echoCancellation, true);
      else assert.equal(audio.echoCancellation, undefined);
      for (const [i, set] of (audio.advanced ?? []).entries()) {
        const before = (asked.advanced ?? [])[i] as { latency?: unknown };
        assert.equal(set.echoCancellation, before.latency === undefined ? undefined : true, `set ${i}`);
      }
      // Everything the page asked is still there, latency included: micoff only adds the pins.
      assert.deepEqual(unguardedConstraints(audio), asked);
      assert.ok(r.asked !== null && /\d+ ms$/.test(r.asked), String(r.asked));
    });
  }
});

test('guarded: other members (video) are kept as they are', () => {
  const video = { width: 640 };
  const r = guardLatency({ audio: { latency: 0.04 }, video } as MediaStreamConstraints);
  assert.equal((r.constraints as { video: unknown }).video, video);
});

test('basic ideal and an advanced set: both pinned, the page sees neither pin', () => {
  const audio = { latency: 0.04, advanced: [{ latency: { min: 0.02 } }, { channelCount: 1 }] };
  const r = guardLatency({ audio } as unknown as MediaStreamConstraints);
  const out = (r.constraints as { audio: Record<string, unknown> & { advanced: object[] } }).audio;
  assert.equal(out.echoCancellation, true);
  assert.deepEqual(out.advanced, [{ latency: { min: 0.02 }, echoCancellation: true }, { channelCount: 1 }]);
  assert.equal(r.asked, '40 ms');
  // What the browser's getConstraints() returns for it (keys in its own order) reads as asked.
  const browserView = {
    echoCancellation: true,
    latency: 0.04,
    advanced: [{ echoCancellation: true, latency: { min: 0.02 } }, { channelCount: 1 }],
  } as unknown as MediaTrackConstraints;
  assert.deepEqual(unguardedConstraints(browserView), audio);
});

test('guardReason names what the page asked', () => {
  assert.match(guardReason('40 ms'), /asked for 40 ms capture latency/);
  assert.match(guardReason('at least 20 ms'), /at least 20 ms capture latency/);
  assert.equal(
    guardLatency({ audio: { advanced: [{ latency: { min: 0.02 } }] } } as unknown as MediaStreamConstraints)
      .asked,
    'at least 20 ms',
  );
  assert.match(guardReason(null), /kept echo cancellation on/);
});
