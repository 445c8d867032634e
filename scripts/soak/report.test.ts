import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { MeetingStats } from '../../e2e/rig/meeting-page.ts';
import { formatTable, intervalOf } from './report.ts';

const stats = (
  captured: number,
  received: number,
  concealed: number,
  events: number | null,
): MeetingStats => ({
  error: null,
  track: null,
  at: 0,
  outbound: null,
  source: { audioLevel: 0.1, totalAudioEnergy: 1, totalSamplesDuration: captured },
  inbound: {
    audioLevel: 0,
    totalAudioEnergy: 0,
    totalSamplesDuration: 0,
    totalSamplesReceived: received,
    concealedSamples: concealed,
    concealmentEvents: events,
    packetsReceived: 0,
    bytesReceived: 0,
  },
});

test('intervalOf: capture shortfall, concealment and events between two snapshots', () => {
  const r = intervalOf(stats(10, 480_000, 100, 2), stats(69.4, 3_360_000, 388, 5), 60);
  assert.ok(Math.abs(r.captured_s - 59.4) < 1e-9);
  assert.ok(Math.abs(r.capture_shortfall_pct - 1) < 1e-9);
  assert.equal(r.concealed_pct, (100 * 288) / 2_880_000);
  assert.equal(r.concealment_events, 3);
});

test('intervalOf: nothing received, older stats without events, more captured than wall time', () => {
  const r = intervalOf(stats(0, 0, 0, null), stats(10.2, 0, 0, null), 10);
  assert.equal(r.concealed_pct, null);
  assert.equal(r.concealment_events, null);
  assert.equal(r.capture_shortfall_pct, 0);
});

test('formatTable: one row per interval under the server name', () => {
  const text = formatTable({
    server: 'pulseaudio',
    version: '16.1',
    intervals: [
      {
        t_s: 60,
        wall_s: 60,
        captured_s: 59.99,
        capture_shortfall_pct: 0.02,
        concealed_pct: 0.01,
        concealment_events: 1,
        audio_path_cpu_pct: 6.5,
        granted_latency_ms: [40],
      },
    ],
  });
  const lines = text.split('\n');
  assert.equal(lines[0], 'pulseaudio 16.1');
  assert.equal(lines.length, 3);
  assert.match(lines[2] ?? '', /59\.99\/60\.00 .* 0\.010 .* 6\.5 .* 40$/);
});
