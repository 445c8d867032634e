import assert from 'node:assert/strict';
import { test } from 'node:test';
import { keepSending, usesJanus } from './far-end.ts';

function janusLike() {
  const J = () => {};
  return Object.assign(J, { init: () => {}, isWebrtcSupported: () => true });
}

test('janus.js is found by its global and the two functions every version has', () => {
  assert.equal(usesJanus({ Janus: janusLike() }), true);
  assert.equal(usesJanus({}), false);
  assert.equal(
    usesJanus({ Janus: { init: () => {}, isWebrtcSupported: () => true } }),
    false,
    'not a function',
  );
  assert.equal(usesJanus({ Janus: Object.assign(() => {}, { init: () => {} }) }), false);
  const throwing = Object.defineProperty({}, 'Janus', {
    get() {
      throw new Error('page getter');
    },
  });
  assert.equal(usesJanus(throwing), false, 'a throwing getter is no Janus');
});

test("the site's answer wins; without one, janus.js decides", () => {
  const withJanus = { Janus: janusLike() };
  assert.equal(keepSending({ keep_sending: false }, withJanus), false);
  assert.equal(keepSending({ keep_sending: true }, {}), true);
  assert.equal(keepSending({ keep_sending: null }, withJanus), true);
  assert.equal(keepSending({}, {}), false);
});
