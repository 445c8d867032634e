import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ManagedLatency } from '../shared/capture-latency.ts';
import type { LatencyStatus } from '../shared/protocol.ts';
import { HostError } from './host-client.ts';
import { createLatencyService } from './latency-feature.ts';

/** A host that keeps a configured value like micoff-host does, and records every request. */
function fakeHost(initial: number | null, opts: { failSet?: boolean; down?: boolean } = {}) {
  let configured = initial;
  const calls: { type: string; capture_ms?: number | null }[] = [];
  const status = (): LatencyStatus => ({
    server: { kind: 'pulseaudio', version: '16.1', mechanism: 'launch_environment' },
    configured:
      configured === null
        ? null
        : {
            capture_ms: configured,
            mechanism: 'launch_environment',
            browsers: ['chromium'],
            files: ['/home/u/.local/share/applications/chromium.desktop'],
            in_effect: false,
          },
    streams: [],
    needs_restart: configured === null ? [] : ['chromium'],
    notes: [],
  });
  const host = {
    // biome-ignore lint/suspicious/noExplicitAny: the fake answers the two latency requests only
    request: async (req: any): Promise<any> => {
      calls.push(req);
      if (opts.down) throw new HostError('disconnected', 'Specified native messaging host not found.');
      if (req.type === 'latency_status') return status();
      if (req.type === 'latency_set') {
        if (opts.failSet) throw new HostError('host', 'cannot write the desktop entry', 7);
        configured = req.capture_ms;
        return {
          changed_files: ['/f'],
          mechanism: 'launch_environment',
          needs_restart: ['chromium'],
          message: 'ok',
        };
      }
      throw new Error(`unexpected ${req.type}`);
    },
  };
  return { host, calls, configured: () => configured };
}

const notManaged = async (): Promise<ManagedLatency> => ({ managed: false, invalid: null });
const managedAt = (ms: number | null) => async (): Promise<ManagedLatency> => ({
  managed: true,
  capture_ms: ms,
});

test('set: applies through latency_set and answers with the fresh status', async () => {
  const f = fakeHost(null);
  const svc = createLatencyService({ host: f.host, managed: notManaged });
  const r = await svc.set(40);
  assert.equal(r.error, null);
  assert.equal(r.set?.message, 'ok');
  assert.equal(r.status?.configured?.capture_ms, 40);
  assert.deepEqual(
    f.calls.map((c) => c.type),
    ['latency_set', 'latency_status'],
  );
  assert.deepEqual(f.calls[0], { type: 'latency_set', capture_ms: 40, dry_run: false });
  await svc.set(null);
  assert.equal(f.configured(), null);
});

test('set: refused while managed, and for values micoff does not offer; nothing sent to the host', async () => {
  const f = fakeHost(40);
  const managed = createLatencyService({ host: f.host, managed: managedAt(40) });
  const r = await managed.set(10);
  assert.match(r.error ?? '', /administrator/);
  assert.equal(f.configured(), 40);
  const plain = createLatencyService({ host: f.host, managed: notManaged });
  assert.match((await plain.set(35)).error ?? '', /not a capture latency/);
  assert.ok(f.calls.every((c) => c.type === 'latency_status'));
});

test('a host error reaches the page as text, with the status as it is', async () => {
  const f = fakeHost(20, { failSet: true });
  const r = await createLatencyService({ host: f.host, managed: notManaged }).set(60);
  assert.equal(r.error, 'cannot write the desktop entry');
  assert.equal(r.status?.configured?.capture_ms, 20);
  const down = await createLatencyService({
    host: fakeHost(null, { down: true }).host,
    managed: notManaged,
  }).get();
  assert.equal(down.status, null);
  assert.match(down.error ?? '', /not found/);
});

test('enforceManaged applies the administrator value only when it differs', async () => {
  const f = fakeHost(null);
  const svc = createLatencyService({ host: f.host, managed: managedAt(60) });
  await svc.enforceManaged();
  assert.equal(f.configured(), 60);
  const before = f.calls.length;
  await svc.enforceManaged();
  assert.deepEqual(
    f.calls.slice(before).map((c) => c.type),
    ['latency_status'],
  );
  // Managed "browser default" resets what micoff had configured.
  await createLatencyService({ host: f.host, managed: managedAt(null) }).enforceManaged();
  assert.equal(f.configured(), null);
  // Not managed: nothing is touched.
  const g = fakeHost(40);
  await createLatencyService({ host: g.host, managed: notManaged }).enforceManaged();
  assert.equal(g.configured(), 40);
});
