// Test signals the rigs play (e2e/rig/audio-rig.ts) and write (e2e/rig/pipe-writer.ts), s16le mono.

export const SIGNAL_RATE = 48_000;

/**
 * One second of test signal, s16le mono: two tone bursts (440 Hz and 660 Hz, 250 ms each, 5 ms fades)
 * separated by silence. Bursts, not a steady sine: Chromium's default noise suppression learns a
 * steady tone as noise and fades it to near silence within seconds; the gaps keep its noise estimate low.
 */
export function testSignalSecond(): Buffer {
  const buf = Buffer.alloc(SIGNAL_RATE * 2);
  const bursts = [
    { start: 0, hz: 440 },
    { start: 0.5, hz: 660 },
  ];
  const len = 0.25;
  const fade = 0.005;
  for (let i = 0; i < SIGNAL_RATE; i++) {
    const t = i / SIGNAL_RATE;
    let v = 0;
    for (const b of bursts) {
      const u = t - b.start;
      if (u < 0 || u >= len) continue;
      const env = Math.min(1, u / fade, (len - u) / fade);
      v = env * Math.sin(2 * Math.PI * b.hz * u);
    }
    buf.writeInt16LE(Math.round(0.3 * 32767 * v), i * 2);
  }
  return buf;
}

/**
 * Ten seconds of speech-like signal, s16le mono: a tone whose pitch jumps every 30 ms (200-2000 Hz,
 * a fixed pseudo-random sequence) under a 4 Hz envelope, never silent. A noise suppressor does not
 * learn it as noise, so the first sample after an unmute carries it.
 */
export function speechSignal(): Buffer {
  const seconds = 10;
  const buf = Buffer.alloc(SIGNAL_RATE * seconds * 2);
  let seed = 12345;
  let hz = 300;
  let phase = 0;
  for (let i = 0; i < SIGNAL_RATE * seconds; i++) {
    if (i % 1440 === 0) {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      hz = 200 + (seed / 2 ** 31) * 1800;
    }
    phase += (2 * Math.PI * hz) / SIGNAL_RATE;
    const envelope = 0.6 + 0.4 * Math.sin((2 * Math.PI * 4 * i) / SIGNAL_RATE);
    buf.writeInt16LE(Math.round(0.25 * 32767 * envelope * Math.sin(phase)), i * 2);
  }
  return buf;
}
