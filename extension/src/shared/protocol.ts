// The native messaging protocol between the extension and `micoff-host`, mirrored from
// native-host/PROTOCOL.md (the contract) and native-host/crates/micoff-core/src/protocol/. Both sides test against
// fixtures/protocol/*.json; change all of them together.
//
// Types say who sends them: `ExtensionToHost` (requests) and `HostToExtension` (results, errors,
// events). Everything the host sends is `unknown` until a guard below has checked it.

/** The native messaging host name; the Rust side's is `HOST_NAME` in native-host/crates/micoff-core/src/lib.rs
 * (native-host/tests/host_name.rs checks they agree). */
export const HOST_NAME = 'org.micoff.host';
export const PROTOCOL_VERSION = 1;
/** Host -> browser frame limit (the browser closes the port above it). */
export const MAX_HOST_MESSAGE_BYTES = 1024 * 1024;
export const CPU_WINDOW_MS = { min: 100, max: 60_000 } as const;
export const CPU_INTERVAL_MS = { min: 250, max: 60_000, default: 1000 } as const;
export const MAX_PIDS = 256;
export const MAX_PID = 2_147_483_647;
export const MAX_IN_FLIGHT = 32;
export const MAX_SUBSCRIPTIONS = 8;
/** `latency_set` `capture_ms`: what the host accepts (null resets to the browser's default). */
export const CAPTURE_MS = { min: 10, max: 200 } as const;

export const ErrorCode = {
  InvalidJson: 1,
  InvalidRequest: 2,
  UnknownType: 3,
  TooLarge: 4,
  AudioServerUnavailable: 5,
  NotFound: 6,
  Internal: 7,
  Busy: 8,
  NotImplemented: 9,
  Forbidden: 10,
} as const;
export type KnownErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

// ---------------------------------------------------------------------------------------------
// Extension -> host

export type RequestId = number;

export type ExtensionToHost =
  | { id: RequestId; type: 'version' }
  | { id: RequestId; type: 'processes'; browser_pid?: number | null }
  | { id: RequestId; type: 'cpu_sample'; window_ms: number; pids?: number[] | null }
  | { id: RequestId; type: 'subscribe'; topic: 'cpu'; interval_ms?: number | null; pids?: number[] | null }
  | { id: RequestId; type: 'subscribe'; topic: 'audio' }
  | { id: RequestId; type: 'unsubscribe'; subscription: number }
  | { id: RequestId; type: 'audio_server_info' }
  | { id: RequestId; type: 'audio_streams' }
  | { id: RequestId; type: 'doctor' }
  | { id: RequestId; type: 'latency_status' }
  /** What the machine reports it draws, measured over one second (answers after it). */
  | { id: RequestId; type: 'power' }
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
];

// ---------------------------------------------------------------------------------------------
// Host -> extension: payloads

export type BrowserFamily = 'chromium' | 'firefox';

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

/** Open set: unknown roles must be tolerated (shown as-is). micoff-proc's `Role` strings. */
export type KnownRole =
  | 'browser'
  | 'renderer'
  | 'extension_renderer'
  | 'gpu'
  | 'audio_service'
  | 'network_service'
  | 'storage_service'
  | 'utility'
  | 'zygote'
  | 'crashpad'
  | 'content'
  | 'rdd'
  | 'socket'
  | 'forkserver'
  | 'audio_server'
  | 'pipewire_pulse'
  | 'pipewire'
  | 'wireplumber'
  | 'other';
export type Role = KnownRole | (string & {});

/** The roles that are the audio server (PulseAudio, or pipewire-pulse and its companions). */
export const AUDIO_SERVER_ROLES: ReadonlySet<string> = new Set([
  'audio_server',
  'pipewire_pulse',
  'pipewire',
  'wireplumber',
]);

export interface ProcessInfo {
  pid: number;
  /** 0 when there is none. */
  ppid: number;
  comm: string;
  role: Role;
  family: BrowserFamily | null;
  /** A summary of the command line (at most 160 characters, ends with `…` when cut). */
  cmdline: string;
}

export interface BrowserRef {
  pid: number;
  family: BrowserFamily | 'unknown';
  source: 'parent' | 'explicit';
}

export interface Processes {
  browser: BrowserRef | null;
  processes: ProcessInfo[];
  audio_server: ProcessInfo[];
  /** Processes left out of `processes` (the deepest of the tree) to fit one frame. */
  processes_omitted: number;
}

