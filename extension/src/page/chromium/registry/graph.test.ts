// The audio graph as the registry hands it to audibility.ts, against the fake realm.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { KEPT } from '../../../shared/release-decision.ts';
import { asTrack, MIC, pageWorld } from '../../fake-realm/realm.test-util.ts';
import type { Vertex } from '../graph/audibility.ts';

const sender = (sending: boolean): Vertex => ({ kind: 'sender', sending, why: KEPT.sending });

test('a track vertex: a member’s enabled state and `clone` reason, a derived track’s own', () => {
  const world = pageWorld();
  const { reg, FakeTrack } = world;
  const { m, t } = world.adopt();
  const derived = new FakeTrack(MIC);
  type Row = [what: string, set: () => void, track: object, enabled: boolean, unseen: string];
  const rows: Row[] = [
    ['member', () => {}, t, true, KEPT.clone],
    ['member muted', () => (m.enabled = false), t, false, KEPT.clone],
    [
      'member stopped',
      () => {
        m.enabled = true;
        m.ended = true;
      },
      t,
      false,
      KEPT.clone,
    ],
    ['derived', () => {}, derived, true, KEPT.unseen],
    ['derived disabled', () => (derived.enabled = false), derived, false, KEPT.unseen],
    [
      'derived ended',
      () => {
        derived.enabled = true;
        derived.stop();
      },
      derived,
      false,
      KEPT.unseen,
    ],
  ];
  for (const [what, set, track, enabled, unseen] of rows) {
    set();
    const v = reg.trackVertex(asTrack(track));
    assert.ok(v.kind === 'track');
    assert.deepEqual([v.enabled, v.unseen], [enabled, unseen], what);
  }
});

test('next: every patch’s consumers; one that throws counts as hearing; `seen` once any answered', () => {
  const world = pageWorld();
  const { reg } = world;
  const { t } = world.adopt();
  const v = reg.trackVertex(asTrack(t));
  assert.ok(v.kind === 'track');
  assert.equal(v.seen, false);
  const answers: Vertex[][] = [[], []];
  reg.addConsumers(() => answers[0] ?? []);
  reg.addConsumers(() => answers[1] ?? []);
  assert.deepEqual(v.next(), []);
  assert.equal(v.seen, false, 'no consumer yet');
  answers[1] = [sender(false)];
  assert.deepEqual(v.next(), [sender(false)]);
  assert.equal(v.seen, true);
  reg.addConsumers(() => {
    throw new Error('a consumer we cannot read');
  });
  assert.deepEqual(v.next(), [sender(false), { kind: 'sink', why: KEPT.unseen }]);
});

test('audibility: a group’s live members are the roots; `follow` false is the plain rule', () => {
  const world = pageWorld();
  const { reg } = world;
  const { m, g, t } = world.adopt();
  const other = world.adopt();
  other.m.ended = true; // stopped by the page: not a root
  reg.addConsumers((track) => (track === asTrack(t) ? [sender(false)] : [sender(true)]));
  assert.deepEqual(reg.audibility(g, true), { hears: null, silenced: true }, 'its only path sends nothing');
  assert.deepEqual(reg.audibility(g, false), { hears: KEPT.clone, silenced: false }, 'enabled hears');
  m.enabled = false;
  assert.deepEqual(reg.audibility(g, false), { hears: null, silenced: true });
  other.m.ended = false;
  assert.deepEqual(reg.audibility(g, true), { hears: KEPT.sending, silenced: true });
});

test('clones of derived tracks are followed as recorded', () => {
  const world = pageWorld();
  const { reg, FakeTrack } = world;
  const derived = new FakeTrack(MIC);
  const copy = new FakeTrack(MIC);
  reg.setClones((x) => (x === asTrack(derived) ? [asTrack(copy)] : []));
  const v = reg.trackVertex(asTrack(derived));
  assert.ok(v.kind === 'track');
  assert.deepEqual(
    v.clones?.().map((c) => (c.kind === 'track' ? c.key : null)),
    [copy],
  );
});
