// micoff's part of a muted call on Firefox (firefox/quiet.ts, firefox/senders.ts) against a fake realm:
// when the muted device's senders go off the wire, that they come back at the unmute, and that the page
// reads and receives exactly what it would without micoff. Date is mocked (the mute book's clock) and
// moves with the realm's timers.
import assert from 'node:assert/strict';
import { mock, test } from 'node:test';
import { QUIET_HOLD_MS } from '../../shared/firefox-release.ts';
import type { GroupReport } from '../../shared/messages/page-content.ts';
import type { Bridge, ReleaseConfig } from '../common/bridge.ts';
import { type FakeStream, type FakeTrack, fakeRealm, settle } from '../fake-realm/realm.test-util.ts';
import { observeMutes } from './mute-observer.ts';
import { quietAt, quietSenders } from './quiet.ts';

const DELAY_MS = 3000;

test('quietAt: Firefox’s release moment (the device on for the delay, counted from the mute) plus the hold', () => {
  // On for longer than the delay: Firefox releases at the mute.
  assert.equal(quietAt({ mutedSince: 10_000, onSince: 0 }, DELAY_MS), 10_000 + QUIET_HOLD_MS);
  // On for 1 s: Firefox waits the rest of the delay.
  assert.equal(quietAt({ mutedSince: 10_000, onSince: 9_000 }, DELAY_MS), 12_000 + QUIET_HOLD_MS);
  assert.equal(quietAt({ mutedSince: 10_000, onSince: 10_000 }, 0, 0), 10_000);
});

/** The sender and connection built-ins the Firefox page world replaces, as they are now. */
function senderBuiltIns(r: Pick<ReturnType<typeof fakeRealm>, 'FakeSender' | 'FakePeerConnection'>) {
  const S = r.FakeSender.prototype;
  const P = r.FakePeerConnection.prototype;
  return {
    replaceTrack: S.replaceTrack,
    trackGetter: Object.getOwnPropertyDescriptor(S, 'track')?.get,
    dtmfGetter: Object.getOwnPropertyDescriptor(S, 'dtmf')?.get,
    addTrack: P.addTrack,
    addTransceiver: P.addTransceiver,
    removeTrack: P.removeTrack,
    getStats: P.getStats,
  };
}

/** A Firefox page world (mute observer + quiet senders) on a fake realm, its clock mocked. */
function firefoxWorld(t: { after(fn: () => void): void }) {
  mock.timers.enable({ apis: ['Date'], now: 1_000_000 });
  t.after(() => mock.timers.reset());
  const r = fakeRealm();
  /** The built-ins micoff replaces, as the browser had them. */
  const originals = senderBuiltIns(r);
  let config: ReleaseConfig = { delay_ms: DELAY_MS, release: true, reason: null };
  const configListeners: (() => void)[] = [];
  const reports: GroupReport[][] = [];
  const bridge: Bridge = {
    config: () => config,
    onConfig: (l) => configListeners.push(l),
    report: (_realm, groups) => reports.push(groups),
    askPolicy: () => Promise.resolve({ allow: true, reason: null }),
    ticks: () => {},
    tickOnce: () => {},
    onTick: () => {},
  };
  assert.equal(
    observeMutes(r.w, bridge, (watch) => quietSenders(r.w, watch, bridge)),
    true,
  );
  /** Moves Date and the realm's timers together. */
  const advance = (ms: number) => {
    mock.timers.tick(ms);
    r.timers.advance(ms);
  };
  const setConfig = (c: Partial<ReleaseConfig>) => {
    config = { ...config, ...c };
    for (const l of configListeners) l();
  };
  const gum = async () => {
    const stream = (await r.devices.getUserMedia({ audio: true })) as FakeStream;
    return { stream, track: stream.getAudioTracks()[0] as FakeTrack };
  };
  const last = () => reports.at(-1) ?? [];
  return { ...r, advance, setConfig, gum, last, reports, originals };
}

type World = ReturnType<typeof firefoxWorld>;
type Sender = InstanceType<World['FakeSender']>;
/** What the page reads as the sender's track (through the replaced getter). */
const pageTrack = (s: Sender) => s.track;

/** Muted for the delay and the hold: the moment micoff takes the senders off. */
async function muteUntilQuiet(w: World, track: FakeTrack) {
  track.enabled = false;
  w.advance(DELAY_MS + QUIET_HOLD_MS);
  await settle();
}

