// Capture latency between the extension's own pages (options, popup) and the background, over
// chrome.runtime.sendMessage (one question, one answer). The background talks to micoff-host.
import type { ManagedLatency } from '../capture-latency.ts';
import type { LatencySetResult, LatencyStatus } from '../protocol.ts';

export type LatencyRequest =
  | { type: 'micoff_latency_get' }
  | { type: 'micoff_latency_set'; capture_ms: number | null };

export interface LatencyReply {
  managed: ManagedLatency;
  /** The host's `latency_status`; null when it could not be had (see `error`). */
  status: LatencyStatus | null;
  /** The host's answer to a `micoff_latency_set`. */
  set: LatencySetResult | null;
  /** What went wrong (host missing, refused, managed value), for a person. */
  error: string | null;
}

export function isLatencyRequest(m: unknown): m is LatencyRequest {
  if (typeof m !== 'object' || m === null) return false;
  const v = m as Record<string, unknown>;
  if (v.type === 'micoff_latency_get') return true;
  return (
    v.type === 'micoff_latency_set' &&
    (v.capture_ms === null || (typeof v.capture_ms === 'number' && Number.isInteger(v.capture_ms)))
  );
}
