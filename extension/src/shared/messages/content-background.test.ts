import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseConfigAnswer, parseContentToBackground, parsePolicyAnswer } from './content-background.ts';

const group = {
  id: '0.1',
  state: 'capturing',
  since_ms: 1,
  reason: null,
  label: 'Mic',
  tracks: 1,
  enabled: 1,
};
const url = 'https://meet.example.com/x';

test('parseContentToBackground accepts the three requests and nothing else', () => {
  const ok: [unknown, string][] = [
    [{ type: 'release_state', url, mic: 'granted', groups: [] }, 'release_state'],
    [{ type: 'release_state', url, mic: 'prompt', groups: [group] }, 'release_state'],
    [{ type: 'release_policy', url, mic: 'denied', label: 'Mic' }, 'release_policy'],
    [{ type: 'release_policy', url, mic: 'unknown', label: 'Mic' }, 'release_policy'],
    [{ type: 'release_config', url }, 'release_config'],
  ];
  for (const [m, type] of ok) assert.equal(parseContentToBackground(m)?.type, type, JSON.stringify(m));
  const bad: unknown[] = [
    { type: 'release_state', url, mic: 'granted', groups: [{ ...group, state: 'hacked' }] },
    { type: 'release_state', url, mic: 'granted', groups: Array.from({ length: 33 }, () => group) },
    { type: 'release_state', url, mic: 'granted' },
    { type: 'release_state', mic: 'granted', groups: [] },
    { type: 'release_state', url, groups: [] }, // no permission state: not counted, not accepted
    { type: 'release_state', url, mic: 'yes', groups: [] },
    { type: 'release_policy', url, mic: 'granted', label: 'x'.repeat(201) },
    { type: 'release_policy', url, mic: 'granted' },
    { type: 'release_policy', url, label: 'Mic' },
    { type: 'release_config', url: 7 },
    { type: 'popup_hello', tab_id: 1 },
    'release_config',
    null,
  ];
  for (const m of bad) assert.equal(parseContentToBackground(m), null, JSON.stringify(m));
});

test('answers from the background are held to their shape', () => {
  assert.deepEqual(parsePolicyAnswer({ allow: false, reason: 'Bluetooth headset' }), {
    allow: false,
    reason: 'Bluetooth headset',
  });
  assert.deepEqual(parsePolicyAnswer({ allow: true, reason: 3 }), { allow: true, reason: null });
  assert.equal(parsePolicyAnswer(undefined), null); // no background: the caller's default applies
  assert.equal(parsePolicyAnswer({ allow: 'yes' }), null);
  assert.deepEqual(parseConfigAnswer({ delay_ms: 500, release: false, reason: 'off' }), {
    delay_ms: 500,
    release: false,
    reason: 'off',
    paths: true, // absent: an older background, the rule as before is on
    keep_sending: null, // absent: no answer for the site, the page world decides
  });
  assert.equal(parseConfigAnswer({ delay_ms: 500, release: true, keep_sending: false })?.keep_sending, false);
  assert.equal(parseConfigAnswer({ delay_ms: 500, release: true, keep_sending: 'yes' })?.keep_sending, null);
  assert.equal(parseConfigAnswer({ delay_ms: 500, release: true, reason: null, paths: false })?.paths, false);
  assert.equal(
    parseConfigAnswer({ delay_ms: 500, release: true, reason: null, keepalive_ms: 8000 })?.keepalive_ms,
    8000,
  );
  assert.equal(
    parseConfigAnswer({ delay_ms: 500, release: true, reason: null, keepalive_ms: 'x' })?.keepalive_ms,
    undefined,
  );
  assert.equal(parseConfigAnswer({ delay_ms: Number.NaN, release: true, reason: null }), null);
  assert.equal(parseConfigAnswer({ delay_ms: 500 }), null);
  assert.equal(parseConfigAnswer(undefined), null);
});