/** The CPU figures micoff-proc's `ThreadRates` and `ProcessRates` share. Percentages are % of one core. */
export interface CpuRates {
  cpu_pct: number;
  user_pct: number;
  system_pct: number;
  run_time_ns: number | null;
  run_time_pct: number | null;
  /** Voluntary + involuntary context switches per second. */
  wakeups_per_s: number | null;
  voluntary_ctxt_per_s: number | null;
  involuntary_ctxt_per_s: number | null;
  read_syscalls_per_s: number | null;
  write_syscalls_per_s: number | null;
}

/** micoff-proc `ThreadRates`. Percentages are % of one core. */
export interface ThreadRates extends CpuRates {
  tid: number;
  comm: string;
  /**
   * The span (ms) these figures cover when the host read this thread less often than every window
   * (an idle "cold" thread): the time since its last read, 0 when it was not read in this window.
   * Absent: the report's `window_ms`.
   */
  window_ms?: number;
}

/** micoff-proc `ProcessRates`: cpu from the process's own stat; the rest summed over its threads. */
export interface ProcessRates extends CpuRates {
  pid: number;
  ppid: number;
  comm: string;
  role: Role;
  /** All threads of the process (also those trimmed from `threads`). */
  thread_count: number;
  threads: ThreadRates[];
}

/** micoff-proc `RoleTotals`: all processes sharing a role. */
export interface RoleTotals {
  role: Role;
  label: string;
  process_count: number;
  thread_count: number;
  cpu_pct: number;
  user_pct: number;
  system_pct: number;
  wakeups_per_s: number | null;
  read_syscalls_per_s: number | null;
  write_syscalls_per_s: number | null;
}

/** micoff-proc `CpuReport`. `window_ms` is the measured window. */
export interface CpuReport {
  window_ms: number;
  total_cpu_pct: number;
  processes: ProcessRates[];
  roles: RoleTotals[];
  gone_pids: number[];
  threads_omitted: number;
}

export type AudioServerKind = 'pulseaudio' | 'pipewire' | 'unknown';

/** micoff-pulse `ServerInfo` plus the host's `kind` and `pids`. */
export interface AudioServerInfo {
  server_string: string | null;
  socket_path: string | null;
  server_name: string;
  server_version: string;
  is_pipewire: boolean;
  pipewire_version: string | null;
  host_name: string | null;
  user_name: string | null;
  default_sink_name: string | null;
  default_source_name: string | null;
  sample_format: string;
  sample_rate_hz: number;
  channels: number;
  server_protocol_version: number | null;
  client_protocol_version: number;
  is_local: boolean | null;
  kind: AudioServerKind;
  pids: number[];
}

export type StreamKind = 'record' | 'playback';

/** Property list (`device.bus` -> `usb`, ...). */
export type Props = Record<string, string>;

/** micoff-pulse `Stream`: a record stream (source output) or playback stream (sink input). */
export interface AudioStream {
  kind: StreamKind;
  index: number;
  name: string | null;
  media_name: string | null;
  client_index: number | null;
  client_name: string | null;
  application_name: string | null;
  application_process_id: number | null;
  application_process_binary: string | null;
  /** Source (record) or sink (playback) index; 4294967295 while not linked yet. */
  device_index: number;
  device_name: string | null;
  device_description: string | null;
  /** The device's `device.bus`: `pci`, `usb`, `bluetooth`, ... */
  device_bus: string | null;
  device_class: string | null;
  device_props: Props;
  device_configured_latency_us: number | null;
  media_role: string | null;
  sample_format: string;
  sample_rate_hz: number;
  channels: number;
  buffer_latency_us: number;
  device_latency_us: number;
  fragment_size_bytes: number | null;
  fragment_latency_us: number | null;
  requested_latency_us: number | null;
  corked: boolean;
  muted: boolean;
  driver: string | null;
  resample_method: string | null;
  owner_module: number | null;
  props: Props;
}

/** micoff-doctor's report (`micoff-host doctor --json`). */
export interface DoctorReportFinding {
  /** Stable id (`hda_udelay`). */
  id: string;
  category: string;
  title: string;
  /** `failed`: the doctor could not check it (no audio server reachable). */
  status: 'ok' | 'worth_changing' | 'not_applicable' | 'failed' | (string & {});
  current: string;
  why: string;
  /** A shell command that changes it, runnable as it is (the popup offers it for copying). */
  fix: string | null;
  /** What to do, for a person (the edit to make, when it takes effect). Absent from hosts
   * older than the field. */
  hint?: string | null;
  details: string[];
}

