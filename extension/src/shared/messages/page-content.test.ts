import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseContentMessage, parsePageMessage } from './page-content.ts';

const group = {
  id: '0.1',
  state: 'released',
  since_ms: 1,
  reason: null,
  label: 'Mic',
  tracks: 1,
  enabled: 0,
};

test('parsePageMessage accepts only well-formed messages from the page world', () => {
  const ok: [unknown, string][] = [
    [{ type: 'hello' }, 'hello'],
    [{ type: 'state', groups: [] }, 'state'],
    [{ type: 'state', groups: [group] }, 'state'],
    [{ type: 'policy_query', query: 3, label: 'Mic' }, 'policy_query'],
    [{ type: 'ticks', every_ms: 400 }, 'ticks'],
    [{ type: 'ticks', every_ms: 0 }, 'ticks'],
    [{ type: 'tick_once', in_ms: 150 }, 'tick_once'],
  ];
  for (const [m, type] of ok)
    assert.equal(parsePageMessage(JSON.stringify(m))?.type, type, JSON.stringify(m));
  const bad: unknown[] = [
    { type: 'state', groups: [{ ...group, state: 'hacked' }] },
    { type: 'state', groups: [{ ...group, since_ms: 'x' }] },
    { type: 'state', groups: [{ ...group, label: 'x'.repeat(201) }] },
    { type: 'state', groups: Array.from({ length: 33 }, () => group) },
    { type: 'state', groups: [{ ...group, tracks: -1 }] },
    { type: 'policy_query', query: -1, label: 'x' },
    { type: 'policy_query', query: 1 },
    { type: 'ticks', on: true },
    { type: 'ticks', every_ms: '400' },
    { type: 'ticks', every_ms: 1 },
    { type: 'ticks', every_ms: 1e9 },
    { type: 'ticks' },
    { type: 'tick_once', in_ms: 0 },
    { type: 'tick_once', in_ms: Number.NaN },
    { type: 'release_now' },
    [],
    null,
  ];
  for (const m of bad) assert.equal(parsePageMessage(JSON.stringify(m)), null, JSON.stringify(m));
  assert.equal(parsePageMessage('{not json'), null);
  assert.equal(parsePageMessage({ type: 'hello' }), null); // objects do not cross worlds: strings only
  assert.equal(parsePageMessage('x'.repeat(70_000)), null);
});

test('parseContentMessage', () => {
  assert.deepEqual(
    parseContentMessage(JSON.stringify({ type: 'config', delay_ms: 3000, release: true, reason: null })),
    {
      type: 'config',
      delay_ms: 3000,
      release: true,
      reason: null,
      paths: true,
      keep_sending: null,
    },
  );
  const sending = parseContentMessage(
    JSON.stringify({ type: 'config', delay_ms: 3000, release: true, reason: null, keep_sending: true }),
  );
  assert.equal(sending?.type === 'config' && sending.keep_sending, true);
  const off = parseContentMessage(
    JSON.stringify({ type: 'config', delay_ms: 3000, release: true, reason: null, paths: false }),
  );
  assert.equal(off?.type === 'config' && off.paths, false);
  const keep = (v: unknown) => {
    const m = parseContentMessage(
      JSON.stringify({ type: 'config', delay_ms: 3000, release: true, reason: null, keepalive_ms: v }),
    );
    return m?.type === 'config' ? m.keepalive_ms : 'not a config';
  };
  assert.equal(keep(8000), 8000);
  assert.equal(keep('8000'), undefined); // junk: the default applies (the bridge's)
  assert.equal(parseContentMessage(JSON.stringify({ type: 'policy', query: 1, allow: 'yes' })), null);
  assert.deepEqual(parseContentMessage(JSON.stringify({ type: 'tick', extra: 1 })), { type: 'tick' });
  assert.equal(
    parseContentMessage(JSON.stringify({ type: 'config', delay_ms: '3000', release: true })),
    null,
  );
});

test('state groups carry echo cancellation and the latency guard note; junk reads as unknown', () => {
  const parse = (extra: Record<string, unknown>) => {
    const m = parsePageMessage(JSON.stringify({ type: 'state', groups: [{ ...group, ...extra }] }));
    return m?.type === 'state' ? m.groups[0] : undefined;
  };
  assert.equal(parse({ echo_cancellation: true })?.echo_cancellation, true);
  assert.equal(parse({ echo_cancellation: false })?.echo_cancellation, false);
  assert.equal(parse({ echo_cancellation: 'yes' })?.echo_cancellation, null);
  assert.equal(parse({})?.echo_cancellation, null);
  assert.equal(parse({ latency_guard: 'kept on' })?.latency_guard, 'kept on');
  assert.equal(parse({ latency_guard: 'x'.repeat(401) })?.latency_guard, null);
  assert.equal(parse({ latency_guard: 7 })?.latency_guard, null);
});

test('state groups carry when the device was muted: a time, only while no track is enabled', () => {
  const parse = (extra: Record<string, unknown>) => {
    const m = parsePageMessage(JSON.stringify({ type: 'state', groups: [{ ...group, ...extra }] }));
    return m?.type === 'state' ? m.groups[0] : undefined;
  };
  assert.equal(parse({ muted_since_ms: 1234 })?.muted_since_ms, 1234);
  assert.equal(parse({ muted_since_ms: null })?.muted_since_ms, null);
  assert.equal(parse({})?.muted_since_ms, null);
  // A device with an enabled track is not muted, whatever the report says.
  assert.equal(parse({ muted_since_ms: 1234, enabled: 1 })?.muted_since_ms, null);
  // Not a time: the whole report is refused, like any other malformed field.
  assert.equal(parse({ muted_since_ms: 'soon' }), undefined);
  assert.equal(parse({ muted_since_ms: true }), undefined);
});

test('state groups carry since when micoff keeps a muted device’s senders quiet (Firefox), only while muted', () => {
  const parse = (extra: Record<string, unknown>) => {
    const m = parsePageMessage(JSON.stringify({ type: 'state', groups: [{ ...group, ...extra }] }));
    return m?.type === 'state' ? m.groups[0] : undefined;
  };
  assert.equal(parse({ muted_since_ms: 1000, quiet_since_ms: 1500 })?.quiet_since_ms, 1500);
  assert.equal(parse({ muted_since_ms: 1000 })?.quiet_since_ms, null);
  // Not muted: nothing can be quiet, whatever the report says.
  assert.equal(parse({ quiet_since_ms: 1500 })?.quiet_since_ms, null);
  assert.equal(parse({ muted_since_ms: 1000, quiet_since_ms: 1500, enabled: 1 })?.quiet_since_ms, null);
  assert.equal(parse({ muted_since_ms: 1000, quiet_since_ms: 'later' }), undefined);
});

test('a group report carries its first-audio measurement only when it is a well-formed one', () => {
  const first = (v: unknown) => {
    const m = parsePageMessage(JSON.stringify({ type: 'state', groups: [{ ...group, first_audio: v }] }));
    return m?.type === 'state' ? m.groups[0]?.first_audio : 'rejected';
  };
  const ok = { ms: 950, open_ms: 40, at_ms: 1_700_000_000_000 };
  assert.deepEqual(first(ok), ok);
  const bads = [
    undefined,
    null,
    'slow',
    { ms: -1, open_ms: 0, at_ms: 1 },
    { ms: 1e9, open_ms: 0, at_ms: 1 },
    { ms: 5, open_ms: 0 },
    { ms: 5, at_ms: 1 },
    { ms: 5, open_ms: 6, at_ms: 1 },
  ];
  for (const bad of bads) assert.equal(first(bad), null, JSON.stringify(bad));
});
