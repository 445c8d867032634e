import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EMPTY_REPORT, fakeDeps, tick, VERSION } from './fakes.test-util.ts';
import {
  backoffDelayMs,
  classifyDisconnect,
  createHostClient,
  type HostError,
  STEADY_MS,
} from './host-client.ts';

test('classifyDisconnect', () => {
  const cases: [string, string, string | null][] = [
    ['Specified native messaging host not found.', 'not_installed', 'micoff-host install'],
    ['No such native application org.micoff.host', 'not_installed', 'micoff-host install'],
    ['Access to the specified native messaging host is forbidden.', 'error', 'micoff-host install'],
    ['Native host has exited.', 'error', null],
    ['Error when communicating with the native messaging host.', 'error', null],
  ];
  for (const [msg, state, fix] of cases)
    assert.deepEqual(classifyDisconnect(msg), { state, fix_command: fix }, msg);
});

test('backoffDelayMs doubles up to the cap', () => {
  assert.deepEqual(
    [1, 2, 3, 4, 5, 9].map((n) => backoffDelayMs(n, 1000, 8000)),
    [1000, 2000, 4000, 8000, 8000, 8000],
  );
});

test('handshake, request ids, results routed by id (out of order)', async () => {
  const { deps, ports } = fakeDeps();
  const host = createHostClient(deps);
  host.start();
  const port = ports[0];
  assert.ok(port);
  assert.equal(host.status().state, 'connecting');
  assert.deepEqual(port.last(), { type: 'version', id: 1 });
  port.answer(VERSION);
  await tick();
  assert.equal(host.status().state, 'connected');
  assert.equal(host.status().version?.host_version, '0.1.0');

  const a = host.request({ type: 'audio_streams' });
  const b = host.request({ type: 'cpu_sample', window_ms: 200 });
  assert.deepEqual(
    port.sent.map((m) => m.id),
    [1, 2, 3],
  );
  port.emit({ id: 3, type: 'error', error: { code: 6, message: 'gone' } });
  port.answer({ streams: [] }, 2);
  assert.deepEqual(await a, { streams: [] });
  await assert.rejects(b, (e: HostError) => e.kind === 'host' && e.code === 6 && e.message === 'gone');
});

test('a result of the wrong shape is a bad_reply', async () => {
  const { deps, ports } = fakeDeps();
  const host = createHostClient(deps);
  host.start();
  const p = host.request({ type: 'audio_streams' });
  ports[0]?.answer({ nope: 1 });
  await assert.rejects(p, (e: HostError) => e.kind === 'bad_reply');
});

test('timeout: cpu_sample gets its window on top of the base timeout', async () => {
  const { deps, ports, timers } = fakeDeps();
  const host = createHostClient(deps);
  host.start();
  ports[0]?.answer(VERSION);
  await tick();
  const p = host.request({ type: 'cpu_sample', window_ms: 2000 });
  let settled = false;
  p.catch(() => {
    settled = true;
  });
  timers.advance(6999);
  await tick();
  assert.equal(settled, false);
  timers.advance(1);
  await assert.rejects(p, (e: HostError) => e.kind === 'timeout');
  ports[0]?.answer({}, 2); // late answer is ignored
});

test('not installed: pending requests fail with the reason, status says how to fix, backoff reconnects', async () => {
  const { deps, ports, timers, state } = fakeDeps({
    lastError: 'Specified native messaging host not found.',
  });
  const host = createHostClient(deps);
  const seen: string[] = [];
  host.onStatus((s) => seen.push(s.state));
  host.start();
  const p = host.request({ type: 'version' });
  ports[0]?.close();
  await assert.rejects(p, (e: HostError) => e.kind === 'disconnected' && /not found/.test(e.message));
  const s = host.status();
  assert.equal(s.state, 'not_installed');
  assert.equal(s.fix_command, 'micoff-host install');
  assert.equal(s.attempts, 1);
  assert.equal(s.retry_at_ms, timers.now + 1000);

  timers.advance(1000);
  assert.equal(ports.length, 2);
  ports[1]?.close();
  assert.equal(host.status().retry_at_ms, timers.now + 2000);
  timers.advance(1999);
  assert.equal(ports.length, 2);
  timers.advance(1);
  assert.equal(ports.length, 3);

  // The host gets installed: the next attempt connects and the backoff resets.
  state.lastError = undefined;
  ports[2]?.answer(VERSION);
  await tick();
  assert.equal(host.status().state, 'connected');
  assert.equal(host.status().attempts, 0);
  assert.deepEqual(seen.slice(0, 3), ['connecting', 'not_installed', 'connecting']);
});

test('Firefox: the reason comes from port.error', () => {
  const { deps, ports } = fakeDeps();
  const host = createHostClient(deps);
  host.start();
  const port = ports[0];
  assert.ok(port);
  port.error = { message: 'No such native application org.micoff.host' };
  port.close();
  assert.equal(host.status().state, 'not_installed');
});

test('crash: status error with the reason; reconnect() skips the wait', async () => {
  const { deps, ports, state } = fakeDeps();
  const host = createHostClient(deps);
  host.start();
  ports[0]?.answer(VERSION);
  await tick();
  state.lastError = 'Native host has exited.';
  ports[0]?.close();
  assert.deepEqual([host.status().state, host.status().message], ['error', 'Native host has exited.']);
  host.reconnect();
  assert.equal(ports.length, 2);
  assert.equal(host.status().state, 'connecting');
});

