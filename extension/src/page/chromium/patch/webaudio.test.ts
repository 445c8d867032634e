// WebAudio against the fake realm: a source node on a managed stream is rebuilt on the fresh tracks
// after a reacquire and reconnected where the page connected it; every node's connections are the
// graph that says whether anything hears the device.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { KEPT } from '../../../shared/release-decision.ts';
import { type FakeStream, openMic, pageWorld } from '../../fake-realm/realm.test-util.ts';
import { patchGetUserMedia } from './get-user-media.ts';
import { patchWebAudio } from './webaudio.ts';

async function world() {
  const w = pageWorld({ patches: [patchGetUserMedia, patchWebAudio] });
  const { stream, t, m } = await openMic(w);
  const ctx = new w.FakeAudioContext();
  return { ...w, stream, t, m, g: m.group, ctx };
}
type World = Awaited<ReturnType<typeof world>>;
type Node = InstanceType<World['FakeAudioNode']>;

/** The page's source node, built either way the page can. */
const sourceOf = (w: World, how: 'method' | 'constructor', s: FakeStream) => {
  if (how === 'method') return w.ctx.createMediaStreamSource(s) as InstanceType<World['FakeSourceNode']>;
  const C = w.get<new (ctx: unknown, init: unknown) => InstanceType<World['FakeSourceNode']>>(
    'MediaStreamAudioSourceNode',
  );
  return new C(w.ctx, { mediaStream: s });
};

test('a source node on a managed stream is rebuilt on the fresh tracks and reconnected', async () => {
  for (const how of ['method', 'constructor'] as const) {
    const w = await world();
    const node = sourceOf(w, how, w.stream);
    const analyser = w.ctx.createAnalyser();
    node.connect(analyser);
    node.connect(w.ctx.destination, 0, 0);
    node.disconnect(analyser);
    assert.equal(
      (node as unknown as { mediaStream: unknown }).mediaStream,
      w.stream,
      `${how}: page reads its own`,
    );
    assert.notEqual(node._stream, w.stream, `${how}: built on a shadow`);
    w.release(w.g);
    assert.deepEqual(await w.reacquire(w.g), { ok: true });
    // The inner node: a source on a shadow of the fresh track, connected as the page left the node.
    const inner = w.ctx._made.at(-1);
    assert.ok(inner && inner !== node, how);
    assert.deepEqual(inner._stream.getTracks(), [w.m.real], how);
    assert.deepEqual(inner._edges, [[w.ctx.destination, 0, 0]], how);
    // Later connections reach the inner node too; a second reacquire replaces it.
    node.connect(analyser);
    assert.deepEqual(inner._edges, [[w.ctx.destination, 0, 0], [analyser]], how);
    node.disconnect();
    assert.deepEqual(inner._edges, [], how);
    node.connect(w.ctx.destination);
    w.release(w.g);
    assert.deepEqual(await w.reacquire(w.g), { ok: true });
    const second = w.ctx._made.at(-1);
    assert.notEqual(second, inner, how);
    assert.deepEqual(second?._edges, [[w.ctx.destination]], how);
  }
});

test('an unmanaged stream’s source node is the browser’s own', async () => {
  const w = await world();
  const plain = new w.FakeStream([new w.FakeTrack({ deviceId: '', groupId: '', label: '' })]);
  const node = w.ctx.createMediaStreamSource(plain);
  assert.equal(node._stream, plain);
  assert.equal((node as unknown as { mediaStream: unknown }).mediaStream, plain);
});

test('what the source’s paths end in decides whether the device is heard', async () => {
  type Row = [what: string, wire: (w: World, src: Node) => void, hears: string | null];
  const rows: Row[] = [
    ['not connected yet', () => {}, null],
    ['to the speakers', (w, s) => s.connect(w.ctx.destination), KEPT.speakers],
    ['to an analyser', (w, s) => s.connect(w.ctx.createAnalyser()), KEPT.analyser],
    ['to a worklet the page never talks to', (w, s) => s.connect(new w.FakeWorkletNode(w.ctx)), null],
    [
      'to a worklet whose port the page uses',
      (w, s) => {
        const n = new w.FakeWorkletNode(w.ctx);
        void (n as unknown as { port: unknown }).port;
        s.connect(n);
      },
      KEPT.worklet,
    ],
    ['into an AudioParam', (w, s) => s.connect(new w.FakeAudioParam()), KEPT.unseen],
    [
      'to a stream destination whose track nothing uses',
      (w, s) => s.connect(w.ctx.createMediaStreamDestination()),
      KEPT.unseen,
    ],
    [
      'through a gain-like node to the speakers',
      (w, s) => {
        const mid = new w.FakeAudioNode(w.ctx);
        s.connect(mid);
        mid.connect(w.ctx.destination);
      },
      KEPT.speakers,
    ],
    [
      'connected, then disconnected',
      (w, s) => {
        s.connect(w.ctx.destination);
        s.disconnect(w.ctx.destination);
      },
      null,
    ],
    [
      'to the speakers of a closed context',
      (w, s) => {
        s.connect(w.ctx.destination);
        void w.ctx.close();
      },
      null,
    ],
  ];
  for (const [what, wire, hears] of rows) {
    const w = await world();
    const src = w.ctx.createMediaStreamSource(w.stream);
    wire(w, src);
    assert.equal(w.reg.audibility(w.g, true).hears, hears, what);
  }
});

test('every connect and disconnect decides again', async () => {
  const w = await world();
  const src = w.ctx.createMediaStreamSource(w.stream);
  w.evaluated.length = 0;
  src.connect(w.ctx.destination);
  src.disconnect(w.ctx.destination);
  assert.deepEqual(w.evaluated, [w.g, w.g]);
});
