import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { BackgroundToPopup } from '../shared/messages/popup-background.ts';
import { createAudioMonitor } from './audio-monitor.ts';
import { EMPTY_REPORT, fakeDeps, tick, VERSION } from './fakes.test-util.ts';
import { createHostClient } from './host-client.ts';
import { type ConnectingPortLike, createPopupHub, type PopupPortLike } from './popup-hub.ts';
import { createTabViews } from './popup-tab-views.ts';
import { createSavedCpu } from './saved-cpu.ts';
import type { ExtensionSelf, SenderLike } from './ui-sender.ts';

class FakePopup implements PopupPortLike {
  got: BackgroundToPopup[] = [];
  private msg: ((m: unknown) => void)[] = [];
  private disc: (() => void)[] = [];
  postMessage(m: BackgroundToPopup) {
    this.got.push(m);
  }
  onMessage = { addListener: (cb: (m: unknown) => void) => this.msg.push(cb) };
  onDisconnect = { addListener: (cb: () => void) => this.disc.push(cb) };
  send(m: unknown) {
    for (const l of this.msg) l(m);
  }
  close() {
    for (const l of this.disc) l();
  }
  types() {
    return this.got.map((m) => m.type);
  }
}

class FakeConnectingPort extends FakePopup implements ConnectingPortLike {
  disconnected = false;
  constructor(readonly sender: SenderLike) {
    super();
  }
  disconnect() {
    this.disconnected = true;
  }
}

const ID = 'ipgdconbmedmelnlpalblnicflhpfkim';
const OWN: ExtensionSelf = {
  id: ID,
  baseUrl: `chrome-extension://${ID}/`,
  pages: ['popup.html', 'options.html'],
};

async function setup() {
  const f = fakeDeps();
  const host = createHostClient(f.deps);
  const audio = createAudioMonitor(host);
  const tabs = createTabViews();
  const saved = createSavedCpu(undefined);
  const hub = createPopupHub({ host, audio, tabs, saved });
  host.start();
  const port = f.ports[0];
  assert.ok(port);
  port.answer(VERSION, 1);
  await tick();
  port.answer({ subscription: 1 }); // the audio subscription
  await tick();
  return { ...f, port, host, hub, tabs, saved };
}

const report = EMPTY_REPORT;
const point = (t_ms: number, pct: number) => ({ t_ms, pct, window_ms: 1000, phase: 'capturing' as const });
const history = (points: ReturnType<typeof point>[], saved_cpu_s = 0) => ({
  now_ms: points.at(-1)?.t_ms ?? 0,
  span_ms: 300_000,
  points,
  marks: [],
  released: [],
  saved_cpu_s,
  phase: 'capturing' as const,
});

test('the history subscription lives exactly while a popup is open: the whole history, then samples', async () => {
  const { port, hub, saved } = await setup();
  saved.hostGone(); // nothing from earlier hosts
  const a = new FakePopup();
  const b = new FakePopup();
  hub.attach(a);
  assert.deepEqual(a.types(), ['host_status', 'audio']);
  assert.deepEqual(port.last(), { type: 'subscribe', topic: 'history', interval_ms: 1000, id: 3 });
  port.answer({ subscription: 2 });
  await tick();
  assert.equal(hub.historySubscription(), 2);
  const first = history([point(1000, 5), point(6000, 6)], 0.5);
  port.emit({ type: 'event', subscription: 2, event: { type: 'history', history: first, report: null } });
  assert.deepEqual(a.got.at(-1), { type: 'history', history: first });

  hub.attach(b); // no second subscription; the history it has so far at once
  assert.equal(port.sent.length, 3);
  assert.deepEqual(b.got.at(-1), { type: 'history', history: first });

  // A sample: appended, with its report as the live table.
  const next = history([point(7000, 4)], 0.5);
  port.emit({ type: 'event', subscription: 2, event: { type: 'history', history: next, report } });
  for (const p of [a, b]) assert.deepEqual(p.types().slice(-2), ['cpu', 'history']);
  assert.deepEqual(
    hub.history()?.points.map((p) => p.pct),
    [5, 6, 4],
  );
  assert.equal(hub.history()?.saved_cpu_s, 0.5);

  a.close();
  assert.equal(hub.count(), 1);
  assert.equal(port.last().type, 'subscribe');
  b.close();
  assert.deepEqual(port.last(), { type: 'unsubscribe', subscription: 2, id: 4 });
  assert.equal(hub.historySubscription(), null);
  assert.equal(hub.history(), null);
});

