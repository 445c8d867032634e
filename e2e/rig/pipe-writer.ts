// Feeds a module-pipe-source's FIFO (argv[2]) with the speech-like signal in real time, 20 ms at a time,
// paced by the wall clock as a sound card paces its data (audio-rig.ts addClockedSource). Runs until
// the rig stops it (or the FIFO's reader goes away).
import { openSync, writeSync } from 'node:fs';
import { SIGNAL_RATE, speechSignal } from './signals.ts';

const fifo = process.argv[2];
if (!fifo) throw new Error('usage: pipe-writer.ts FIFO');
const fd = openSync(fifo, 'w');
const signal = speechSignal();
const BYTES_PER_MS = (SIGNAL_RATE * 2) / 1000;
const start = performance.now();
let written = 0; // bytes
setInterval(() => {
  // Everything due by now, plus 20 ms ahead so a late timer never starves the source.
  const due = Math.floor((performance.now() - start + 20) * BYTES_PER_MS) & ~1;
  while (written < due) {
    const at = written % signal.length;
    const n = Math.min(due - written, signal.length - at);
    try {
      writeSync(fd, signal, at, n);
    } catch {
      process.exit(0); // the server closed its end
    }
    written += n;
  }
}, 10);
