// The one persistent native messaging connection to micoff-host: one port, request ids from a counter,
// per-request timeouts. Status: connecting -> connected (after the `version` handshake) | not_installed
// | error. A closed port fails every pending request with the browser's reason and reconnects with
// backoff; subscriptions are re-sent on every new connection and their events routed by subscription
// number. Everything browser-specific comes in through `HostClientDeps` (tests use a fake port).

import { type HostStatus, INSTALL_COMMAND } from '../shared/host-status.ts';
import {
  decodeHostToExtension,
  type ExtensionToHost,
  HOST_NAME,
  type HostEvent,
  isResultFor,
  type RequestType,
  type ResultByType,
} from '../shared/protocol.ts';

export type { HostState, HostStatus } from '../shared/host-status.ts';

/** A request as callers write it: the client adds the id. */
export type HostRequest = ExtensionToHost extends infer R
  ? R extends ExtensionToHost
    ? Omit<R, 'id'>
    : never
  : never;
export type RequestOf<K extends RequestType> = Extract<HostRequest, { type: K }>;
export type SubscribeRequest = Extract<HostRequest, { type: 'subscribe' }>;

export type HostErrorKind = 'host' | 'timeout' | 'disconnected' | 'bad_reply';

export class HostError extends Error {
  constructor(
    readonly kind: HostErrorKind,
    message: string,
    /** The host's error code (`kind === 'host'`), see protocol.ts `ErrorCode`. */
    readonly code: number | null = null,
  ) {
    super(message);
    this.name = 'HostError';
  }
}

/** The part of chrome.runtime.Port the client uses. `error` is Firefox's disconnect reason. */
export interface PortLike {
  postMessage(message: unknown): void;
  disconnect(): void;
  onMessage: { addListener(cb: (message: unknown) => void): void };
  onDisconnect: { addListener(cb: () => void): void };
  error?: { message?: string } | null;
}

