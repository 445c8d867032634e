// A request checked as the host's decoder checks it (`protocol::decode_request`), so that the extension
// can explain a rejection before sending.
import {
  CAPTURE_MS,
  CPU_INTERVAL_MS,
  CPU_WINDOW_MS,
  ErrorCode,
  type KnownErrorCode,
  MAX_PIDS,
} from './constants.ts';
import {
  arrayOf,
  inRange,
  isBool,
  isLatencyBrowser,
  isPhase,
  isPid,
  isRecord,
  isUint,
  optional,
} from './guard-kit.ts';
import { type ExtensionToHost, REQUEST_TYPES, type RequestType } from './requests.ts';

const isPidList = (v: unknown): boolean =>
  Array.isArray(v) && v.length >= 1 && v.length <= MAX_PIDS && v.every(isPid);

/** True when `v` is a request the host accepts (the same rules as the host's decoder). */
export function isExtensionToHost(v: unknown): v is ExtensionToHost {
  if (!isRecord(v) || !isUint(v.id) || typeof v.type !== 'string') return false;
  switch (v.type) {
    case 'version':
    case 'audio_server_info':
    case 'audio_streams':
    case 'doctor':
    case 'latency_status':
    case 'power':
    case 'history':
      return true;
    case 'phase':
      return isPhase(v.phase);
    case 'latency_set':
      return (
        'capture_ms' in v &&
        (v.capture_ms === null || inRange(v.capture_ms, CAPTURE_MS.min, CAPTURE_MS.max)) &&
        optional(isBool, v.dry_run) &&
        optional(arrayOf(isLatencyBrowser), v.browsers)
      );
    case 'processes':
      return optional(isPid, v.browser_pid);
    case 'cpu_sample':
      return inRange(v.window_ms, CPU_WINDOW_MS.min, CPU_WINDOW_MS.max) && optional(isPidList, v.pids);
    case 'subscribe':
      if (v.topic === 'audio') return true;
      if (v.topic === 'history')
        return optional((x) => inRange(x, CPU_INTERVAL_MS.min, CPU_INTERVAL_MS.max), v.interval_ms);
      return (
        v.topic === 'cpu' &&
        optional((x) => inRange(x, CPU_INTERVAL_MS.min, CPU_INTERVAL_MS.max), v.interval_ms) &&
        optional(isPidList, v.pids)
      );
    case 'unsubscribe':
      return isUint(v.subscription);
    default:
      return false;
  }
}

/**
 * The error code the host replies with for a request frame body (`null` when the host accepts it).
 * Mirrors `protocol::decode_request` so the extension can explain a rejection before sending.
 */
export function requestErrorCode(text: string): KnownErrorCode | null {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return ErrorCode.InvalidJson;
  }
  if (isExtensionToHost(v)) return null;
  if (
    isRecord(v) &&
    isUint(v.id) &&
    typeof v.type === 'string' &&
    !REQUEST_TYPES.includes(v.type as RequestType)
  ) {
    return ErrorCode.UnknownType;
  }
  return ErrorCode.InvalidRequest;
}