export interface DoctorReport {
  schema_version: number;
  root: string;
  kernel_release: string;
  kernel_version: string | null;
  summary: { ok: number; worth_changing: number; not_applicable: number };
  findings: DoctorReportFinding[];
}

/** Which audio server `latency_status` found (pipewire-pulse is PipeWire's Pulse server). */
export type LatencyServerKind = 'pulseaudio' | 'pipewire_pulse' | 'unknown';
/** How micoff applies a capture latency: a pipewire-pulse rule for the browsers' capture clients (and
 * Chromium's playback client), or
 * PULSE_LATENCY_MSEC in the browsers' launch environment (PulseAudio, and the fallback). */
export type LatencyMechanism = 'pipewire_pulse_rule' | 'launch_environment';
/** A browser micoff configures. */
export type LatencyBrowser = 'chromium' | 'chrome' | 'firefox';

/** What micoff has configured, read back from its own files (null in `LatencyStatus.configured`
 * when nothing). */
export interface LatencyConfigured {
  capture_ms: number;
  mechanism: LatencyMechanism;
  browsers: LatencyBrowser[];
  /** The files micoff wrote. */
  files: string[];
  /** Every capture stream of those browsers gets at least `capture_ms` (less 5 ms); null while none is
   * open (nothing to prove it by). */
  in_effect: boolean | null;
}

/** Another reader of the same source whose lower latency the server grants instead (PulseAudio). */
export interface LatencyHolder {
  index: number;
  client_name: string | null;
  application_name: string | null;
  application_process_id: number | null;
  application_process_binary: string | null;
  latency_us: number;
}

/** A browser's record stream at the server, with what it asked and what it was granted. */
export interface LatencyStream {
  index: number;
  browser: LatencyBrowser;
  client_name: string | null;
  application_process_id: number | null;
  source_name: string | null;
  /** PULSE_LATENCY_MSEC in the stream's process environment (null: unset or unreadable). */
  launch_env_latency_ms: number | null;
  requested_latency_us: number | null;
  /** The stream's buffer latency as the server reports it (pactl "Buffer Latency"; 0 on pipewire-pulse). */
  granted_latency_us: number;
  /** The record fragment, where the server shows it (pipewire-pulse). */
  granted_fragment_us: number | null;
  /** What the stream actually gets: the fragment where known, else the buffer latency. */
  capture_latency_us: number;
  source_configured_latency_us: number | null;
  /** `pulse.min.frag` on the stream (a pipewire-pulse rule matched its client). */
  rule_min_frag: string | null;
  held_down_by: LatencyHolder[];
}

export interface LatencyStatus {
  server: { kind: LatencyServerKind; version: string | null; mechanism: LatencyMechanism };
  configured: LatencyConfigured | null;
  streams: LatencyStream[];
  /** What would need a restart for the configuration (or its removal) to be in effect. */
  needs_restart: string[];
  /** Explanations for a person (why not in effect, what to restart and how). */
  notes: string[];
}

export interface LatencySetResult {
  /** Null for a reset. */
  capture_ms: number | null;
  mechanism: LatencyMechanism | null;
  dry_run: boolean;
  /** Files written or removed (or that would be, with `dry_run`). */
  changed_files: string[];
  /** Files micoff left alone because it did not write them. */
  skipped_files: string[];
  needs_restart: string[];
  /** What happened, for a person. */
  message: string;
}

export interface SubscriptionResult {
  subscription: number;
}

export interface AudioStreams {
  streams: AudioStream[];
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
}

export type HostEvent =
  | { type: 'cpu'; report: CpuReport }
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

// ---------------------------------------------------------------------------------------------
// Host -> extension: envelope

export type HostToExtension =
  | { id: RequestId; type: 'result'; result: unknown }
  | { id: RequestId | null; type: 'error'; error: ErrorBody }
  | { type: 'event'; subscription: number; event: HostEvent };

// ---------------------------------------------------------------------------------------------
// Guards. Small combinators so every shape above has exactly one checker.

type Guard<T> = (v: unknown) => v is T;
type Rec = Record<string, unknown>;

const isRecord = (v: unknown): v is Rec => typeof v === 'object' && v !== null && !Array.isArray(v);
const isString: Guard<string> = (v): v is string => typeof v === 'string';
const isBool: Guard<boolean> = (v): v is boolean => typeof v === 'boolean';
const isNumber: Guard<number> = (v): v is number => typeof v === 'number' && Number.isFinite(v);
const isUint: Guard<number> = (v): v is number => Number.isSafeInteger(v) && (v as number) >= 0;
const isPid: Guard<number> = (v): v is number => isUint(v) && v >= 1 && v <= MAX_PID;
const nullable =
  <T>(g: Guard<T>): Guard<T | null> =>
  (v): v is T | null =>
    v === null || g(v);
