// Capture latency, background side: answers the options page and the popup with the host's
// `latency_status`, applies the user's choice through `latency_set`, and applies an administrator's
// managed value (storage.managed) whenever the host connects or the policy changes. A managed value
// is never overridden from the options page.
import {
  CAPTURE_LATENCY_CHOICES,
  type ManagedLatency,
  managedNeedsApply,
  readManagedLatency,
} from '../shared/capture-latency.ts';
import { isLatencyRequest, type LatencyReply } from '../shared/messages/ui-latency.ts';
import type { BackgroundContext } from './context.ts';
import type { HostClient } from './host-client.ts';
import { ownExtension, uiSenderRefusal } from './ui-sender.ts';

export interface LatencyServiceDeps {
  host: Pick<HostClient, 'request'>;
  managed(): Promise<ManagedLatency>;
  log?(message: string): void;
}

export interface LatencyService {
  get(): Promise<LatencyReply>;
  set(captureMs: number | null): Promise<LatencyReply>;
  /** Applies the managed value when it differs from what the host has configured. */
  enforceManaged(): Promise<LatencyReply>;
}

const message = (e: unknown) => (e instanceof Error ? e.message : String(e));

export function createLatencyService(deps: LatencyServiceDeps): LatencyService {
  const log = deps.log ?? (() => {});

  async function get(): Promise<LatencyReply> {
    const managed = await deps.managed();
    try {
      const status = await deps.host.request({ type: 'latency_status' });
      return { managed, status, set: null, error: null };
    } catch (e) {
      return { managed, status: null, set: null, error: message(e) };
    }
  }

  /** latency_set, then a fresh status (what the options page shows next). */
  async function apply(managed: ManagedLatency, captureMs: number | null): Promise<LatencyReply> {
    try {
      const set = await deps.host.request({ type: 'latency_set', capture_ms: captureMs, dry_run: false });
      const status = await deps.host.request({ type: 'latency_status' }).catch(() => null);
      return { managed, status, set, error: null };
    } catch (e) {
      const status = await deps.host.request({ type: 'latency_status' }).catch(() => null);
      return { managed, status, set: null, error: message(e) };
    }
  }

  return {
    get,
    async set(captureMs) {
      const managed = await deps.managed();
      if (managed.managed) {
        const now = await get();
        return { ...now, error: 'The capture latency is set by your administrator (managed policy).' };
      }
      if (!CAPTURE_LATENCY_CHOICES.includes(captureMs)) {
        const now = await get();
        return { ...now, error: `not a capture latency micoff offers: ${captureMs}` };
      }
      return apply(managed, captureMs);
    },
    async enforceManaged() {
      const now = await get();
      if (!now.status || !managedNeedsApply(now.managed, now.status) || !now.managed.managed) return now;
      log(`applying the managed capture latency (${now.managed.capture_ms ?? 'browser default'})`);
      return apply(now.managed, now.managed.capture_ms);
    },
  };
}

export function startLatency(ctx: BackgroundContext): void {
  const managedArea = chrome.storage?.managed;
  const service = createLatencyService({
    host: ctx.host,
    managed: () => readManagedLatency(managedArea),
    log: ctx.log,
  });
  const enforce = () =>
    void service.enforceManaged().then(
      (r) => r.error && ctx.log(`managed capture latency: ${r.error}`),
      () => {},
    );

  // Only the extension's own UI pages (options, popup) may ask: the same rule as the popup port.
  const own = ownExtension();
  chrome.runtime.onMessage.addListener((raw: unknown, sender, reply) => {
    if (!isLatencyRequest(raw) || uiSenderRefusal(sender, own) !== null) return false;
    const answer = raw.type === 'micoff_latency_get' ? service.get() : service.set(raw.capture_ms);
    void answer.then(reply);
    return true; // async reply
  });
  ctx.host.onStatus((s) => {
    if (s.state === 'connected') enforce();
  });
  chrome.storage?.onChanged.addListener((_changes, area) => {
    if (area === 'managed') enforce();
  });
  ctx.expose('latency', {
    get: service.get,
    set: service.set,
    enforceManaged: service.enforceManaged,
  });
}
