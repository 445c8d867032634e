import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { AudioServerInfo, AudioStream, HostEvent } from '../shared/protocol.ts';
import { applyAudioEvent, EMPTY_AUDIO } from './audio-monitor.ts';

const server: AudioServerInfo = {
  server_name: 'pulseaudio',
  server_version: '16.1',
  kind: 'pulseaudio',
  host_name: null,
  user_name: null,
  default_source_name: 'mic',
  default_sink_name: 'spk',
  sample_rate_hz: 48000,
  channels: 2,
  pids: [812],
};
const stream = (kind: 'record' | 'playback', index: number, corked = false): AudioStream => ({
  kind,
  index,
  name: null,
  client_index: null,
  device_index: 1,
  device_name: 'mic',
  application_name: 'Chromium',
  application_process_id: 120,
  application_process_binary: 'chromium',
  media_role: null,
  corked,
  muted: false,
  sample_rate_hz: 48000,
  channels: 1,
  sample_format: 's16le',
  buffer_latency_us: 10000,
  device_latency_us: 0,
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