/** Optional request field: absent, null or valid. */
const optional = (g: (v: unknown) => boolean, v: unknown): boolean => v === undefined || v === null || g(v);
const arrayOf =
  <T>(g: Guard<T>): Guard<T[]> =>
  (v): v is T[] =>
    Array.isArray(v) && v.every(g);
const oneOf =
  <T extends string>(...values: readonly T[]): Guard<T> =>
  (v): v is T =>
    typeof v === 'string' && (values as readonly string[]).includes(v);
const inRange = (v: unknown, min: number, max: number): boolean => isUint(v) && v >= min && v <= max;
const isLatencyBrowser = oneOf<LatencyBrowser>('chromium', 'chrome', 'firefox');
/** An object whose listed fields all pass their guards (extra fields are allowed). */
const shape =
  <T>(fields: { [K in keyof T]-?: Guard<T[K]> }): Guard<T> =>
  (v): v is T =>
    isRecord(v) && Object.entries(fields).every(([key, guard]) => (guard as Guard<unknown>)(v[key]));

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
      return true;
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

const isBrowserFamily = oneOf<BrowserFamily>('chromium', 'firefox');
const isStreamKind = oneOf<StreamKind>('record', 'playback');

export const isVersion = shape<Version>({
  host_version: isString,
  protocol_version: isUint,
  pid: isUint,
  origin: nullable(isString),
  extension_id: nullable(isString),
  browser_family: nullable(isBrowserFamily),
  chrome_extension_id: isString,
  firefox_extension_id: isString,
});

export const isProcessInfo = shape<ProcessInfo>({
  pid: isUint,
  ppid: isUint,
  comm: isString,
  role: isString,
  family: nullable(isBrowserFamily),
  cmdline: isString,
});

export const isProcesses = shape<Processes>({
  browser: nullable(
    shape<BrowserRef>({
      pid: isUint,
      family: oneOf<BrowserRef['family']>('chromium', 'firefox', 'unknown'),
      source: oneOf<BrowserRef['source']>('parent', 'explicit'),
    }),
  ),
  processes: arrayOf(isProcessInfo),
  audio_server: arrayOf(isProcessInfo),
  processes_omitted: isUint,
});

const nullableNumber = nullable(isNumber);

/** The guards of the figures threads and processes share (`CpuRates`). */
const cpuRatesFields: { [K in keyof CpuRates]-?: Guard<CpuRates[K]> } = {
  cpu_pct: isNumber,
  user_pct: isNumber,
  system_pct: isNumber,
  run_time_ns: nullable(isUint),
  run_time_pct: nullableNumber,
  wakeups_per_s: nullableNumber,
  voluntary_ctxt_per_s: nullableNumber,
  involuntary_ctxt_per_s: nullableNumber,
  read_syscalls_per_s: nullableNumber,
  write_syscalls_per_s: nullableNumber,
};

export const isThreadRates = shape<ThreadRates>({
  tid: isUint,
  comm: isString,
  window_ms: (v): v is number | undefined => v === undefined || isNumber(v),
  ...cpuRatesFields,
});

export const isProcessRates = shape<ProcessRates>({
  pid: isUint,
  ppid: isUint,
  comm: isString,
  role: isString,
  ...cpuRatesFields,
  thread_count: isUint,
  threads: arrayOf(isThreadRates),
});

export const isRoleTotals = shape<RoleTotals>({
  role: isString,
  label: isString,
  process_count: isUint,
  thread_count: isUint,
  cpu_pct: isNumber,
  user_pct: isNumber,
  system_pct: isNumber,
  wakeups_per_s: nullableNumber,
  read_syscalls_per_s: nullableNumber,
  write_syscalls_per_s: nullableNumber,
});

export const isCpuReport = shape<CpuReport>({
  window_ms: isNumber,
  total_cpu_pct: isNumber,
  processes: arrayOf(isProcessRates),
  roles: arrayOf(isRoleTotals),
  gone_pids: arrayOf(isUint),
  threads_omitted: isUint,
});

