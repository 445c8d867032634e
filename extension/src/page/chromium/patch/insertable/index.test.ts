// Insertable streams against the fake realm (real web streams underneath): the page's processor on a
// managed track reads a stand-in that survives the release; where the processor's frames go decides
// whether the device is heard.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { KEPT } from '../../../../shared/release-decision.ts';
import type { FakeTrack } from '../../../fake-realm/realm.test-util.ts';
import { asTrack, MIC, openMic, pageWorld, settle } from '../../../fake-realm/realm.test-util.ts';
import { patchGetUserMedia } from '../get-user-media.ts';
import { patchRtc } from '../rtc.ts';
import { patchTrack } from '../track.ts';
import { patchInsertable } from './index.ts';

async function world(without: string[] = []) {
  const w = pageWorld({ patches: [patchGetUserMedia, patchTrack, patchRtc, patchInsertable], without });
  const { t, m } = await openMic(w);
  type Proc = { readable: ReadableStream<unknown> };
  const Processor = w.get<new (init: unknown, size?: number) => Proc>('MediaStreamTrackProcessor');
  const Generator =
    w.get<new (init: { kind: string }) => FakeTrack & { writable: WritableStream }>(
      'MediaStreamTrackGenerator',
    );
  return { ...w, t, m, g: m.group, Processor, Generator };
}
type World = Awaited<ReturnType<typeof world>>;

const PENDING = Symbol('pending');
/** A reader of `readable`: each call gives the next frame, 'pending' when none comes (the read stays
 * queued for the next call), or 'done' once the stream closed. */
function frames(readable: ReadableStream<unknown>): () => Promise<unknown> {
  const reader = readable.getReader();
  let read: Promise<ReadableStreamReadResult<unknown>> | null = null;
  return async () => {
    read ??= reader.read();
    const r = await Promise.race([read, settle().then(() => PENDING)]);
    if (r === PENDING) return 'pending';
    read = null;
    const { done, value } = r as ReadableStreamReadResult<unknown>;
    return done ? 'done' : value;
  };
}

test('the page’s processor reads a stand-in: frames flow, a release does not end it, the reacquire feeds it', async () => {
  for (const form of ['init', 'positional'] as const) {
    const w = await world();
    const proc = form === 'init' ? new w.Processor({ track: w.t }) : new w.Processor(w.t, 10);
    const next = frames(proc.readable);
    await settle();
    w.t._emit('a');
    assert.equal(await next(), 'a', form);
    w.release(w.g);
    assert.equal(await next(), 'pending', `${form}: still open while released`);
    assert.deepEqual(await w.reacquire(w.g), { ok: true });
    await settle();
    (w.m.real as unknown as FakeTrack)._emit('b');
    assert.equal(await next(), 'b', `${form}: the fresh track feeds the same readable`);
    w.t.stop();
    assert.equal(await next(), 'done', `${form}: the page’s stop ends it as it would natively`);
  }
});

test('a processor on an unmanaged track, or without generators, reads the track itself', async () => {
  const w = await world();
  const derived = new w.FakeTrack(MIC);
  const next = frames(new w.Processor({ track: derived }).readable);
  derived._emit('x');
  assert.equal(await next(), 'x');
  // No generators: no stand-in, so a processor on a managed track holds its device open.
  const bare = await world(['MediaStreamTrackGenerator']);
  const next2 = frames(new bare.Processor({ track: bare.t }).readable);
  bare.t._emit('y');
  assert.equal(await next2(), 'y');
  assert.equal(bare.reg.holdReason(bare.g), KEPT.processor);
  assert.equal(w.reg.holdReason(w.g), null, 'with stand-ins nothing holds it');
});

test('where the frames go: followed to the page’s generators, else the processor hears', async () => {
  type Row = [what: string, wire: (w: World, readable: ReadableStream) => unknown, hears: string | null];
  const toGenerator = (w: World, readable: ReadableStream, enabled: boolean) => {
    const gen = new w.Generator({ kind: 'audio' });
    gen.enabled = enabled;
    void readable.pipeTo(gen.writable);
    return gen;
  };
  const rows: Row[] = [
    ['read by page code', () => {}, KEPT.processor],
    ['piped to a muted generator', (w, r) => toGenerator(w, r, false), null],
    ['piped to an enabled generator nothing uses', (w, r) => toGenerator(w, r, true), KEPT.unseen],
    [
      'piped to a muted video generator (not where audio frames end)',
      (w, r) => {
        const gen = new w.Generator({ kind: 'video' });
        gen.enabled = false;
        void r.pipeTo(gen.writable);
      },
      KEPT.processor,
    ],
    [
      'through a transform to a muted generator',
      (w, r) => {
        const gen = new w.Generator({ kind: 'audio' });
        gen.enabled = false;
        void r.pipeThrough(w.transform()).pipeTo(gen.writable);
      },
      null,
    ],
    [
      'to a worker with a muted generator’s writable',
      (w, r) => {
        const gen = new w.Generator({ kind: 'audio' });
        gen.enabled = false;
        new w.FakeWorker().postMessage({ r, wr: gen.writable }, [r, gen.writable]);
      },
      null,
    ],
    [
      'to a worker, in the {transfer} form',
      (w, r) => {
        const gen = new w.Generator({ kind: 'audio' });
        gen.enabled = false;
        new w.FakeMessagePort().postMessage({}, { transfer: [r, gen.writable] });
      },
      null,
    ],
  ];
  for (const [what, wire, hears] of rows) {
    const w = await world();
    wire(w, new w.Processor({ track: w.t }).readable);
    await settle();
    const a = w.reg.audibility(w.g, true);
    assert.equal(a.hears, hears, what);
  }
});

test('a pipe that ends unlinks; a track transferred elsewhere is heard by code micoff cannot see', async () => {
  const w = await world();
  const gen = new w.Generator({ kind: 'audio' });
  gen.enabled = false;
  const abort = new AbortController();
  const proc = new w.Processor({ track: w.t });
  const piped = proc.readable.pipeTo(gen.writable, { signal: abort.signal }).catch(() => {});
  await settle();
  assert.equal(w.reg.audibility(w.g, true).hears, null);
  abort.abort();
  await piped;
  await settle();
  assert.equal(w.reg.audibility(w.g, true).hears, KEPT.processor, 'frames go nowhere micoff follows');
  const w2 = await world();
  new w2.FakeWorker().postMessage({}, [w2.t]);
  const v = w2.reg.trackVertex(asTrack(w2.t));
  assert.deepEqual(v.kind === 'track' ? v.next() : null, [{ kind: 'sink', why: KEPT.unseen }]);
});

test('a sender fed by the processor’s generator restarts at the reacquire (the frames are relayed)', async () => {
  const w = await world();
  const gen = new w.Generator({ kind: 'audio' });
  void new w.Processor({ track: w.t }).readable.pipeTo(gen.writable);
  const pc = new w.FakePeerConnection();
  const sender = pc.addTrack(gen);
  await settle();
  w.release(w.g);
  assert.deepEqual(await w.reacquire(w.g), { ok: true });
  assert.deepEqual(sender._sets, [[false], [true]]);
});
