import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { TabReleaseView } from '../shared/messages/popup-background.ts';
import { tabState } from './view.ts';

test('tabState: a muted tab whose microphone is still open says muted, not on', () => {
  const base: TabReleaseView = { origin: null, state: 'capturing', since_ms: null, reason: null };
  assert.equal(tabState(null), 'No microphone in use on this tab.');
  assert.equal(tabState(base), 'Microphone on.');
  assert.equal(tabState({ ...base, muted: true }), 'Muted, microphone still open.');
  assert.match(
    tabState({ ...base, muted: true, muted_since_ms: 1 }) ?? '',
    /^Muted since .+, microphone still open\.$/,
  );
  assert.equal(tabState({ ...base, state: 'released' }), 'Muted: microphone released.');
});
