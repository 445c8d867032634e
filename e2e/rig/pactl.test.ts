import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isChromium, parseInfo, parseSourceOutputs } from './pactl.ts';

test('parseSourceOutputs reads pactl 16 JSON (numbers as strings, latencies in usec)', () => {
  const json = JSON.stringify([
    {
      index: 3,
      client: '7',
      source: 1,
      corked: false,
      buffer_latency_usec: 10000.0,
      source_latency_usec: 0.0,
      properties: {
        'application.name': 'Chromium input',
        'application.process.id': '4242',
        'application.process.binary': 'chromium',
      },
    },
    { index: 0, client: null, source: 0, corked: true, properties: { 'media.role': 'filter' } },
  ]);
  const [a, b] = parseSourceOutputs(json);
  assert.deepEqual(
    { i: a?.index, c: a?.client, pid: a?.processId, lat: a?.bufferLatencyUs, chromium: a && isChromium(a) },
    { i: 3, c: 7, pid: 4242, lat: 10000, chromium: true },
  );
  assert.deepEqual(
    { c: b?.client, pid: b?.processId, corked: b?.corked, chromium: b && isChromium(b) },
    {
      c: null,
      pid: null,
      corked: true,
      chromium: false,
    },
  );
});

test('parseInfo', () => {
  const i = parseInfo(
    '{"server_name":"PulseAudio (on PipeWire 0.3.65)","server_version":"15.0.0","default_source_name":"mic","default_sink_name":"out"}',
  );
  assert.deepEqual(i, {
    serverName: 'PulseAudio (on PipeWire 0.3.65)',
    serverVersion: '15.0.0',
    defaultSource: 'mic',
    defaultSink: 'out',
  });
});
