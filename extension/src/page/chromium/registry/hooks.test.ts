import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createHooks } from './hooks.ts';

test('holdReason: the first hold that names a reason, in the order added; null when none does', () => {
  const cases: [holds: (string | null)[], reason: string | null][] = [
    [[], null],
    [[null, null], null],
    [[null, 'recording', 'processor'], 'recording'],
  ];
  for (const [holds, reason] of cases) {
    const h = createHooks<string, string>();
    for (const why of holds) h.addHold(() => why);
    assert.equal(h.holdReason('g'), reason, JSON.stringify(holds));
  }
});

test('ended: one listener’s failure does not stop the others; swapped: it does (the reacquire fails)', () => {
  const h = createHooks<string, string>();
  const log: string[] = [];
  const boom = () => {
    throw new Error('a patch failed');
  };
  h.onEnded(boom);
  h.onEnded((m) => log.push(`ended ${m}`));
  h.ended('m1');
  h.onSwapped((l) => log.push(`swapped ${l}`));
  h.onSwapped(boom);
  h.onSwapped((l) => log.push(`never ${l}`));
  assert.throws(() => h.swapped(['m1']), /a patch failed/);
  h.onPrune(() => log.push('prune 1'));
  h.onPrune(() => log.push('prune 2'));
  h.prune();
  assert.deepEqual(log, ['ended m1', 'swapped m1', 'prune 1', 'prune 2']);
});