export const isAudioServerInfo = shape<AudioServerInfo>({
  server_string: nullable(isString),
  socket_path: nullable(isString),
  server_name: isString,
  server_version: isString,
  is_pipewire: isBool,
  pipewire_version: nullable(isString),
  host_name: nullable(isString),
  user_name: nullable(isString),
  default_sink_name: nullable(isString),
  default_source_name: nullable(isString),
  sample_format: isString,
  sample_rate_hz: isUint,
  channels: isUint,
  server_protocol_version: nullable(isUint),
  client_protocol_version: isUint,
  is_local: nullable(isBool),
  kind: oneOf<AudioServerKind>('pulseaudio', 'pipewire', 'unknown'),
  pids: arrayOf(isUint),
});

const isProps = (v: unknown): v is Props => isRecord(v) && Object.values(v).every(isString);

export const isAudioStream = shape<AudioStream>({
  kind: isStreamKind,
  index: isUint,
  name: nullable(isString),
  media_name: nullable(isString),
  client_index: nullable(isUint),
  client_name: nullable(isString),
  application_name: nullable(isString),
  application_process_id: nullable(isUint),
  application_process_binary: nullable(isString),
  device_index: isUint,
  device_name: nullable(isString),
  device_description: nullable(isString),
  device_bus: nullable(isString),
  device_class: nullable(isString),
  device_props: isProps,
  device_configured_latency_us: nullable(isUint),
  media_role: nullable(isString),
  sample_format: isString,
  sample_rate_hz: isUint,
  channels: isUint,
  buffer_latency_us: isUint,
  device_latency_us: isUint,
  fragment_size_bytes: nullable(isUint),
  fragment_latency_us: nullable(isUint),
  requested_latency_us: nullable(isUint),
  corked: isBool,
  muted: isBool,
  driver: nullable(isString),
  resample_method: nullable(isString),
  owner_module: nullable(isUint),
  props: isProps,
});

const isSubscriptionResult = shape<SubscriptionResult>({ subscription: isUint });

export const isDoctorReport = shape<DoctorReport>({
  schema_version: isUint,
  root: isString,
  kernel_release: isString,
  kernel_version: nullable(isString),
  summary: shape<DoctorReport['summary']>({ ok: isUint, worth_changing: isUint, not_applicable: isUint }),
  findings: arrayOf(
    shape<DoctorReportFinding>({
      id: isString,
      category: isString,
      title: isString,
      status: isString,
      current: isString,
      why: isString,
      fix: nullable(isString),
      hint: (v): v is string | null | undefined => v === undefined || v === null || isString(v),
      details: arrayOf(isString),
    }),
  ),
});

const isMechanism = oneOf<LatencyMechanism>('pipewire_pulse_rule', 'launch_environment');

export const isLatencyStatus = shape<LatencyStatus>({
  server: shape<LatencyStatus['server']>({
    kind: oneOf<LatencyServerKind>('pulseaudio', 'pipewire_pulse', 'unknown'),
    version: nullable(isString),
    mechanism: isMechanism,
  }),
  configured: nullable(
    shape<LatencyConfigured>({
      capture_ms: isUint,
      mechanism: isMechanism,
      browsers: arrayOf(isLatencyBrowser),
      files: arrayOf(isString),
      in_effect: nullable(isBool),
    }),
  ),
  streams: arrayOf(
    shape<LatencyStream>({
      index: isUint,
      browser: isLatencyBrowser,
      client_name: nullable(isString),
      application_process_id: nullable(isUint),
      source_name: nullable(isString),
      launch_env_latency_ms: nullable(isUint),
      requested_latency_us: nullable(isUint),
      granted_latency_us: isUint,
      granted_fragment_us: nullable(isUint),
      capture_latency_us: isUint,
      source_configured_latency_us: nullable(isUint),
      rule_min_frag: nullable(isString),
      held_down_by: arrayOf(
        shape<LatencyHolder>({
          index: isUint,
          client_name: nullable(isString),
          application_name: nullable(isString),
          application_process_id: nullable(isUint),
          application_process_binary: nullable(isString),
          latency_us: isUint,
        }),
      ),
    }),
  ),
  needs_restart: arrayOf(isString),
  notes: arrayOf(isString),
});

export const isLatencySetResult = shape<LatencySetResult>({
  capture_ms: nullable(isUint),
  mechanism: nullable(isMechanism),
  dry_run: isBool,
  changed_files: arrayOf(isString),
  skipped_files: arrayOf(isString),
  needs_restart: arrayOf(isString),
  message: isString,
});

export const isPowerReading = shape<PowerReading>({
  source: nullable(oneOf<'rapl' | 'battery'>('rapl', 'battery')),
  watts: nullable(isNumber),
  busy_cores: nullable(isNumber),
  watts_per_busy_core: nullable(isNumber),
  window_ms: isNumber,
  unavailable: arrayOf(isString),
});

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
