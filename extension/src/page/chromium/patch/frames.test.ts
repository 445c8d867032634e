// Same-origin child frames reached through iframe.contentWindow / contentDocument are handed on to be
// patched; the page reads exactly what it would without micoff.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Realm } from '../../common/originals.ts';
import { fakeRealm } from '../../fake-realm/realm.test-util.ts';
import { patchFrames } from './frames.ts';

test('contentWindow and contentDocument hand the child window on, and read as native', () => {
  const child = { name: 'child window' };
  const crossOrigin = {
    get defaultView(): unknown {
      throw new Error('SecurityError');
    },
  };
  type Row = [
    what: string,
    win: unknown,
    doc: unknown,
    key: 'contentWindow' | 'contentDocument',
    seen: unknown[],
  ];
  const rows: Row[] = [
    ['window', child, null, 'contentWindow', [child]],
    ['document', null, { defaultView: child }, 'contentDocument', [child]],
    ['no window yet', null, null, 'contentWindow', []],
    ['no document (cross-origin)', null, null, 'contentDocument', []],
    ['a document whose window cannot be read', null, crossOrigin, 'contentDocument', []],
  ];
  for (const [what, win, doc, key, seen] of rows) {
    const realm = fakeRealm();
    const got: unknown[] = [];
    patchFrames(realm.w, (c: Realm) => got.push(c));
    const frame = new realm.FakeIFrame();
    frame._window = win;
    frame._document = doc;
    const read = (frame as unknown as Record<string, unknown>)[key];
    assert.equal(read, key === 'contentWindow' ? win : doc, `${what}: the page reads the native value`);
    assert.deepEqual(got, seen, what);
  }
});

test('a failing or missing onChildRealm never breaks the page’s read', () => {
  for (const onChild of [
    () => {
      throw new Error('install failed');
    },
    undefined,
  ]) {
    const realm = fakeRealm();
    patchFrames(realm.w, onChild);
    const frame = new realm.FakeIFrame();
    const child = {};
    frame._window = child;
    assert.equal((frame as unknown as { contentWindow: unknown }).contentWindow, child);
  }
});