test('a muted device’s senders go off the wire once Firefox released it and the hold passed; the unmute puts them back', async (t) => {
  const w = firefoxWorld(t);
  const { stream, track } = await w.gum();
  const pc = new w.FakePeerConnection();
  const sender = pc.addTrack(track, stream);
  // The device was on for longer than the delay.
  w.advance(10_000);
  const settings = JSON.stringify(track.getSettings());
  const events: string[] = [];
  for (const type of ['ended', 'mute', 'unmute']) track.addEventListener(type, () => events.push(type));

  // On for longer than the delay: Firefox releases at the mute, micoff the hold after it.
  track.enabled = false;
  w.advance(QUIET_HOLD_MS - 1);
  await settle();
  assert.equal(sender._track, track, 'still sending just before the hold ends');
  assert.equal(w.last()[0]?.quiet_since_ms, null);
  w.advance(1);
  await settle();
  assert.deepEqual(sender._replaced, [null], 'the real sender has no track');
  assert.equal(sender._track, null);
  assert.equal(pageTrack(sender), track, 'the page reads its own track');
  const quietSince = w.last()[0]?.quiet_since_ms;
  assert.equal(quietSince, Date.now(), 'reported, while muted');
  assert.equal(typeof w.last()[0]?.muted_since_ms, 'number');

  // The page reads what it would without micoff.
  assert.equal(track.readyState, 'live');
  assert.equal(track.enabled, false);
  assert.equal(JSON.stringify(track.getSettings()), settings);
  assert.deepEqual(
    sender.getParameters().encodings.map((e) => e.active),
    [true],
    'the parameters are not touched',
  );
  // pc.getStats(track): Firefox looks the sender up by its current track; micoff answers for it.
  const stats = await pc.getStats(track);
  assert.equal(stats.get('sender'), sender);

  // The unmute: the track goes back on at once, in the page's own `enabled = true`.
  track.enabled = true;
  assert.deepEqual(sender._replaced, [null, track]);
  await settle();
  assert.equal(sender._track, track);
  assert.equal(pageTrack(sender), track);
  assert.equal(w.last()[0]?.quiet_since_ms, null);
  assert.deepEqual(events, [], 'no event on the page’s track');
  assert.equal(w.timers.pending(), 0, 'no timer left');
});

test('the delay counts from when the device was last turned on, as Firefox counts it', async (t) => {
  const w = firefoxWorld(t);
  const { track } = await w.gum();
  const sender = new w.FakePeerConnection().addTrack(track);
  w.advance(500); // on for 0.5 s: Firefox releases 2.5 s after the mute
  track.enabled = false;
  w.advance(2500 + QUIET_HOLD_MS - 1);
  await settle();
  assert.equal(sender._track, track);
  w.advance(1);
  await settle();
  assert.equal(sender._track, null);
  // Unmuted and muted again at once: the device has been on for no time, the full delay again.
  track.enabled = true;
  await settle();
  track.enabled = false;
  w.advance(DELAY_MS + QUIET_HOLD_MS - 1);
  await settle();
  assert.equal(sender._track, track, 'a fresh mute waits for Firefox’s delay again');
  w.advance(1);
  await settle();
  assert.equal(sender._track, null);
});

test('an enabled clone keeps the senders on (it keeps Firefox’s device on too)', async (t) => {
  const w = firefoxWorld(t);
  const { track } = await w.gum();
  const sender = new w.FakePeerConnection().addTrack(track);
  const detector = track.clone();
  w.advance(10_000);
  track.enabled = false;
  w.advance(60_000);
  await settle();
  assert.equal(sender._track, track);
  assert.equal(w.last()[0]?.quiet_since_ms, null);
  detector.enabled = false;
  w.advance(DELAY_MS + QUIET_HOLD_MS);
  await settle();
  assert.equal(sender._track, null);
});

test('what the page does to a quiet sender is the page’s: replaceTrack, removeTrack, a sender added while quiet', async (t) => {
  const w = firefoxWorld(t);
  const { stream, track } = await w.gum();
  const pc = new w.FakePeerConnection();
  const a = pc.addTrack(track, stream);
  const b = pc.addTrack(track, stream);
  w.advance(10_000);
  await muteUntilQuiet(w, track);
  assert.equal(a._track, null);
  assert.equal(b._track, null);

  // The page puts another track on `a`: it reads and sends that one; micoff has let go.
  const other = new w.FakeTrack({ deviceId: 'cam', groupId: 'g', label: 'Other' });
  await a.replaceTrack(other);
  assert.equal(a._track, other);
  assert.equal(pageTrack(a), other);
  // The page removes `b`'s track: it reads null, as it would.
  pc.removeTrack(b);
  assert.equal(pageTrack(b), null);

  // A sender that gets the muted track now goes quiet at once.
  const c = new w.FakePeerConnection().addTrack(track);
  await settle();
  assert.equal(c._track, null);
  assert.equal(pageTrack(c), track);

  // The unmute restores only what micoff took.
  track.enabled = true;
  await settle();
  assert.equal(a._track, other);
  assert.equal(b._track, null);
  assert.equal(c._track, track);
});

