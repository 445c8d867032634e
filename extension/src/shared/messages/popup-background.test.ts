import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parsePopupMessage } from './popup-background.ts';

test('parsePopupMessage', () => {
  const cases: [unknown, unknown][] = [
    [
      { type: 'popup_hello', tab_id: 5 },
      { type: 'popup_hello', tab_id: 5 },
    ],
    [
      { type: 'popup_hello', tab_id: null },
      { type: 'popup_hello', tab_id: null },
    ],
    [
      { type: 'popup_hello', tab_id: '5' },
      { type: 'popup_hello', tab_id: null },
    ],
    [
      { type: 'popup_hello', tab_id: 1.5 },
      { type: 'popup_hello', tab_id: null },
    ],
    [{ type: 'host_reconnect', extra: 1 }, { type: 'host_reconnect' }],
    [{ type: 'run_doctor' }, { type: 'run_doctor' }],
    [{ type: 'release_config', url: 'https://x.example' }, null],
    [{}, null],
    ['run_doctor', null],
    [null, null],
  ];
  for (const [m, want] of cases) assert.deepEqual(parsePopupMessage(m), want, JSON.stringify(m));
});
