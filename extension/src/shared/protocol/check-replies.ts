// What the host sends, checked as a whole: the envelope (result, error, event), each event, and a
// result against the request type it answers.
import type { AudioStreams } from './audio.ts';
import {
  isAudioServerInfo,
  isAudioStream,
  isCpuReport,
  isDoctorReport,
  isHistorySnapshot,
  isLatencySetResult,
  isLatencyStatus,
  isPowerReading,
  isProcesses,
  isVersion,
} from './check-payloads.ts';
import {
  arrayOf,
  type Guard,
  isNumber,
  isRecord,
  isStreamKind,
  isString,
  isUint,
  nullable,
  shape,
} from './guard-kit.ts';
import type { PhaseResult } from './history.ts';
import type { ErrorBody, HostEvent, HostToExtension, ResultByType, SubscriptionResult } from './replies.ts';
import type { RequestType } from './requests.ts';

const isSubscriptionResult = shape<SubscriptionResult>({ subscription: isUint });

const resultGuards: { [K in RequestType]: Guard<ResultByType[K]> } = {
  version: isVersion,
  processes: isProcesses,
  cpu_sample: isCpuReport,
  subscribe: isSubscriptionResult,
  unsubscribe: isSubscriptionResult,
  audio_server_info: isAudioServerInfo,
  audio_streams: shape<AudioStreams>({ streams: arrayOf(isAudioStream) }),
  doctor: isDoctorReport,
  latency_status: isLatencyStatus,
  latency_set: isLatencySetResult,
  power: isPowerReading,
  phase: shape<PhaseResult>({ saved_cpu_s: isNumber }),
  history: isHistorySnapshot,
};

/** Checks a `result` payload against the request type it answers. */
export function isResultFor<K extends RequestType>(type: K, result: unknown): result is ResultByType[K] {
  return resultGuards[type](result);
}

export function isHostEvent(v: unknown): v is HostEvent {
  if (!isRecord(v)) return false;
  switch (v.type) {
    case 'cpu':
      return isCpuReport(v.report);
    case 'history':
      return isHistorySnapshot(v.history) && nullable(isCpuReport)(v.report);
    case 'audio_connected':
      return isAudioServerInfo(v.server);
    case 'audio_disconnected':
      return isString(v.reason);
    case 'stream_added':
    case 'stream_changed':
      return isAudioStream(v.stream);
    case 'stream_removed':
      return isStreamKind(v.kind) && isUint(v.index);
    case 'cpu_unavailable':
    case 'subscription_ended':
      return isUint(v.code) && isString(v.reason);
    default:
      return false;
  }
}

const isErrorBody = shape<ErrorBody>({ code: isUint, message: isString });

/** Checks the envelope of anything the host sent; `result` payloads stay `unknown` (see `isResultFor`). */
export function decodeHostToExtension(v: unknown): HostToExtension | null {
  if (!isRecord(v)) return null;
  switch (v.type) {
    case 'result':
      return isUint(v.id) && 'result' in v ? { id: v.id, type: 'result', result: v.result } : null;
    case 'error':
      return (v.id === null || isUint(v.id)) && isErrorBody(v.error)
        ? { id: v.id, type: 'error', error: v.error }
        : null;
    case 'event':
      return isUint(v.subscription) && isHostEvent(v.event)
        ? { type: 'event', subscription: v.subscription, event: v.event }
        : null;
    default:
      return null;
  }
}
