import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { BackgroundToPopup } from '../shared/messages/popup-background.ts';
import { createAudioMonitor } from './audio-monitor.ts';
import { fakeDeps, tick, VERSION } from './fakes.test-util.ts';
import { createHostClient } from './host-client.ts';
import { type ConnectingPortLike, createPopupHub, type PopupPortLike } from './popup-hub.ts';
import { createTabViews } from './popup-tab-views.ts';
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
  const hub = createPopupHub({ host, audio, tabs, now: () => f.timers.now });
  host.start();
  const port = f.ports[0];
  assert.ok(port);
  port.answer(VERSION, 1);
  await tick();
  port.answer({ subscription: 1 }); // the audio subscription
  await tick();
  return { ...f, port, host, hub, tabs };
}

test('cpu subscription lives exactly while a popup is open', async () => {
  const { port, hub } = await setup();
  const a = new FakePopup();
  const b = new FakePopup();
  hub.attach(a);
  assert.deepEqual(a.types(), ['host_status', 'audio', 'history']);
  assert.deepEqual(port.last(), { type: 'subscribe', topic: 'cpu', interval_ms: 1000, id: 3 });
  port.answer({ subscription: 2 });
  await tick();
  hub.attach(b); // no second subscription
  assert.equal(port.sent.length, 3);
  assert.equal(hub.cpuSubscription(), 2);

  const report = {
    window_ms: 1000,
    total_cpu_pct: 0,
    processes: [],
    roles: [],
    gone_pids: [],
    threads_omitted: 0,
  };
  port.emit({ type: 'event', subscription: 2, event: { type: 'cpu', report } });
  assert.deepEqual(a.types().slice(-2), ['cpu', 'history']);
  assert.deepEqual(b.types().slice(-2), ['cpu', 'history']);

  a.close();
  assert.equal(hub.count(), 1);
  assert.equal(port.last().type, 'subscribe');
  b.close();
  assert.deepEqual(port.last(), { type: 'unsubscribe', subscription: 2, id: 4 });
  assert.equal(hub.cpuSubscription(), null);
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
  assert.equal(port.sent.length, sentBefore); // no CPU subscription, no doctor run at the host
  assert.equal(port.disconnected, false); // and no reconnect

  const popup = new FakeConnectingPort({ id: ID, url: `chrome-extension://${ID}/popup.html`, frameId: 0 });
  assert.equal(hub.accept(popup, OWN), null);
  assert.equal(popup.disconnected, false);
  assert.deepEqual(popup.types(), ['host_status', 'audio', 'history']);
  assert.equal(hub.count(), 1);
});

test('a microphone in use holds the cpu subscription: the history and the CPU saved by a release', async () => {
  const { port, hub, tabs, timers } = await setup();
  const report = (pct: number) => ({
    type: 'event',
    subscription: 2,
    event: {
      type: 'cpu',
      report: {
        window_ms: 5000,
        total_cpu_pct: pct,
        processes: [
          {
            ...{ pid: 9, ppid: 1, comm: 'pulseaudio', role: 'audio_server', cpu_pct: pct, user_pct: pct },
            ...{ system_pct: 0, run_time_ns: null, run_time_pct: null, wakeups_per_s: null },
            ...{ voluntary_ctxt_per_s: null, involuntary_ctxt_per_s: null, read_syscalls_per_s: null },
            ...{ write_syscalls_per_s: null, thread_count: 0, threads: [] },
          },
        ],
        roles: [],
        gone_pids: [],
        threads_omitted: 0,
      },
    },
  });
  const view = (state: 'capturing' | 'released', muted: boolean) =>
    ({ origin: 'https://x.example', state, since_ms: 1, reason: null, muted }) as const;
  tabs.set(4, view('capturing', false)); // no popup, but a microphone: subscribed, every 5 s
  assert.deepEqual(port.last(), { type: 'subscribe', topic: 'cpu', interval_ms: 5000, id: 3 });
  port.answer({ subscription: 2 });
  await tick();
  for (const pct of [4, 6]) {
    timers.advance(5000);
    port.emit(report(pct)); // baseline: 5 %
  }
  timers.advance(500);
  tabs.set(4, view('capturing', true)); // muted
  timers.advance(500);
  tabs.set(4, view('released', true));
  timers.advance(5000);
  port.emit(report(1)); // the window began at the release: saves (5 - 1) % of 5 s
  timers.advance(5000);
  port.emit(report(1));
  const h = hub.history.snapshot();
  assert.deepEqual(
    h.marks.map((m) => m.kind),
    ['mute', 'release'],
  );
  assert.equal(h.released.length, 1);
  assert.equal(h.released[0]?.baseline_pct, 5);
  assert.ok(Math.abs(h.saved_cpu_s - 0.4) < 1e-9, `${h.saved_cpu_s}`);
  // A popup opens: every second while it is open, back to every 5 s when it closes.
  const popup = new FakePopup();
  hub.attach(popup);
  assert.deepEqual(port.sent.slice(-2), [
    { type: 'unsubscribe', subscription: 2, id: 4 },
    { type: 'subscribe', topic: 'cpu', interval_ms: 1000, id: 5 },
  ]);
  port.answer({ subscription: 3 });
  await tick();
  popup.close();
  assert.deepEqual(port.sent.slice(-2), [
    { type: 'unsubscribe', subscription: 3, id: 6 },
    { type: 'subscribe', topic: 'cpu', interval_ms: 5000, id: 7 },
  ]);
  port.answer({ subscription: 4 });
  await tick();
  tabs.set(4, view('capturing', false));
  assert.deepEqual(
    hub.history.snapshot().marks.map((m) => m.kind),
    ['mute', 'release', 'unmute'],
  );
  tabs.set(4, null); // the microphone is gone and no popup is open: unsubscribed
  assert.deepEqual(port.last(), { type: 'unsubscribe', subscription: 4, id: 8 });
  assert.equal(hub.cpuSubscription(), null);
});
