// Fakes shared by the background unit tests: a native port, manual timers and a record stream.
import type { AudioStream, CpuReport } from '../shared/protocol.ts';
import type { HostClientDeps, PortLike, TimersLike } from './host-client.ts';

/** A Chromium record stream as the host reports it (on source `mic`), with `extra` over it. */
export const recordStream = (index: number, extra: Record<string, unknown> = {}): AudioStream =>
  ({
    kind: 'record',
    index,
    name: 'RecordStream',
    client_index: index,
    device_index: index,
    device_name: 'mic',
    application_name: 'Chromium',
    application_process_id: 10,
    application_process_binary: 'chromium',
    media_role: null,
    corked: false,
    muted: false,
    sample_rate_hz: 48000,
    channels: 1,
    sample_format: 's16le',
    buffer_latency_us: 10000,
    device_latency_us: 0,
    ...extra,
  }) as AudioStream;

export class FakePort implements PortLike {
  sent: Record<string, unknown>[] = [];
  error: { message?: string } | null = null;
  disconnected = false;
  private msgListeners: ((m: unknown) => void)[] = [];
  private discListeners: (() => void)[] = [];
  onMessage = { addListener: (cb: (m: unknown) => void) => this.msgListeners.push(cb) };
  onDisconnect = { addListener: (cb: () => void) => this.discListeners.push(cb) };
  postMessage(m: unknown): void {
    if (this.disconnected) throw new Error('Attempting to use a disconnected port object');
    this.sent.push(m as Record<string, unknown>);
  }
  disconnect(): void {
    this.disconnected = true;
  }
  /** The host sends a message. */
  emit(m: unknown): void {
    for (const l of this.msgListeners) l(m);
  }
  /** The browser closes the port (host exited / not found). */
  close(): void {
    this.disconnected = true;
    for (const l of this.discListeners) l();
  }
  last(): Record<string, unknown> {
    const m = this.sent.at(-1);
    if (!m) throw new Error('nothing sent');
    return m;
  }
  answer(result: unknown, id = this.last().id): void {
    this.emit({ id, type: 'result', result });
  }
}

export class FakeTimers implements TimersLike {
  now = 1000;
  private next = 1;
  private timers = new Map<number, { at: number; cb: () => void }>();
  setTimeout(cb: () => void, ms: number): unknown {
    const id = this.next++;
    this.timers.set(id, { at: this.now + ms, cb });
    return id;
  }
  clearTimeout(h: unknown): void {
    this.timers.delete(h as number);
  }
  /** Runs every timer due up to now + ms, in order. */
  advance(ms: number): void {
    const end = this.now + ms;
    for (;;) {
      const due = [...this.timers].filter(([, t]) => t.at <= end).sort((a, b) => a[1].at - b[1].at)[0];
      if (!due) break;
      this.timers.delete(due[0]);
      this.now = due[1].at;
      due[1].cb();
    }
    this.now = end;
  }
  pending(): number {
    return this.timers.size;
  }
}

export const VERSION = {
  host_version: '0.1.0',
  protocol_version: 1,
  pid: 4242,
  origin: 'chrome-extension://ipgdconbmedmelnlpalblnicflhpfkim/',
  extension_id: 'ipgdconbmedmelnlpalblnicflhpfkim',
  browser_family: 'chromium',
  chrome_extension_id: 'ipgdconbmedmelnlpalblnicflhpfkim',
  firefox_extension_id: 'micoff@micoff.org',
};

/** deps whose connect() hands out FakePorts (or throws `connectError`), plus the ports made so far. */
export function fakeDeps(opts: { lastError?: string } = {}) {
  const timers = new FakeTimers();
  const ports: FakePort[] = [];
  const state = { lastError: opts.lastError as string | undefined };
  const deps: HostClientDeps = {
    connect: () => {
      const p = new FakePort();
      ports.push(p);
      return p;
    },
    lastError: () => state.lastError,
    timers,
    now: () => timers.now,
    requestTimeoutMs: 5000,
    backoff: { initialMs: 1000, maxMs: 8000 },
  };
  return { deps, timers, ports, state };
}

/** A CPU report with nothing in it. */
export const EMPTY_REPORT: CpuReport = {
  window_ms: 1000,
  total_cpu_pct: 0,
  processes: [],
  roles: [],
  gone_pids: [],
  threads_omitted: 0,
};

export const tick = () => new Promise<void>((r) => setImmediate(r));
