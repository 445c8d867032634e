import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { AudioServerInfo, AudioStream, HostEvent } from '../shared/protocol.ts';
import { applyAudioEvent, EMPTY_AUDIO } from './audio-monitor.ts';

const server: AudioServerInfo = {
  server_string: '/run/user/1000/pulse/native',
  socket_path: '/run/user/1000/pulse/native',
  server_name: 'pulseaudio',
  server_version: '16.1',
  is_pipewire: false,
  pipewire_version: null,
  host_name: null,
  user_name: null,
  default_sink_name: 'spk',
  default_source_name: 'mic',
  sample_format: 's16le',
  sample_rate_hz: 48000,
  channels: 2,
  server_protocol_version: 35,
  client_protocol_version: 35,
  is_local: true,
  kind: 'pulseaudio',
  pids: [812],
};
const stream = (kind: 'record' | 'playback', index: number, corked = false): AudioStream => ({
  kind,
  index,
  name: null,
  media_name: null,
  client_index: null,
  client_name: null,
  application_name: 'Chromium',
  application_process_id: 120,
  application_process_binary: 'chromium',
  device_index: 1,
  device_name: 'mic',
  device_description: 'Mic',
  device_bus: 'usb',
  device_class: 'sound',
  device_props: { 'device.bus': 'usb' },
  device_configured_latency_us: 10000,
  media_role: null,
  sample_format: 's16le',
  sample_rate_hz: 48000,
  channels: 1,
  buffer_latency_us: 10000,
  device_latency_us: 0,
  fragment_size_bytes: null,
  fragment_latency_us: null,
  requested_latency_us: null,
  corked,
  muted: false,
  driver: null,
  resample_method: null,
  owner_module: null,
  props: {},
});

test('applyAudioEvent folds a sequence of events', () => {
  const steps: [HostEvent, string][] = [
    [{ type: 'audio_connected', server }, 'connected:'],
    [{ type: 'stream_added', stream: stream('record', 7) }, 'connected:record7'],
    [{ type: 'stream_added', stream: stream('playback', 2) }, 'connected:playback2,record7'],
    [{ type: 'stream_added', stream: stream('record', 3) }, 'connected:playback2,record3,record7'],
    [{ type: 'stream_changed', stream: stream('record', 7, true) }, 'connected:playback2,record3,record7c'],
    [{ type: 'stream_removed', kind: 'record', index: 3 }, 'connected:playback2,record7c'],
    [{ type: 'stream_removed', kind: 'playback', index: 7 }, 'connected:playback2,record7c'],
    [{ type: 'audio_disconnected', reason: 'server gone' }, 'server gone:'],
    [{ type: 'audio_connected', server }, 'connected:'],
  ];
  let s = EMPTY_AUDIO;
  for (const [event, want] of steps) {
    s = applyAudioEvent(s, event);
    const streams = s.streams.map((x) => `${x.kind}${x.index}${x.corked ? 'c' : ''}`).join(',');
    assert.equal(`${s.connected ? 'connected' : s.reason}:${streams}`, want, JSON.stringify(event));
  }
});
