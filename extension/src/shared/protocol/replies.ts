// Host -> extension: what each request answers with, the events, errors and the envelope
// (native-host/PROTOCOL.md; checked by check-replies.ts). The larger payloads live beside this file,
// one family each.
import type { AudioServerInfo, AudioStream, AudioStreams, StreamKind } from './audio.ts';
import type { CpuReport } from './cpu-report.ts';
import type { DoctorReport } from './doctor-report.ts';
import type { HistorySnapshot, PhaseResult } from './history.ts';
import type { LatencySetResult, LatencyStatus } from './latency.ts';
import type { BrowserFamily, Processes } from './processes.ts';
import type { RequestId } from './requests.ts';

export interface Version {
  host_version: string;
  protocol_version: number;
  pid: number;
  origin: string | null;
  extension_id: string | null;
  browser_family: BrowserFamily | null;
  chrome_extension_id: string;
  firefox_extension_id: string;
}

export interface SubscriptionResult {
  subscription: number;
}

/** `power`: what the machine reports it draws (RAPL, else a discharging battery) over one second, the
 * cores busy meanwhile, and why each source that gave no figure could not (PROTOCOL.md, "PowerReading"). */
export interface PowerReading {
  source: 'rapl' | 'battery' | null;
  watts: number | null;
  busy_cores: number | null;
  watts_per_busy_core: number | null;
  window_ms: number;
  unavailable: string[];
}

/** The result payload each request type answers with. */
export interface ResultByType {
  version: Version;
  processes: Processes;
  cpu_sample: CpuReport;
  subscribe: SubscriptionResult;
  unsubscribe: SubscriptionResult;
  audio_server_info: AudioServerInfo;
  audio_streams: AudioStreams;
  doctor: DoctorReport;
  latency_status: LatencyStatus;
  latency_set: LatencySetResult;
  power: PowerReading;
  phase: PhaseResult;
  history: HistorySnapshot;
}

export type HostEvent =
  | { type: 'cpu'; report: CpuReport }
  /** `history` topic: the whole history first (report null), then each sample (`history.points` holds
   * only it) with the report it came from. */
  | { type: 'history'; history: HistorySnapshot; report: CpuReport | null }
  | { type: 'audio_connected'; server: AudioServerInfo }
  | { type: 'audio_disconnected'; reason: string }
  | { type: 'stream_added'; stream: AudioStream }
  | { type: 'stream_changed'; stream: AudioStream }
  | { type: 'stream_removed'; kind: StreamKind; index: number }
  /** `cpu` topic: nothing to sample for now (sent once; `cpu` events resume when there is). */
  | { type: 'cpu_unavailable'; code: number; reason: string }
  /** The subscription's last event: its source stopped; the subscription no longer exists. */
  | { type: 'subscription_ended'; code: number; reason: string };

export interface ErrorBody {
  /** A `KnownErrorCode`, or a code from a newer host. */
  code: number;
  message: string;
}

export type HostToExtension =
  | { id: RequestId; type: 'result'; result: unknown }
  | { id: RequestId | null; type: 'error'; error: ErrorBody }
  | { type: 'event'; subscription: number; event: HostEvent };
