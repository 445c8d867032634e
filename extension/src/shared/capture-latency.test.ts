import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import {
  CAPTURE_LATENCY_CHOICES,
  choiceValue,
  configuredLine,
  grantedLine,
  grantedView,
  MANAGED_CAPTURE_LATENCY_KEY,
  managedNeedsApply,
  parseChoice,
  parseManagedLatency,
  readManagedLatency,
} from './capture-latency.ts';
import type { LatencyConfigured, LatencyStatus, LatencyStream } from './protocol.ts';

const stream = (index: number, granted_ms: number, extra: Partial<LatencyStream> = {}): LatencyStream => ({
  index,
  browser: 'chromium',
  client_name: 'Chromium input',
  application_process_id: 100 + index,
  source_name: 'mic',
  launch_env_latency_ms: null,
  requested_latency_us: 10_000,
  granted_latency_us: granted_ms * 1000,
  granted_fragment_us: null,
  capture_latency_us: granted_ms * 1000,
  source_configured_latency_us: 10_000,
  rule_min_frag: null,
  held_down_by: [],
  ...extra,
});
const status = (
  configured: LatencyStatus['configured'],
  streams: LatencyStream[] = [],
  needs_restart: string[] = [],
): LatencyStatus => ({
  server: { kind: 'pulseaudio', version: '16.1', mechanism: 'launch_environment' },
  configured,
  streams,
  needs_restart,
  notes: [],
});

test('managed value: absent, browser default (0), a choice, and junk that leaves the user in control', () => {
  assert.deepEqual(parseManagedLatency({}), { managed: false, invalid: null });
  assert.deepEqual(parseManagedLatency(undefined), { managed: false, invalid: null });
  assert.deepEqual(parseManagedLatency({ captureLatencyMs: 0 }), { managed: true, capture_ms: null });
  for (const ms of [20, 40, 60]) {
    assert.deepEqual(parseManagedLatency({ captureLatencyMs: ms }), { managed: true, capture_ms: ms });
  }
  for (const junk of [35, -1, '40', true, 40.5, {}]) {
    const m = parseManagedLatency({ captureLatencyMs: junk });
    assert.equal(m.managed, false, `${JSON.stringify(junk)} is not managed`);
    assert.match(m.managed ? '' : (m.invalid ?? ''), /not one of 0, 20, 40, 60/);
  }
});

test('managed storage that cannot be read (no policy backend) means not managed', async () => {
  const failing = { get: () => Promise.reject(new Error('Managed storage manifest not found')) };
  assert.deepEqual(await readManagedLatency(failing), { managed: false, invalid: null });
  assert.deepEqual(await readManagedLatency(undefined), { managed: false, invalid: null });
  const area = { get: async (k: string) => ({ [k]: 40 }) };
  assert.deepEqual(await readManagedLatency(area), { managed: true, capture_ms: 40 });
});

test('the schema file declares exactly the key and values the parser accepts', () => {
  const schema = JSON.parse(readFileSync(new URL('../managed_schema.json', import.meta.url), 'utf8'));
  assert.equal(schema.type, 'object');
  assert.equal(schema.additionalProperties, undefined, 'Chrome refuses additionalProperties at the top');
  assert.deepEqual(Object.keys(schema.properties), [MANAGED_CAPTURE_LATENCY_KEY]);
  const p = schema.properties[MANAGED_CAPTURE_LATENCY_KEY];
  assert.equal(p.type, 'integer');
  for (const v of p.enum)
    assert.equal(parseManagedLatency({ [MANAGED_CAPTURE_LATENCY_KEY]: v }).managed, true);
  assert.deepEqual(
    p.enum,
    CAPTURE_LATENCY_CHOICES.map((c) => c ?? 0),
  );
});

test('the manifest declares the schema', () => {
  const manifest = JSON.parse(readFileSync(new URL('../../../manifests/base.json', import.meta.url), 'utf8'));
  assert.equal(manifest.storage?.managed_schema, 'managed_schema.json');
});

test('choices round-trip through the select values; others are refused', () => {
  for (const c of CAPTURE_LATENCY_CHOICES) assert.equal(parseChoice(choiceValue(c)), c);
  assert.equal(parseChoice('35'), undefined);
  assert.equal(parseChoice(''), undefined);
});

test('managedNeedsApply compares with what the host has configured', () => {
  const at40 = status({
    capture_ms: 40,
    mechanism: 'launch_environment',
    browsers: ['chromium'],
    files: [],
    in_effect: true,
  });
  assert.equal(managedNeedsApply({ managed: true, capture_ms: 40 }, at40), false);
  assert.equal(managedNeedsApply({ managed: true, capture_ms: 60 }, at40), true);
  assert.equal(managedNeedsApply({ managed: true, capture_ms: null }, at40), true);
  assert.equal(managedNeedsApply({ managed: true, capture_ms: null }, status(null)), false);
  assert.equal(managedNeedsApply({ managed: false, invalid: null }, status(null)), false);
});

test('configuredLine says what restarts are needed', () => {
  assert.match(configuredLine(status(null)), /Nothing configured/);
  const idle: LatencyConfigured = {
    capture_ms: 40,
    mechanism: 'launch_environment',
    browsers: [],
    files: [],
    in_effect: null,
  };
  assert.match(configuredLine(status({ ...idle, browsers: ['chromium'] })), /no capture stream open/);
  const line = configuredLine(
    status(
      {
        capture_ms: 40,
        mechanism: 'pipewire_pulse_rule',
        browsers: ['chromium'],
        files: ['/x'],
        in_effect: false,
      },
      [],
      ['pipewire-pulse', 'chromium'],
    ),
  );
  assert.match(line, /40 ms through a pipewire-pulse rule/);
  assert.match(line, /restart pipewire-pulse and chromium/);
});

test('grantedView: the tab streams when known, the lowest and highest grant, who holds it down', () => {
  const s = status(null, [
    stream(1, 40),
    stream(2, 10, {
      held_down_by: [
        {
          index: 9,
          client_name: 'parec',
          application_name: 'parec',
          application_process_id: 99,
          application_process_binary: 'parec',
          latency_us: 10_000,
        },
      ],
    }),
  ]);
  const all = grantedView(s, null);
  assert.deepEqual([all.min_ms, all.max_ms], [10, 40]);
  assert.deepEqual(all.holders, ['parec (pid 99) at 10 ms']);
  assert.match(grantedLine(all), /10 ms–40 ms; held down by parec/);
  const tab = grantedView(s, [1]);
  assert.deepEqual(
    tab.streams.map((x) => x.index),
    [1],
  );
  assert.equal(grantedLine(tab), 'Capture latency granted by the server: 40 ms.');
  // Unknown indices fall back to every browser stream rather than showing nothing.
  assert.equal(grantedView(s, [77]).streams.length, 2);
  // What the stream actually gets (the fragment on pipewire-pulse), not the buffer latency (0 there).
  const pw = stream(1, 0, { granted_fragment_us: 40_000, capture_latency_us: 40_000 });
  assert.equal(grantedView(status(null, [pw]), null).min_ms, 40);
  assert.match(grantedLine(grantedView(status(null), null)), /no capture stream/);
});
