import assert from 'node:assert/strict';
import { test } from 'node:test';
import { levelOf } from './source-level.ts';

/** s16le mono: `loudS` seconds at +-`amp` (a square wave), then `quietS` seconds of zeros, at 48 kHz. */
function signal(amp: number, loudS: number, quietS: number): Buffer {
  const loud = Math.round(48_000 * loudS);
  const buf = Buffer.alloc(2 * (loud + Math.round(48_000 * quietS)));
  for (let i = 0; i < loud; i++) buf.writeInt16LE(Math.round((i % 2 ? amp : -amp) * 32768), i * 2);
  return buf;
}

test('levelOf: a burst that fades is heard in peak_rms, not in the whole-window rms', () => {
  const l = levelOf(signal(0.5, 0.1, 1.1));
  assert.equal(l.seconds, 1.2);
  assert.ok(Math.abs(l.peak_rms - 0.5) < 1e-3, `peak_rms ${l.peak_rms}`);
  assert.ok(Math.abs(l.rms - 0.5 * Math.sqrt(0.1 / 1.2)) < 1e-3, `rms ${l.rms}`);
  assert.ok(Math.abs(l.db - 20 * Math.log10(l.rms)) < 1e-9);
});

test('levelOf: no samples, or zeros, read -120 dB and no peak', () => {
  for (const b of [Buffer.alloc(0), signal(0, 0, 0.5)]) {
    const l = levelOf(b);
    assert.deepEqual([l.rms, l.peak_rms, l.db], [0, 0, -120]);
  }
});
