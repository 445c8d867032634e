import assert from 'node:assert/strict';
import { webcrypto } from 'node:crypto';
import { mock, test } from 'node:test';
import { captureNatives, newSecret, offerChannel } from '../../shared/messages/page-channel.ts';
import { KEPT, UNANSWERED } from '../../shared/release-decision.ts';
import { DEFAULT_SETTINGS, GRANT_KEEPALIVE_MAX_MS, GRANT_KEEPALIVE_MIN_MS } from '../../shared/settings.ts';
import { createBridge } from './bridge.ts';

// The page world's bridge over a real channel handover, on Node's EventTarget standing in for the
// frame's window; the content script's side is driven by hand. Timers are mocked: the bridge gives the
// background POLICY_TIMEOUT_MS to answer a release question.
function frame() {
  mock.timers.enable({ apis: ['setTimeout'] });
  const w = Object.assign(new EventTarget(), { CustomEvent, setTimeout, clearTimeout });
  const bridge = createBridge(w as unknown as Window & typeof globalThis);
  const content = offerChannel(captureNatives(w), newSecret(webcrypto));
  assert.ok(content);
  const fromPage: { type: string; query?: number }[] = [];
  content.onMessage((t) => fromPage.push(JSON.parse(t)));
  return { bridge, content, fromPage };
}

test('an answer from the background decides', async (t) => {
  t.after(() => mock.timers.reset());
  const { bridge, content, fromPage } = frame();
  const answer = bridge.askPolicy('Default');
  const q = fromPage.find((m) => m.type === 'policy_query');
  assert.ok(q);
  content.send(JSON.stringify({ type: 'policy', query: q.query, allow: true, reason: null }));
  assert.deepEqual(await answer, { allow: true, reason: null });
});

test('no answer, before or after the site settings arrived: kept open (UNANSWERED)', async (t) => {
  t.after(() => mock.timers.reset());
  for (const release of [undefined, true, false]) {
    const { bridge, content } = frame();
    if (release !== undefined) {
      content.send(
        JSON.stringify({ type: 'config', delay_ms: 3000, release, reason: release ? null : KEPT.site }),
      );
      assert.equal(bridge.config().release, release);
    }
    const answer = bridge.askPolicy('Default');
    mock.timers.tick(2000);
    assert.equal(await answer, UNANSWERED, `config: ${release}`);
    mock.timers.reset();
  }
});

test("the grant keeper's interval: the default until the config says, kept in range", (t) => {
  t.after(() => mock.timers.reset());
  const { bridge, content } = frame();
  assert.equal(bridge.config().keepalive_ms, DEFAULT_SETTINGS.grantKeepaliveMs);
  const send = (keepalive_ms?: number) =>
    content.send(JSON.stringify({ type: 'config', delay_ms: 0, release: true, reason: null, keepalive_ms }));
  send(8000);
  assert.equal(bridge.config().keepalive_ms, 8000);
  send(10);
  assert.equal(bridge.config().keepalive_ms, GRANT_KEEPALIVE_MIN_MS);
  send(3_600_000);
  assert.equal(bridge.config().keepalive_ms, GRANT_KEEPALIVE_MAX_MS);
  send(); // an older background: no field
  assert.equal(bridge.config().keepalive_ms, DEFAULT_SETTINGS.grantKeepaliveMs);
});
