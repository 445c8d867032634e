import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { HostStatus } from '../shared/host-status.ts';
import type { NativeReleaseVerdict, TabReleaseView } from '../shared/messages/popup-background.ts';
import { hostRestartLine, tabState } from './view.ts';

const base: TabReleaseView = { origin: null, state: 'capturing', since_ms: null, reason: null };
const firefox = (now: NativeReleaseVerdict): TabReleaseView => ({
  ...base,
  muted: true,
  muted_since_ms: 1,
  native_release: { now, last: null, delay_ms: 3000, margin_ms: 2000, command: 'c' },
});

test('tabState: a muted tab whose microphone is still open says muted, not on', () => {
  assert.equal(tabState(null), 'No microphone in use on this tab.');
  assert.equal(tabState(base), 'Microphone on.');
  assert.match(tabState({ ...base, muted: true }), /^Muted, microphone still open: micoff releases it/);
  assert.equal(tabState({ ...base, state: 'released' }), 'Muted: microphone released.');
  assert.equal(
    tabState({ ...base, state: 'not_released', reason: 'Bluetooth headset' }),
    'Muted, microphone kept open: Bluetooth headset.',
  );
});

test('tabState on Firefox: open or closed as micoff saw it at the audio server, never assumed', () => {
  const at = / since .+/.source;
  assert.match(
    tabState(firefox({ state: 'in_effect', after_ms: 0, late: false })),
    new RegExp(`^Muted${at}: Firefox released the microphone\\.$`),
  );
  assert.match(
    tabState(firefox({ state: 'pending', deadline_ms: 9 })),
    new RegExp(`^Muted${at}, microphone still open: Firefox's own release closes it after its delay\\.$`),
  );
  assert.match(
    tabState(firefox({ state: 'not_in_effect', open_ms: 6000 })),
    new RegExp(`^Muted${at}, microphone still open\\.$`),
  );
  // Cannot tell: says nothing about the microphone either way.
  const unknown = tabState(firefox({ state: 'unknown', why: 'w' }));
  assert.match(unknown, new RegExp(`^Muted${at}\\.$`));
  assert.doesNotMatch(unknown, /open|released/);
});

test('hostRestartLine: said once connected again after a drop, never while down or on a first connection', () => {
  const up: HostStatus = {
    state: 'connected',
    message: null,
    fix_command: null,
    version: null,
    attempts: 0,
    retry_at_ms: null,
    since_ms: 2,
    last_drop: null,
  };
  assert.equal(hostRestartLine(up), null);
  const drop = { at_ms: 1, reason: 'Native host has exited.' };
  assert.match(
    hostRestartLine({ ...up, last_drop: drop }) ?? '',
    /^micoff-host restarted at .+ \(the last one ended: Native host has exited\.\)$/,
  );
  assert.equal(hostRestartLine({ ...up, state: 'error', last_drop: drop }), null);
});
