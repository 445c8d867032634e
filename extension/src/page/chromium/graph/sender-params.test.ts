import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createSenderParams, type Params } from './sender-params.ts';

/** A sender with Chromium's transaction rule (measured on 156): setParameters must carry the
 * transactionId of the LAST getParameters, which it then consumes. `applied` logs each accepted set. */
class FakeSender {
  active: boolean[];
  txn: string | null = null;
  n = 0;
  applied: boolean[][] = [];
  /** Reject the next N sets (a worker thread that failed). */
  failNext = 0;
  constructor(active: boolean[] = [true]) {
    this.active = active;
  }
  get(): Params {
    this.txn = `t${++this.n}`;
    return { transactionId: this.txn, encodings: this.active.map((a) => ({ active: a })) };
  }
  /** Checked at the call, applied later: Chromium checks the transaction when setParameters is called
   * and runs the change on another thread, in call order. */
  set(p: Params): Promise<void> {
    const failed = this.failNext > 0;
    if (failed) this.failNext--;
    const ok = !failed && p.transactionId === this.txn;
    if (ok) this.txn = null;
    return Promise.resolve().then(() => {
      if (failed) throw new Error('OperationError');
      if (!ok) throw new Error('InvalidModificationError');
      this.active = p.encodings.map((e) => e.active !== false);
      this.applied.push([...this.active]);
    });
  }
}

const make = () => createSenderParams<FakeSender, Params>({ get: (s) => s.get(), set: (s, p) => s.set(p) });

test('restart: every encoding inactive, then back as the page set them', async () => {
  const p = make();
  const s = new FakeSender([true]);
  await p.restart(s);
  assert.deepEqual(s.applied, [[false], [true]]);
  assert.deepEqual(s.active, [true]);
});

test('restart: a sender the page made inactive is left alone', async () => {
  const p = make();
  const s = new FakeSender([false]);
  await p.restart(s);
  assert.deepEqual(s.applied, []);
});

test('restart: while it runs, the page reads (and the graph sees) active as the page set it', async () => {
  const p = make();
  const s = new FakeSender([true]);
  const run = p.restart(s);
  await Promise.resolve();
  await Promise.resolve();
  assert.deepEqual(s.active, [false], 'the stream is stopped now');
  assert.deepEqual(
    p.pageGet(s).encodings.map((e) => e.active),
    [true],
  );
  assert.deepEqual(p.active(s), [true]);
  await run;
  assert.deepEqual(p.active(s), [true]);
});

test('restart: the page setting parameters meanwhile wins (its active is what comes back)', async () => {
  const p = make();
  const s = new FakeSender([true]);
  const run = p.restart(s);
  // The page pauses its sender while micoff restarts it.
  const mine = p.pageGet(s);
  for (const e of mine.encodings) e.active = false;
  await s.set(p.pageSet(s, mine));
  await run;
  assert.deepEqual(s.active, [false]);
  assert.deepEqual(s.applied.at(-1), [false]);
});

test('restart: a failed start is retried; concurrent restarts share one run', async () => {
  const p = make();
  const s = new FakeSender([true]);
  const a = p.restart(s);
  const b = p.restart(s);
  assert.equal(a, b);
  await Promise.resolve();
  s.failNext = 2; // the first two attempts to start again fail
  await a;
  assert.deepEqual(s.active, [true]);
});

test('restart: a sender that cannot be stopped (closed) is left as it was', async () => {
  const p = make();
  const s = new FakeSender([true]);
  s.failNext = 1;
  await p.restart(s);
  assert.deepEqual(s.active, [true]);
  assert.deepEqual(s.applied, []);
  assert.deepEqual(p.active(s), [true], 'nothing left restoring');
});

test("transactions: micoff's reads between the page's get and set do not fail the page's set", async () => {
  const p = make();
  const s = new FakeSender([true]);
  const mine = p.pageGet(s);
  p.active(s); // the audio graph asks whether the sender sends
  await s.set(p.pageSet(s, mine)); // would reject without the renewal
  // ...and a restart in between too.
  const again = p.pageGet(s);
  await p.restart(s);
  await s.set(p.pageSet(s, again));
  assert.deepEqual(s.active, [true]);
});

test('transactions: what fails without micoff still fails (get, get, set the first; set twice)', async () => {
  const p = make();
  const s = new FakeSender([true]);
  const first = p.pageGet(s);
  p.pageGet(s);
  await assert.rejects(s.set(p.pageSet(s, first)));
  const once = p.pageGet(s);
  await s.set(p.pageSet(s, once));
  p.active(s);
  await assert.rejects(s.set(p.pageSet(s, once)));
});
