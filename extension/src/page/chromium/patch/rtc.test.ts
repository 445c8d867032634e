// WebRTC against the fake realm: senders carry the real track and show the page its own; whether a
// sender sends decides whether the device is heard; a starved sender restarts at the reacquire.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { KEPT } from '../../../shared/release-decision.ts';
import type { FakeTrack } from '../../fake-realm/realm.test-util.ts';
import { asTrack, MIC, openMic, pageWorld, settle } from '../../fake-realm/realm.test-util.ts';
import { patchGetUserMedia } from './get-user-media.ts';
import { patchRtc } from './rtc.ts';
import { patchTrack } from './track.ts';

async function world() {
  const w = pageWorld({ patches: [patchGetUserMedia, patchTrack, patchRtc] });
  const { t, m } = await openMic(w);
  const pc = new w.FakePeerConnection();
  return { ...w, t, m, g: m.group, pc };
}

type World = Awaited<ReturnType<typeof world>>;
/** The page sets its first transceiver's direction. */
const setDirection = (w: World, d: RTCRtpTransceiverDirection) => {
  const tr = w.pc._transceivers[0];
  if (tr) tr.direction = d;
};
/** What the group's paths say with the graph followed. */
const heard = (w: World) => w.reg.audibility(w.g, true);

test('addTrack / addTransceiver: the sender carries the real track, the page reads its own', async () => {
  for (const add of ['addTrack', 'addTransceiver'] as const) {
    const w = await world();
    const sender = add === 'addTrack' ? w.pc.addTrack(w.t) : w.pc.addTransceiver(w.t).sender;
    assert.ok(w.m.senders.has(sender as unknown as RTCRtpSender), add);
    assert.equal(sender.track, w.t, add);
    w.release(w.g);
    assert.deepEqual(await w.reacquire(w.g), { ok: true });
    assert.equal(sender._track, w.m.real, `${add}: the fresh track on the wire`);
    assert.notEqual(sender._track, w.t);
    assert.equal(sender.track, w.t, `${add}: still the page’s own track`);
  }
});

test('whether a sender sends: direction, encodings, connection state, the track taken off', async () => {
  type Row = [what: string, set: (w: World, s: InstanceType<World['FakeSender']>) => unknown, sends: boolean];
  const rows: Row[] = [
    ['sendrecv', () => {}, true],
    ['recvonly', (w) => setDirection(w, 'recvonly'), false],
    ['inactive', (w) => setDirection(w, 'inactive'), false],
    ['transceiver stopped', (w) => w.pc._transceivers[0]?.stop(), false],
    ['connection closed', (w) => w.pc.close(), false],
    [
      'every encoding inactive',
      async (_w, s) => {
        const p = s.getParameters();
        p.encodings[0] = { active: false };
        await s.setParameters(p);
      },
      false,
    ],
    ['removeTrack', (w, s) => w.pc.removeTrack(s), false],
    ['replaceTrack(null)', (_w, s) => s.replaceTrack(null), false],
  ];
  for (const [what, set, sends] of rows) {
    const w = await world();
    const sender = w.pc.addTrack(w.t);
    w.evaluated.length = 0;
    await set(w, sender);
    await settle();
    const a = heard(w);
    // Sending: the sender hears. Not: the path is silenced, or (the track taken off) nothing is left.
    assert.equal(a.hears, sends ? KEPT.sending : null, what);
    if (what !== 'sendrecv') assert.ok(w.evaluated.length > 0, `${what}: the groups decide again`);
  }
});

test('replaceTrack: the page’s track in, the real one on the wire; the sender moves between members', async () => {
  const w = await world();
  const stream2 = await w.getUserMedia();
  const t2 = stream2.getAudioTracks()[0] as FakeTrack;
  const m2 = w.reg.members.get(asTrack(t2));
  const tr = w.pc.addTransceiver('audio');
  const sender = tr.sender;
  await sender.replaceTrack(w.t);
  assert.ok(w.m.senders.has(sender as unknown as RTCRtpSender));
  assert.equal(sender.track, w.t);
  w.release(w.g);
  assert.deepEqual(await w.reacquire(w.g), { ok: true });
  await sender.replaceTrack(t2);
  assert.equal(sender._track, m2?.real);
  assert.deepEqual(
    [w.m.senders.has(sender as unknown as RTCRtpSender), m2?.senders.has(sender as unknown as RTCRtpSender)],
    [false, true],
  );
  // A derived track passes through as it is.
  const derived = new w.FakeTrack(MIC);
  await sender.replaceTrack(derived);
  assert.equal(sender._track, derived);
  assert.equal(sender.track, derived);
});

test('a sender the release starved restarts its RTP stream before the fresh track goes in', async () => {
  const w = await world();
  const sender = w.pc.addTrack(w.t);
  w.t.enabled = false;
  w.release(w.g);
  assert.deepEqual(sender._sets, []);
  w.t.enabled = true;
  assert.deepEqual(await w.reacquire(w.g), { ok: true });
  assert.deepEqual(sender._sets, [[false], [true]], 'every encoding off, then back as the page set them');
  // Paused by the page: left alone.
  const w2 = await world();
  const paused = w2.pc.addTrack(w2.t);
  const p = paused.getParameters();
  p.encodings[0] = { active: false };
  await paused.setParameters(p);
  w2.release(w2.g);
  assert.deepEqual(await w2.reacquire(w2.g), { ok: true });
  assert.deepEqual(paused._sets, [[false]], 'only the page’s own set');
});

test('the page’s get-then-set survives micoff’s reads in between', async () => {
  const w = await world();
  const sender = w.pc.addTrack(w.t);
  const p = sender.getParameters();
  heard(w); // micoff reads the parameters (a new transactionId) to know whether it sends
  p.encodings[0] = { active: false };
  await sender.setParameters(p);
  assert.deepEqual(sender._sets, [[false]]);
  // Without micoff reading in between, a stale set fails as it does natively.
  const stale = sender.getParameters();
  sender.getParameters();
  await assert.rejects(sender.setParameters(stale));
});

test('closed connections’ senders are forgotten before a reacquire', async () => {
  const w = await world();
  const sender = w.pc.addTrack(w.t);
  w.pc.close();
  w.release(w.g);
  assert.deepEqual(await w.reacquire(w.g), { ok: true });
  assert.deepEqual(sender._sets, [], 'no restart on a closed connection');
  assert.equal(heard(w).hears, null);
});
