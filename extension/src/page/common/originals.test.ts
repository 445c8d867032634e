import assert from 'node:assert/strict';
import { test } from 'node:test';
import { followMethod, maskToString } from './originals.ts';

/** A fresh built-in per test (each replaces its method). */
const native = () =>
  class Native {
    calls: unknown[][] = [];
    /** Two declared parameters: `length` 2. */
    act(a: unknown, b: unknown): string {
      this.calls.push([a, b]);
      if (a === 'throw') throw new TypeError('native refusal');
      return `done ${String(a)}`;
    }
  };

test('followMethod: the original runs first with the same receiver and arguments; its result returns', () => {
  const Native = native();
  const original = Native.prototype.act;
  const seen: unknown[][] = [];
  assert.equal(
    followMethod(Native.prototype, 'act', (self, args, result) => seen.push([self, args, result])),
    original,
  );
  const n = new Native();
  assert.equal(n.act('x', 2), 'done x');
  assert.deepEqual(n.calls, [['x', 2]]);
  assert.deepEqual(seen, [[n, ['x', 2], 'done x']]);
  // What the original throws, the page gets, and micoff's note does not run.
  assert.throws(() => n.act('throw', 0), TypeError);
  assert.equal(seen.length, 1);
});

test('followMethod: the replacement looks like the original', () => {
  const Native = native();
  const original = Native.prototype.act;
  followMethod(Native.prototype, 'act', () => {});
  maskToString(Function.prototype);
  const act = Native.prototype.act;
  assert.notEqual(act, original);
  assert.deepEqual([act.name, act.length], ['act', 2]);
  assert.equal(Function.prototype.toString.call(act), Function.prototype.toString.call(original));
  assert.equal('prototype' in act, false);
  assert.throws(() => new (act as unknown as new () => unknown)(), TypeError, 'not constructible');
  const d = Object.getOwnPropertyDescriptor(Native.prototype, 'act');
  assert.deepEqual([d?.writable, d?.enumerable, d?.configurable], [true, false, true]);
});

test('followMethod: nothing to replace gives null', () => {
  assert.equal(
    followMethod(undefined as { act?: () => void } | undefined, 'act', () => {}),
    null,
  );
  const accessor = {
    get act() {
      return 1;
    },
  };
  assert.equal(
    followMethod(accessor, 'act', () => {}),
    null,
  );
});
