// Shadow streams against the fake realm: what they hold, when they are dropped, and the `inactive`
// event our release must not leak.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { asTrack, MIC, pageWorld } from '../../fake-realm/realm.test-util.ts';
import { createShadows } from './shadows.ts';

const asStream = (s: object) => s as unknown as MediaStream;

test('a shadow holds the real tracks of the page’s stream (others as they are) and maps back to it', () => {
  const world = pageWorld();
  const { reg, FakeStream, FakeTrack } = world;
  const { m, t } = world.adopt();
  const real = new FakeTrack(MIC);
  m.real = asTrack(real);
  const other = new FakeTrack(MIC, 'video');
  const page = new FakeStream([t, other]);
  const made = reg.makeShadow(asStream(page)) as unknown as InstanceType<typeof FakeStream>;
  assert.deepEqual(made.getTracks(), [real, other]);
  assert.equal(reg.shadowPage.get(asStream(made)), undefined, 'makeShadow alone is not kept');
  const kept = reg.shadowed(asStream(page));
  assert.equal(reg.shadowPage.get(kept), asStream(page));
});

test('swapTrack moves only the shadows still kept: not dropped ones, not pruned ones', () => {
  const world = pageWorld();
  const { FakeStream, FakeTrack } = world;
  type Stream = InstanceType<typeof FakeStream>;
  const old = new FakeTrack(MIC);
  const next = new FakeTrack(MIC);
  const live = new Set<unknown>();
  const shadows = createShadows(world.o, { realOf: (t) => t, liveIn: (s) => live.has(s) });
  const shadowOf = (tracks: object[]) => {
    const page = new FakeStream(tracks as InstanceType<typeof FakeTrack>[]);
    live.add(page);
    return { page, shadow: shadows.shadowed(asStream(page)) as unknown as Stream };
  };
  const kept = shadowOf([old]);
  const dropped = shadowOf([old]);
  const pruned = shadowOf([old]);
  const without = shadowOf([new FakeTrack(MIC)]);
  shadows.dropShadow(asStream(dropped.shadow));
  live.delete(pruned.page);
  shadows.prune();
  shadows.swapTrack(asTrack(old), asTrack(next));
  assert.deepEqual(kept.shadow.getTracks(), [next]);
  assert.deepEqual(dropped.shadow.getTracks(), [old]);
  assert.deepEqual(pruned.shadow.getTracks(), [old]);
  assert.equal(without.shadow.getTracks().includes(next), false, 'a shadow without the old track');
});

test('hideInactive: Chromium’s `inactive` never reaches the page while a managed track is live', () => {
  const world = pageWorld();
  const { reg, FakeStream } = world;
  const { m, t } = world.adopt();
  const s = new FakeStream([t]);
  reg.hideInactive(asStream(s));
  reg.hideInactive(asStream(s)); // once per stream
  let heard = 0;
  s.addEventListener('inactive', () => heard++);
  s.dispatchEvent(new Event('inactive')); // our release stopped the real track
  assert.equal(heard, 0);
  m.ended = true; // the page stopped it: the event is the browser's to give
  s.dispatchEvent(new Event('inactive'));
  assert.equal(heard, 1);
});
