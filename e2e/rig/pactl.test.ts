import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isChromium, isFirefox, parseInfo, parseSinkInputs, parseSourceOutputs } from './pactl.ts';

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

test('isFirefox: by the application name or binary the client announced, not Chromium', () => {
  const [ff, byBinary, chromium] = parseSourceOutputs(
    JSON.stringify([
      {
        index: 1,
        source: 1,
        properties: { 'application.name': 'Firefox', 'application.process.binary': 'firefox-esr' },
      },
      { index: 2, source: 1, properties: { 'application.process.binary': 'firefox-esr' } },
      {
        index: 3,
        source: 1,
        properties: { 'application.name': 'Chromium input', 'application.process.binary': 'chromium' },
      },
    ]),
  );
  assert.deepEqual(
    [ff, byBinary, chromium].map((s) => s && isFirefox(s)),
    [true, true, false],
  );
});

test('parseSinkInputs: the playback stream Firefox keeps next to its capture', () => {
  const [tone, ff] = parseSinkInputs(
    JSON.stringify([
      {
        index: 0,
        sink: 0,
        corked: false,
        buffer_latency_usec: 2000232.0,
        properties: { 'application.name': 'micoff-rig-tone' },
      },
      {
        index: 4,
        sink: '1',
        corked: false,
        buffer_latency_usec: 31224.0,
        properties: {
          'application.name': 'Firefox',
          'application.process.binary': 'firefox-esr',
          'media.name': 'meeting: muted',
        },
      },
    ]),
  );
  assert.deepEqual(
    [tone, ff].map((s) => s && { sink: s.sink, lat: s.bufferLatencyUs, firefox: isFirefox(s) }),
    [
      { sink: 0, lat: 2000232, firefox: false },
      { sink: 1, lat: 31224, firefox: true },
    ],
  );
  assert.equal(ff?.properties['media.name'], 'meeting: muted');
});