test('a host that dies after a steady connection is started again at once; one that dies young backs off', async () => {
  const { deps, ports, timers, state } = fakeDeps();
  const host = createHostClient(deps);
  host.start();
  ports[0]?.answer(VERSION);
  await tick();
  timers.advance(STEADY_MS);
  assert.equal(host.status().last_drop, null);
  state.lastError = 'Native host has exited.';
  ports[0]?.close();
  assert.equal(host.status().retry_at_ms, timers.now);
  const dropped = { at_ms: timers.now, reason: 'Native host has exited.' };
  assert.deepEqual(host.status().last_drop, dropped);
  timers.advance(0);
  assert.equal(ports.length, 2, 'a new host at once');
  // That one cannot start: the backoff as after any failure, from its first step.
  ports[1]?.close();
  assert.equal(host.status().retry_at_ms, timers.now + 1000);
  timers.advance(1000);
  ports[2]?.answer(VERSION);
  await tick();
  assert.equal(host.status().state, 'connected');
  // The failed attempt between was no good connection: the drop the popup names is the first one.
  assert.deepEqual(host.status().last_drop, dropped);
  // Up, then gone before it was steady: no restart at once.
  timers.advance(STEADY_MS - 1);
  ports[2]?.close();
  assert.equal(host.status().retry_at_ms, timers.now + 1000);
  timers.advance(999);
  assert.equal(ports.length, 3);
});

test('connect() throwing is a status, not an exception', () => {
  const { deps } = fakeDeps();
  const host = createHostClient({
    ...deps,
    connect: () => {
      throw new Error('nativeMessaging permission missing');
    },
  });
  host.start();
  assert.equal(host.status().state, 'error');
  assert.match(host.status().message ?? '', /permission missing/);
});

test('subscriptions: events routed, re-subscribed after reconnect, unsubscribe on close', async () => {
  const { deps, ports, timers } = fakeDeps();
  const host = createHostClient(deps);
  const events: string[] = [];
  const sub = host.subscribe({ type: 'subscribe', topic: 'cpu', interval_ms: 1000 }, (e) =>
    events.push(e.type),
  );
  host.start();
  const p1 = ports[0];
  assert.ok(p1);
  p1.answer(VERSION, 1);
  await tick();
  assert.deepEqual(p1.last(), { type: 'subscribe', topic: 'cpu', interval_ms: 1000, id: 2 });
  p1.answer({ subscription: 7 });
  await tick();
  assert.equal(sub.id, 7);
  const report = EMPTY_REPORT;
  p1.emit({ type: 'event', subscription: 7, event: { type: 'cpu', report } });
  p1.emit({ type: 'event', subscription: 8, event: { type: 'cpu', report } }); // not ours
  p1.emit({ type: 'event', subscription: 7, event: { type: 'bogus' } }); // malformed: dropped
  assert.deepEqual(events, ['cpu']);

  p1.close();
  assert.equal(sub.id, null);
  timers.advance(1000);
  const p2 = ports[1];
  assert.ok(p2);
  p2.answer(VERSION);
  await tick();
  assert.equal(p2.last().type, 'subscribe');
  p2.answer({ subscription: 1 });
  await tick();
  assert.equal(sub.id, 1);

  const closing = sub.close();
  assert.deepEqual(p2.last(), { type: 'unsubscribe', subscription: 1, id: p2.last().id });
  p2.answer({ subscription: 1 });
  await closing;
  p2.emit({ type: 'event', subscription: 1, event: { type: 'cpu', report } });
  assert.deepEqual(events, ['cpu']);
});

test('a subscription closed before the host answered is unsubscribed when the answer arrives', async () => {
  const { deps, ports } = fakeDeps();
  const host = createHostClient(deps);
  host.start();
  const port = ports[0];
  assert.ok(port);
  port.answer(VERSION);
  await tick();
  const sub = host.subscribe({ type: 'subscribe', topic: 'audio' }, () => {});
  await sub.close();
  port.answer({ subscription: 3 });
  await tick();
  assert.deepEqual(port.last(), { type: 'unsubscribe', subscription: 3, id: port.last().id });
});

test('stop(): no reconnect', () => {
  const { deps, ports, timers } = fakeDeps();
  const host = createHostClient(deps);
  host.start();
  host.stop();
  assert.equal(host.status().state, 'stopped');
  timers.advance(60_000);
  assert.equal(ports.length, 1);
  assert.equal(timers.pending(), 0);
});

test('a subscription the host ended is asked for again after a pause', async () => {
  const { deps, ports, timers } = fakeDeps();
  const host = createHostClient(deps);
  const events: string[] = [];
  const sub = host.subscribe({ type: 'subscribe', topic: 'audio' }, (e) => events.push(e.type));
  host.start();
  const port = ports[0];
  assert.ok(port);
  port.answer(VERSION, 1);
  await tick();
  port.answer({ subscription: 4 });
  await tick();
  assert.equal(sub.id, 4);

  port.emit({
    type: 'event',
    subscription: 4,
    event: { type: 'subscription_ended', code: 8, reason: 'gone' },
  });
  assert.deepEqual(events, ['subscription_ended']);
  assert.equal(sub.id, null);
  const sentBefore = port.sent.length;
  timers.advance(1999);
  assert.equal(port.sent.length, sentBefore);
  timers.advance(1);
  assert.deepEqual(port.last(), { type: 'subscribe', topic: 'audio', id: port.last().id });
  port.answer({ subscription: 5 });
  await tick();
  assert.equal(sub.id, 5);

  // Closed by the caller before the pause is over: not asked for again.
  port.emit({
    type: 'event',
    subscription: 5,
    event: { type: 'subscription_ended', code: 8, reason: 'gone' },
  });
  await sub.close();
  const n = port.sent.length;
  timers.advance(5000);
  assert.equal(port.sent.length, n);
});
