import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Originals } from '../../common/originals.ts';
import { settle } from '../../fake-realm/realm.test-util.ts';
import { createPermissionWatch } from './permission-watch.ts';

class FakeStatus extends EventTarget {
  constructor(public _state: PermissionState) {
    super();
  }
  _set(s: PermissionState) {
    this._state = s;
    this.dispatchEvent(new Event('change'));
  }
}

function originals(status: FakeStatus | null, queries: { n: number }) {
  return {
    micPermission: () => {
      queries.n++;
      return Promise.resolve(status as unknown as PermissionStatus | null);
    },
    permissionState: function (this: FakeStatus) {
      return this._state;
    },
    addEventListener: EventTarget.prototype.addEventListener,
  } as unknown as Originals;
}

test('unknown until started; one query, then its change events keep the state current', async () => {
  const status = new FakeStatus('prompt');
  const queries = { n: 0 };
  const watch = createPermissionWatch(originals(status, queries));
  assert.equal(watch.state(), null);
  const firsts: (PermissionState | null)[] = [];
  watch.start((s) => firsts.push(s));
  watch.start((s) => firsts.push(s));
  await settle();
  assert.equal(queries.n, 1);
  assert.deepEqual(firsts, ['prompt'], 'the state before the browser answered, once');
  status._set('granted');
  assert.equal(watch.state(), 'granted');
  status._set('prompt'); // a one-time grant expired
  assert.equal(watch.state(), 'prompt');
});

test('no Permissions API: unknown, reported as such', async () => {
  const watch = createPermissionWatch(originals(null, { n: 0 }));
  let first: PermissionState | null | undefined;
  watch.start((s) => {
    first = s;
  });
  await settle();
  assert.equal(first, null);
  assert.equal(watch.state(), null);
});
