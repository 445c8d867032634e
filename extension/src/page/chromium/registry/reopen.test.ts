// The default reopen: only while the permission holds, within a deadline, and what a refusal says.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FakeTimers } from '../../../background/fakes.test-util.ts';
import { ENDED } from '../../../shared/release-decision.ts';
import type { Originals } from '../../common/originals.ts';
import { settle } from '../../fake-realm/realm.test-util.ts';
import type { Root } from './members.ts';
import { createOpen, REOPEN_DEADLINE_MS, ReopenRefused, refusalReason } from './reopen.ts';

interface FakeTrack {
  stopped: boolean;
}

/** The originals the reopen uses; getUserMedia answers when the test says. */
function world(permission: PermissionState | null) {
  const timers = new FakeTimers();
  const calls: unknown[] = [];
  const pending: { resolve: (s: MediaStream) => void; reject: (e: unknown) => void }[] = [];
  const o = {
    mediaDevices: {},
    getUserMedia(constraints: unknown) {
      calls.push(constraints);
      return new Promise<MediaStream>((resolve, reject) => pending.push({ resolve, reject }));
    },
    setTimeout: (cb: () => void, ms: number) => timers.setTimeout(cb, ms) as number,
    clearTimeout: (h: number) => timers.clearTimeout(h),
    getTracks(this: { tracks: FakeTrack[] }) {
      return this.tracks;
    },
    stop(this: FakeTrack) {
      this.stopped = true;
    },
  } as unknown as Originals;
  const root: Root = { constraints: { deviceId: { exact: 'mic-1' } }, pinned: Promise.resolve() };
  const stream = (): { stream: MediaStream; track: FakeTrack } => {
    const track = { stopped: false };
    return { stream: { tracks: [track] } as unknown as MediaStream, track };
  };
  return { timers, calls, pending, open: createOpen(o, () => permission), root, stream };
}

for (const state of ['granted', null] as const) {
  test(`permission ${state ?? 'unknown'}: the device reopens with the page's constraints`, async () => {
    const w = world(state);
    const opening = w.open(w.root);
    await settle();
    assert.deepEqual(w.calls, [{ audio: { deviceId: { exact: 'mic-1' } } }]);
    const { stream } = w.stream();
    w.pending[0]?.resolve(stream);
    assert.equal(await opening, stream);
    assert.equal(w.timers.pending(), 0, 'the deadline is cleared');
  });
}

for (const state of ['prompt', 'denied'] as const) {
  test(`permission ${state}: refused at once, getUserMedia never called (no prompt the page did not ask)`, async () => {
    const w = world(state);
    await assert.rejects(w.open(w.root), (e) => e instanceof ReopenRefused && e.why === ENDED.permission);
    assert.deepEqual(w.calls, []);
  });
}

test('a reopen still pending at the deadline is refused; the stream that comes later is stopped', async () => {
  const w = world('granted');
  const opening = w.open(w.root);
  const outcome = opening.then(
    () => 'opened',
    (e: unknown) => e,
  );
  await settle();
  w.timers.advance(REOPEN_DEADLINE_MS - 1);
  await settle();
  w.timers.advance(1);
  const refused = await outcome;
  assert.ok(refused instanceof ReopenRefused && refused.why === ENDED.timeout);
  const late = w.stream();
  w.pending[0]?.resolve(late.stream);
  await settle();
  assert.equal(late.track.stopped, true);
});

test('a refusal of the browser is named for the report', async () => {
  const err = (name: string) => Object.assign(new Error(name), { name });
  assert.equal(refusalReason(err('NotAllowedError')), ENDED.permission);
  assert.equal(refusalReason(err('SecurityError')), ENDED.permission);
  assert.equal(refusalReason(err('NotFoundError')), ENDED.gone);
  assert.equal(refusalReason(err('OverconstrainedError')), ENDED.gone);
  assert.equal(refusalReason(err('NotReadableError')), ENDED.refused);
  assert.equal(refusalReason(new ReopenRefused(ENDED.timeout)), ENDED.timeout);
  const w = world('granted');
  const opening = w.open(w.root);
  await settle();
  w.pending[0]?.reject(err('NotFoundError'));
  await assert.rejects(opening, (e) => refusalReason(e) === ENDED.gone);
  assert.equal(w.timers.pending(), 0);
});
