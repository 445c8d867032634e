import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { BackgroundToPopup } from '../shared/messages/popup-background.ts';
import { createAudioMonitor } from './audio-monitor.ts';
import { fakeDeps, tick, VERSION } from './fakes.test-util.ts';
import { createHostClient } from './host-client.ts';
import { createPopupHub, type PopupPortLike } from './popup-hub.ts';
import { createTabViews } from './popup-tab-views.ts';

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

async function setup() {
  const f = fakeDeps();
  const host = createHostClient(f.deps);
  const audio = createAudioMonitor(host);
  const tabs = createTabViews();
  const hub = createPopupHub({ host, audio, tabs });
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
  assert.deepEqual(a.types(), ['host_status', 'audio']);
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
  assert.equal(a.got.at(-1)?.type, 'cpu');
  assert.equal(b.got.at(-1)?.type, 'cpu');

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