test('the saved figure the popup shows adds what earlier hosts saved; a new host starts the history afresh', async () => {
  const { port, hub, saved } = await setup();
  saved.fromHost(1.25); // what the host before this one had said (its phase answers)
  saved.hostGone();
  const a = new FakePopup();
  hub.attach(a);
  port.answer({ subscription: 2 });
  await tick();
  const h = history([point(1000, 5)], 0.5);
  port.emit({ type: 'event', subscription: 2, event: { type: 'history', history: h, report: null } });
  assert.equal(hub.history()?.saved_cpu_s, 1.75);
  // A resubscription's first event (report null) replaces what the popup had.
  const fresh = history([point(9000, 3)], 0);
  port.emit({ type: 'event', subscription: 2, event: { type: 'history', history: fresh, report: null } });
  assert.deepEqual(
    hub.history()?.points.map((p) => p.t_ms),
    [9000],
  );
});

test('tab state and doctor go to the popup that asked', async () => {
  const { port, hub, tabs } = await setup();
  const a = new FakePopup();
  const b = new FakePopup();
  hub.attach(a);
  hub.attach(b);
  a.send({ type: 'popup_hello', tab_id: 5 });
  b.send({ type: 'popup_hello', tab_id: 6 });
  assert.deepEqual(a.got.at(-1), { type: 'tab', tab_id: 5, tab: null });
  const view = { origin: 'https://x.example', state: 'released', since_ms: 1, reason: null } as const;
  tabs.set(6, view);
  assert.deepEqual(b.got.at(-1), { type: 'tab', tab_id: 6, tab: view });
  assert.deepEqual(a.got.at(-1), { type: 'tab', tab_id: 5, tab: null }); // not told about tab 6

  a.send({ type: 'run_doctor' });
  assert.equal(port.last().type, 'doctor');
  port.emit({
    id: port.last().id,
    type: 'error',
    error: { code: 9, message: 'doctor is not implemented yet' },
  });
  await tick();
  assert.deepEqual(a.got.at(-1), {
    type: 'doctor',
    result: { ok: false, message: 'doctor is not implemented yet' },
  });
  assert.notEqual(b.got.at(-1)?.type, 'doctor');
});

test('a content script connecting to the popup port is refused: closed, told nothing, asks nothing', async () => {
  const { port, hub } = await setup();
  const sentBefore = port.sent.length;
  const cs = new FakeConnectingPort({
    id: ID,
    url: 'https://evil.example/meeting',
    origin: 'https://evil.example',
    tab: { id: 3 },
    frameId: 0,
  });
  assert.match(hub.accept(cs, OWN) ?? '', /not an extension page/);
  assert.equal(cs.disconnected, true);
  cs.send({ type: 'run_doctor' });
  cs.send({ type: 'host_reconnect' });
  assert.deepEqual(cs.got, []); // no host status, audio streams, CPU
  assert.equal(hub.count(), 0);
  assert.equal(port.sent.length, sentBefore); // no history subscription, no doctor run at the host
  assert.equal(port.disconnected, false); // and no reconnect

  const popup = new FakeConnectingPort({ id: ID, url: `chrome-extension://${ID}/popup.html`, frameId: 0 });
  assert.equal(hub.accept(popup, OWN), null);
  assert.equal(popup.disconnected, false);
  assert.deepEqual(popup.types(), ['host_status', 'audio']);
  assert.equal(hub.count(), 1);
});