test('a sender whose DTMF the page reads is left alone (Firefox’s DTMF needs the sender’s track)', async (t) => {
  const w = firefoxWorld(t);
  const { track } = await w.gum();
  const pc = new w.FakePeerConnection();
  const softphone = pc.addTrack(track);
  const plain = pc.addTrack(track);
  assert.equal((softphone as unknown as { dtmf: { canInsertDTMF: boolean } }).dtmf.canInsertDTMF, true);
  w.advance(10_000);
  await muteUntilQuiet(w, track);
  assert.equal(softphone._track, track, 'kept on: the page may key digits while muted');
  assert.equal(plain._track, null);
  // Read while held: the track goes back at once.
  const dtmf = (plain as unknown as { dtmf: { canInsertDTMF: boolean } }).dtmf;
  await settle();
  assert.equal(plain._track, track);
  assert.equal(dtmf.canInsertDTMF, true);
  assert.equal(w.last()[0]?.quiet_since_ms, null, 'nothing quiet any more');
});

test('a stopped track goes back on its sender (Firefox keeps an ended track there)', async (t) => {
  const w = firefoxWorld(t);
  const { track } = await w.gum();
  const sender = new w.FakePeerConnection().addTrack(track);
  w.advance(10_000);
  await muteUntilQuiet(w, track);
  assert.equal(sender._track, null);
  track.stop();
  await settle();
  assert.equal(sender._track, track);
  assert.equal(pageTrack(sender), track);
  assert.deepEqual(w.last(), []);
});

test('release off for the site: no quiet senders; switched off while quiet, they come back', async (t) => {
  const w = firefoxWorld(t);
  const { track } = await w.gum();
  const sender = new w.FakePeerConnection().addTrack(track);
  w.advance(10_000);
  w.setConfig({ release: false, reason: 'release is off for this site' });
  await muteUntilQuiet(w, track);
  w.advance(60_000);
  await settle();
  assert.equal(sender._track, track);
  w.setConfig({ release: true, reason: null });
  await settle();
  assert.equal(sender._track, null, 'switched on again: the mute has been long enough');
  w.setConfig({ release: false, reason: 'release is off for this site' });
  await settle();
  assert.equal(sender._track, track);
  assert.equal(w.last()[0]?.quiet_since_ms, null);
});

test('a closed connection: the page keeps reading its track, nothing is retried', async (t) => {
  const w = firefoxWorld(t);
  const { track } = await w.gum();
  const pc = new w.FakePeerConnection();
  const sender = pc.addTrack(track);
  w.advance(10_000);
  await muteUntilQuiet(w, track);
  pc.close();
  // Firefox refuses replaceTrack on a closed connection.
  sender._refuse = new Error('InvalidStateError');
  track.enabled = true;
  await settle();
  assert.equal(pageTrack(sender), track, 'what the page read before the close');
  assert.equal(w.last()[0]?.quiet_since_ms, null);
});

test('the replaced sender and connection methods look like the browser’s own', async (t) => {
  const w = firefoxWorld(t);
  const src = (f: unknown) => Function.prototype.toString.call(f);
  const now = senderBuiltIns(w);
  for (const key of Object.keys(now) as (keyof typeof now)[]) {
    const [fn, was] = [now[key], w.originals[key]] as [
      (...a: never[]) => unknown,
      (...a: never[]) => unknown,
    ];
    assert.notEqual(fn, was, `${key}: replaced`);
    assert.equal(fn.name, was.name, `${key}: name`);
    assert.equal(fn.length, was.length, `${key}: length`);
    assert.equal(src(fn), src(was), `${key}: the original's source`);
  }
  // A refusal of the browser's reaches the page as it is.
  const { track } = await w.gum();
  const pc = new w.FakePeerConnection();
  await assert.rejects(pc.getStats(track), /InvalidAccessError/);
});

test('keep sending: the site says so, or the page uses janus.js; the senders stay on the wire', async (t) => {
  const w = firefoxWorld(t);
  const { stream, track } = await w.gum();
  const sender = new w.FakePeerConnection().addTrack(track, stream);
  w.advance(10_000);
  w.setConfig({ keep_sending: true });
  await muteUntilQuiet(w, track);
  assert.equal(sender._track, track, 'the site says keep sending');
  assert.equal(w.last()[0]?.quiet_since_ms, null);
  // The site's answer gone: none, and no janus.js on the page: quiet at the next evaluation.
  w.setConfig({ keep_sending: null });
  await settle();
  assert.equal(sender._track, null);
  // janus.js on the page: back on the wire.
  Object.assign(w.w, { Janus: Object.assign(() => {}, { init: () => {}, isWebrtcSupported: () => true }) });
  w.setConfig({});
  await settle();
  assert.equal(sender._track, track, 'janus.js on the page');
});