export interface TimersLike {
  setTimeout(cb: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export interface HostClientDeps {
  /** chrome.runtime.connectNative(HOST_NAME); may throw. */
  connect(): PortLike;
  /** chrome.runtime.lastError?.message, read inside onDisconnect (Chromium's disconnect reason). */
  lastError(): string | undefined;
  timers: TimersLike;
  now(): number;
  /** Base timeout per request; `cpu_sample` adds its window. */
  requestTimeoutMs?: number;
  backoff?: { initialMs: number; maxMs: number };
  log?: (message: string) => void;
}

export interface Subscription {
  /** The host's current subscription number (changes on reconnect); null while not subscribed. */
  readonly id: number | null;
  close(): Promise<void>;
}

/** What went over the port since the background started: requests sent by type, events received by
 * the topic of their subscription (e2e tests check that a call costs no request per tick). */
export interface HostTraffic {
  requests: Partial<Record<RequestType, number>>;
  events: Partial<Record<SubscribeRequest['topic'], number>>;
}

export interface HostClient {
  start(): void;
  stop(): void;
  /** Drop the waiting time and connect now (the popup's "retry"). */
  reconnect(): void;
  request<K extends RequestType>(req: RequestOf<K>): Promise<ResultByType[K]>;
  status(): HostStatus;
  onStatus(listener: (status: HostStatus) => void): () => void;
  subscribe(req: SubscribeRequest, onEvent: (event: HostEvent) => void): Subscription;
  traffic(): HostTraffic;
}

/** Chromium: "Specified native messaging host not found."; Firefox: "No such native application x". */
export function classifyDisconnect(message: string): {
  state: 'not_installed' | 'error';
  fix_command: string | null;
} {
  if (/not found|no such native application/i.test(message)) {
    return { state: 'not_installed', fix_command: INSTALL_COMMAND };
  }
  // Chromium: "Access to the specified native messaging host is forbidden." - the installed manifest
  // does not list this extension's id; reinstalling writes the right one.
  if (/forbidden/i.test(message)) return { state: 'error', fix_command: INSTALL_COMMAND };
  return { state: 'error', fix_command: null };
}

export function backoffDelayMs(attempts: number, initialMs: number, maxMs: number): number {
  return Math.min(maxMs, initialMs * 2 ** Math.max(0, attempts - 1));
}

interface Pending {
  type: RequestType;
  resolve(result: unknown): void;
  reject(err: HostError): void;
  timer: unknown;
}

/** A connection that was up at least this long and then dropped is tried again at once: the host
 * died (killed, crashed, replaced by an upgrade) and the sooner a new one runs, the sooner its sink
 * waker serves a capture opened meanwhile. One that drops sooner backs off, so a host that dies right
 * after its start is not restarted in a loop. */
export const STEADY_MS = 10_000;

/** How long after the host ended a subscription the client asks for it again. */
const RESUBSCRIBE_AFTER_MS = 2000;

interface SubEntry {
  req: SubscribeRequest;
  onEvent(event: HostEvent): void;
  remoteId: number | null;
  closed: boolean;
}

export function createHostClient(deps: HostClientDeps): HostClient {
  const timeoutMs = deps.requestTimeoutMs ?? 10_000;
  const { initialMs, maxMs } = deps.backoff ?? { initialMs: 1000, maxMs: 30_000 };
  const log = deps.log ?? (() => {});

  let port: PortLike | null = null;
  let nextId = 1;
  const pending = new Map<number, Pending>();
  const subs = new Set<SubEntry>();
  const byRemoteId = new Map<number, SubEntry>();
  const statusListeners = new Set<(s: HostStatus) => void>();
  let retryTimer: unknown = null;
  const traffic: HostTraffic = { requests: {}, events: {} };
  let current: HostStatus = {
    state: 'stopped',
    message: null,
    fix_command: null,
    version: null,
    attempts: 0,
    retry_at_ms: null,
    since_ms: deps.now(),
    last_drop: null,
  };

  function setStatus(patch: Partial<HostStatus>): void {
    const next = { ...current, ...patch };
    if ((Object.keys(patch) as (keyof HostStatus)[]).every((k) => current[k] === next[k])) return;
    if (next.state !== current.state) next.since_ms = deps.now();
    current = next;
    for (const l of statusListeners) l(current);
  }

  function connect(): void {
    if (retryTimer !== null) {
      deps.timers.clearTimeout(retryTimer);
      retryTimer = null;
    }
    if (port) return;
    setStatus({ state: 'connecting', retry_at_ms: null });
    let p: PortLike;
    try {
      p = deps.connect();
    } catch (err) {
      onClosed(null, `connectNative failed: ${err instanceof Error ? err.message : String(err)}`);
      return;
    }
    port = p;
    p.onMessage.addListener((msg) => {
      if (port === p) onMessage(msg);
    });
    p.onDisconnect.addListener(() => {
      // Read the reason synchronously: chrome.runtime.lastError is only set inside this callback.
      const reason = p.error?.message ?? deps.lastError() ?? 'native host disconnected';
      if (port === p) onClosed(p, reason);
    });
    send({ type: 'version' })
      .then((version) => {
        if (port !== p) return;
        setStatus({ state: 'connected', message: null, fix_command: null, version, attempts: 0 });
        for (const s of subs) if (!s.closed) void sendSubscribe(s, p);
      })
      .catch((err: HostError) => log(`host handshake failed: ${err.message}`));
  }

  function onClosed(p: PortLike | null, reason: string): void {
    port = null;
    try {
      p?.disconnect();
    } catch {
      // already closed
    }
    for (const [id, req] of pending) {
      deps.timers.clearTimeout(req.timer);
      pending.delete(id);
      req.reject(new HostError('disconnected', reason));
    }
    byRemoteId.clear();
    for (const s of subs) s.remoteId = null;
    if (current.state === 'stopped') return;
    const steady = current.state === 'connected' && deps.now() - current.since_ms >= STEADY_MS;
    const attempts = steady ? 0 : current.attempts + 1;
    const delay = steady ? 0 : backoffDelayMs(attempts, initialMs, maxMs);
    const { state, fix_command } = classifyDisconnect(reason);
    log(`host disconnected (${reason}); retry in ${delay} ms`);
    setStatus({
      state,
      message: reason,
      fix_command,
      version: null,
      attempts,
      retry_at_ms: deps.now() + delay,
      ...(current.state === 'connected' ? { last_drop: { at_ms: deps.now(), reason } } : {}),
    });
    retryTimer = deps.timers.setTimeout(() => {
      retryTimer = null;
      connect();
    }, delay);
  }

  function onMessage(raw: unknown): void {
    const msg = decodeHostToExtension(raw);
    if (!msg) {
      log(`host sent an unreadable message: ${JSON.stringify(raw)?.slice(0, 200)}`);
      return;
    }
    if (msg.type === 'event') {
      const s = byRemoteId.get(msg.subscription);
      if (!s) return;
      traffic.events[s.req.topic] = (traffic.events[s.req.topic] ?? 0) + 1;
      s.onEvent(msg.event);
      if (msg.event.type === 'subscription_ended') resubscribeLater(s, msg.subscription);
      return;
    }
    if (msg.type === 'error' && msg.id === null) {
      log(`host error without id: ${msg.error.message}`);
      return;
    }
    if (msg.id === null) return;
    const req = pending.get(msg.id);
    if (!req) return; // timed out already
    pending.delete(msg.id);
    deps.timers.clearTimeout(req.timer);
    if (msg.type === 'error') req.reject(new HostError('host', msg.error.message, msg.error.code));
    else if (!isResultFor(req.type, msg.result)) {
      req.reject(new HostError('bad_reply', `host answered ${req.type} with an unexpected shape`));
    } else req.resolve(msg.result);
  }

  /** Sends on the current port, whatever the status (the handshake itself goes through here). */
  function send<K extends RequestType>(req: RequestOf<K>): Promise<ResultByType[K]> {
    const p = port;
    if (!p)
      return Promise.reject(new HostError('disconnected', current.message ?? 'not connected to micoff-host'));
    const id = nextId++;
    const limit = timeoutMs + (req.type === 'cpu_sample' ? (req as RequestOf<'cpu_sample'>).window_ms : 0);
    return new Promise<ResultByType[K]>((resolve, reject) => {
      const timer = deps.timers.setTimeout(() => {
        pending.delete(id);
        reject(new HostError('timeout', `micoff-host did not answer ${req.type} within ${limit} ms`));
      }, limit);
      pending.set(id, { type: req.type, resolve: resolve as (r: unknown) => void, reject, timer });
      traffic.requests[req.type] = (traffic.requests[req.type] ?? 0) + 1;
      try {
        p.postMessage({ ...req, id });
      } catch (err) {
        pending.delete(id);
        deps.timers.clearTimeout(timer);
        reject(new HostError('disconnected', err instanceof Error ? err.message : String(err)));
      }
    });
  }

  /** The host ended a subscription (its source stopped): ask for it again after a pause, on the same
   * connection, unless the caller closed it or the connection changed (a reconnect re-subscribes). */
  function resubscribeLater(s: SubEntry, remoteId: number): void {
    byRemoteId.delete(remoteId);
    s.remoteId = null;
    const p = port;
    deps.timers.setTimeout(() => {
      if (!s.closed && p && port === p && s.remoteId === null) void sendSubscribe(s, p);
    }, RESUBSCRIBE_AFTER_MS);
  }

  async function sendSubscribe(s: SubEntry, p: PortLike): Promise<void> {
    try {
      const { subscription } = await send(s.req);
      if (port !== p) return; // reconnected meanwhile: the new connection re-subscribes
      if (s.closed) {
        await send({ type: 'unsubscribe', subscription }).catch(() => {});
        return;
      }
      s.remoteId = subscription;
      byRemoteId.set(subscription, s);
    } catch (err) {
      log(`subscribe ${s.req.topic} failed: ${(err as Error).message}`);
    }
  }

  return {
    start() {
      connect();
    },
    stop() {
      setStatus({ state: 'stopped', message: null, retry_at_ms: null });
      if (retryTimer !== null) deps.timers.clearTimeout(retryTimer);
      retryTimer = null;
      const p = port;
      if (p) onClosed(p, 'stopped');
    },
    reconnect() {
      if (!port) connect();
    },
    async request(req) {
      if (!port && current.state !== 'stopped') connect();
      // Wait for the handshake rather than racing it: the host answers in order of arrival anyway, but
      // a caller should get the disconnect reason, not a generic error, when the host is missing.
      return send(req);
    },
    status: () => current,
    traffic: () => ({ requests: { ...traffic.requests }, events: { ...traffic.events } }),
    onStatus(listener) {
      statusListeners.add(listener);
      return () => statusListeners.delete(listener);
    },
    subscribe(req, onEvent) {
      const entry: SubEntry = { req, onEvent, remoteId: null, closed: false };
      subs.add(entry);
      if (port && current.state === 'connected') void sendSubscribe(entry, port);
      return {
        get id() {
          return entry.remoteId;
        },
        async close() {
          entry.closed = true;
          subs.delete(entry);
          const remote = entry.remoteId;
          entry.remoteId = null;
          if (remote === null) return;
          byRemoteId.delete(remote);
          if (port) await send({ type: 'unsubscribe', subscription: remote }).catch(() => {});
        },
      };
    },
  };
}

/** The client over the real browser API. */
export function browserHostClient(log?: (m: string) => void): HostClient {
  return createHostClient({
    connect: () => chrome.runtime.connectNative(HOST_NAME) as unknown as PortLike,
    lastError: () => chrome.runtime.lastError?.message,
    timers: {
      setTimeout: (cb, ms) => setTimeout(cb, ms),
      clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
    },
    now: () => Date.now(),
    log,
  });
}
