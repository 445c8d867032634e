// Extension -> host: the requests (native-host/PROTOCOL.md; checked by check-request.ts).
import type { Phase } from './history.ts';
import type { LatencyBrowser } from './latency.ts';

export type RequestId = number;

export type ExtensionToHost =
  | { id: RequestId; type: 'version' }
  | { id: RequestId; type: 'processes'; browser_pid?: number | null }
  | { id: RequestId; type: 'cpu_sample'; window_ms: number; pids?: number[] | null }
  | { id: RequestId; type: 'subscribe'; topic: 'cpu'; interval_ms?: number | null; pids?: number[] | null }
  | { id: RequestId; type: 'subscribe'; topic: 'audio' }
  /** Every sample of the audio path's history while open (the first event: the whole history). */
  | { id: RequestId; type: 'subscribe'; topic: 'history'; interval_ms?: number | null }
  | { id: RequestId; type: 'unsubscribe'; subscription: number }
  | { id: RequestId; type: 'audio_server_info' }
  | { id: RequestId; type: 'audio_streams' }
  | { id: RequestId; type: 'doctor' }
  | { id: RequestId; type: 'latency_status' }
  /** What the machine reports it draws, measured over one second (answers after it). */
  | { id: RequestId; type: 'power' }
  /** What the microphones of all tabs are doing: sent on every change (the host keeps the history
   * of the audio path's CPU while it is not `idle`). */
  | { id: RequestId; type: 'phase'; phase: Phase }
  /** The audio path's CPU history the popup charts. */
  | { id: RequestId; type: 'history' }
  /** `capture_ms` is required: null resets to the browsers' default (a missing field is never read as
   * a reset). `dry_run` says what would change; `browsers` limits it (default: all micoff knows). */
  | {
      id: RequestId;
      type: 'latency_set';
      capture_ms: number | null;
      dry_run?: boolean | null;
      browsers?: LatencyBrowser[] | null;
    };

export type RequestType = ExtensionToHost['type'];
export const REQUEST_TYPES: readonly RequestType[] = [
  'version',
  'processes',
  'cpu_sample',
  'subscribe',
  'unsubscribe',
  'audio_server_info',
  'audio_streams',
  'doctor',
  'latency_status',
  'latency_set',
  'power',
  'phase',
  'history',
];
