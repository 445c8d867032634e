import assert from 'node:assert/strict';
import { test } from 'node:test';
import { QUIET_HOLD_MS } from '../shared/firefox-release.ts';
import type { TabReleaseView } from '../shared/messages/popup-background.ts';
import { quietPartLine } from './quiet-part-line.ts';

const view = (v: Partial<TabReleaseView>): TabReleaseView => ({
  origin: 'https://meet.example.com',
  state: 'capturing',
  since_ms: 1,
  reason: null,
  ...v,
});

test('quietPartLine: what micoff does on its own, said apart from Firefox’s release', () => {
  const hold = `${QUIET_HOLD_MS / 1000} s`;
  const unmuted = quietPartLine(view({ muted: false }));
  assert.equal(unmuted.quiet, false);
  assert.match(
    unmuted.text,
    new RegExp(`^while you are muted, micoff stops the call .* ${hold} after Firefox's release\\.$`),
  );
  const waiting = quietPartLine(view({ muted: true, muted_since_ms: 5, quiet_since_ms: null }));
  assert.equal(waiting.quiet, false);
  assert.match(waiting.text, new RegExp(`^${hold} after Firefox's release, micoff stops the call`));
  const at = Date.UTC(2026, 0, 1, 12, 0, 0);
  const quiet = quietPartLine(view({ muted: true, muted_since_ms: 5, quiet_since_ms: at }));
  assert.equal(quiet.quiet, true);
  assert.equal(
    quiet.text,
    `the call has sent nothing since ${new Date(at).toLocaleTimeString()}, where Firefox alone keeps encoding and sending the muted microphone's silence; it sends again at the unmute.`,
  );
  // Quiet is only ever said while muted.
  assert.equal(quietPartLine(view({ muted: false, quiet_since_ms: at })).quiet, false);
});
