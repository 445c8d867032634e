// Where a processor's frames go, as vertices, against the fake realm.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { KEPT } from '../../../../shared/release-decision.ts';
import { asTrack, MIC, pageWorld } from '../../../fake-realm/realm.test-util.ts';
import type { Vertex } from '../../graph/audibility.ts';
import { createFramePaths } from './frame-paths.ts';

/** A vertex as a short word: the sink's reason or the track's label. */
const name = (v: Vertex, names: Map<unknown, string>) =>
  v.kind === 'sink' ? v.why : v.kind === 'track' ? names.get(v.key) : v.kind;

function setup() {
  const w = pageWorld();
  const { t } = w.adopt();
  const paths = createFramePaths(w.o, w.reg, w.FakeTrack as unknown as typeof MediaStreamTrack);
  const readable = new w.FakeReadable();
  paths.addProcessor(asTrack(t), readable);
  const gens = [new w.FakeGenerator({ kind: 'audio' }), new w.FakeGenerator({ kind: 'audio' })];
  for (const g of gens) paths.addGenerator(g._writable, asTrack(g));
  const names = new Map<unknown, string>(gens.map((g, i) => [g, `gen${i}`]));
  const processor = () => {
    const v = w.reg.trackVertex(asTrack(t));
    const [p] = v.kind === 'track' ? v.next() : [];
    assert.ok(p?.kind === 'node');
    return p;
  };
  return { w, paths, readable, gens, names, processor };
}

test('frames followed to a generator: the path goes on there, and only there; it is relayed', () => {
  const { paths, readable, gens, names, processor } = setup();
  paths.links.link(readable, gens[0]?._writable as object);
  const p = processor();
  assert.deepEqual(
    p.next().map((v) => name(v, names)),
    ['gen0'],
  );
  assert.deepEqual(
    p.relayed?.().map((v) => name(v, names)),
    ['gen0'],
  );
});

test('frames read by page code: the processor hears; the page’s generators are followed for the report', () => {
  const { readable, paths, gens, names, processor } = setup();
  paths.links.link(readable, {}); // a branch into page code
  paths.links.link(readable, gens[1]?._writable as object);
  const p = processor();
  assert.deepEqual(
    p.next().map((v) => name(v, names)),
    [KEPT.processor, 'gen0', 'gen1'],
  );
  assert.deepEqual(p.relayed?.(), [], 'not only relayed: nothing is starved');
});

test('a generator is named once, and only by its writable', () => {
  const { w, paths } = setup();
  const g = new w.FakeGenerator({ kind: 'audio' });
  assert.equal(paths.addGenerator(g._writable, asTrack(g)), true);
  assert.equal(paths.addGenerator(g._writable, asTrack(new w.FakeTrack(MIC))), false);
});
