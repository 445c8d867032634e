import assert from 'node:assert/strict';
import { webcrypto } from 'node:crypto';
import { test } from 'node:test';
import {
  awaitChannel,
  captureNatives,
  channelEvents,
  HANDSHAKE_EVENT,
  newSecret,
  offerChannel,
} from './page-channel.ts';
import { spyOnEventBuiltins } from './page-script-spy.ts';

/** One frame's window: both worlds dispatch on it (Node's EventTarget stands in for the DOM's). */
const frameWindow = () => Object.assign(new EventTarget(), { CustomEvent });

/** The page world (page.js) then the content script (content.js), in Chromium's order. */
function handover() {
  const w = frameWindow();
  const page = awaitChannel(captureNatives(w));
  const toContent: string[] = [];
  const toPage: string[] = [];
  page.onMessage((t) => toPage.push(t));
  page.send('hello before the handover'); // queued
  const content = offerChannel(captureNatives(w), newSecret(webcrypto));
  assert.ok(content);
  content.onMessage((t) => toContent.push(t));
  return { w, page, content, toContent, toPage };
}

test('handover: the page world takes the secret; both directions work; early messages are flushed', () => {
  const { page, content, toContent, toPage } = handover();
  assert.equal(page.ready(), true);
  page.send('state');
  content.send('config');
  assert.deepEqual(toContent, ['hello before the handover', 'state']);
  assert.deepEqual(toPage, ['config']);
});

test('no page world in the frame: nobody takes the offer, the content script hears nothing', () => {
  const w = frameWindow();
  assert.equal(offerChannel(captureNatives(w), newSecret(webcrypto)), null);
});

test('a page script forging page -> content messages reaches nothing', () => {
  const { w, toContent } = handover();
  toContent.splice(0); // the page world's own hello
  const forged = JSON.stringify({ type: 'state', groups: [] });
  // The old fixed names, the handshake (its own secret), then "its" channel.
  const mine = newSecret(webcrypto);
  for (const type of ['micoff:page', 'micoff:content', HANDSHAKE_EVENT]) {
    w.dispatchEvent(
      new CustomEvent(type, { detail: type === HANDSHAKE_EVENT ? mine : forged, cancelable: true }),
    );
  }
  w.dispatchEvent(new CustomEvent(channelEvents(mine).toContent, { detail: forged }));
  assert.deepEqual(toContent, []);
});

test('a page script forging content -> page messages reaches nothing (no second handover)', () => {
  const { w, toPage } = handover();
  const mine = newSecret(webcrypto);
  const offer = new CustomEvent(HANDSHAKE_EVENT, { detail: mine, cancelable: true });
  assert.equal(w.dispatchEvent(offer), true); // nobody took it
  const forged = JSON.stringify({ type: 'config', delay_ms: 0, release: false, reason: 'forged' });
  w.dispatchEvent(new CustomEvent(channelEvents(mine).toPage, { detail: forged }));
  w.dispatchEvent(new CustomEvent('micoff:content', { detail: forged }));
  assert.deepEqual(toPage, []);
});

test('page scripts patching the DOM after document_start see none of the traffic', () => {
  const w = frameWindow();
  const page = awaitChannel(captureNatives(w));
  const content = offerChannel(captureNatives(w), newSecret(webcrypto));
  assert.ok(content);
  const seen: string[] = [];
  const undo = spyOnEventBuiltins(seen);
  try {
    const got: string[] = [];
    page.onMessage((t) => got.push(t));
    content.onMessage((t) => got.push(t));
    page.send('a');
    content.send('b');
    assert.deepEqual(got, ['a', 'b']);
    assert.deepEqual(seen, []);
  } finally {
    undo();
  }
});

test('newSecret: 128 bits of hex, fresh each time', () => {
  const a = newSecret(webcrypto);
  assert.match(a, /^[0-9a-f]{32}$/);
  assert.notEqual(a, newSecret(webcrypto));
  assert.throws(() => offerChannel(captureNatives(frameWindow()), 'guessable'));
});
