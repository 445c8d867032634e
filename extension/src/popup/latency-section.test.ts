import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { AudioSnapshot } from '../shared/messages/popup-background.ts';
import type { LatencyReply } from '../shared/messages/ui-latency.ts';
import type { AudioStream } from '../shared/protocol.ts';
import { audioPathLine, latencyLine, tabStreamIndices } from './latency-section.ts';

const rec = (index: number, description: string) =>
  ({ kind: 'record', index, device_description: description, device_props: {} }) as unknown as AudioStream;

test('tabStreamIndices: the record streams on the sources the tab captures from', () => {
  const audio = { connected: true, server: null, reason: null, streams: [rec(1, 'Mic A'), rec(2, 'Mic B')] };
  assert.deepEqual(tabStreamIndices(audio as AudioSnapshot, ['Mic B']), [2]);
  assert.deepEqual(tabStreamIndices(audio as AudioSnapshot, []), []);
  assert.deepEqual(tabStreamIndices(null, ['Mic B']), []);
});

test('latencyLine: granted, configured, pending restart, managed, host missing', () => {
  const reply: LatencyReply = {
    managed: { managed: true, capture_ms: 40 },
    set: null,
    error: null,
    status: {
      server: { kind: 'pipewire_pulse', version: '1.4.2', mechanism: 'pipewire_pulse_rule' },
      configured: {
        capture_ms: 40,
        mechanism: 'pipewire_pulse_rule',
        browsers: ['chromium'],
        files: [],
        in_effect: false,
      },
      needs_restart: ['pipewire-pulse'],
      notes: [],
      streams: [
        {
          index: 3,
          browser: 'chromium',
          client_name: 'Chromium input',
          application_process_id: 5,
          source_name: 'mic',
          launch_env_latency_ms: null,
          requested_latency_us: 10_000,
          granted_latency_us: 0,
          granted_fragment_us: 10_000,
          capture_latency_us: 10_000,
          source_configured_latency_us: null,
          rule_min_frag: null,
          held_down_by: [],
        },
      ],
    },
  };
  assert.equal(
    latencyLine(reply, []),
    'Capture latency granted by the server: 10 ms. Configured: 40 ms, set by your administrator. Not in effect yet: restart pipewire-pulse.',
  );
  assert.match(
    latencyLine({ ...reply, status: null, error: 'host not installed' }, []),
    /host not installed/,
  );
  assert.match(latencyLine(null, []), /asking/);
  assert.match(audioPathLine(3.25), /3.3 % of one core/);
});
