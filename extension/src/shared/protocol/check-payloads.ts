// The payloads the host sends, checked (everything the host sends is `unknown` until checked): one
// checker per shape of processes.ts, cpu-report.ts, audio.ts, doctor-report.ts, latency.ts,
// history.ts, and replies.ts's Version and PowerReading.
import type { AudioServerInfo, AudioServerKind, AudioStream, Props } from './audio.ts';
import type { CpuRates, CpuReport, ProcessRates, RoleTotals, ThreadRates } from './cpu-report.ts';
import type { DoctorReport, DoctorReportFinding } from './doctor-report.ts';
import {
  arrayOf,
  type Guard,
  isBool,
  isLatencyBrowser,
  isNumber,
  isPhase,
  isRecord,
  isStreamKind,
  isString,
  isUint,
  nullable,
  oneOf,
  shape,
} from './guard-kit.ts';
import {
  type CpuPoint,
  type HistorySnapshot,
  type Mark,
  type MarkKind,
  PHASES,
  type ReleasedInterval,
} from './history.ts';
import type {
  LatencyConfigured,
  LatencyHolder,
  LatencyMechanism,
  LatencyServerKind,
  LatencySetResult,
  LatencyStatus,
  LatencyStream,
} from './latency.ts';
import type { BrowserFamily, BrowserRef, Processes, ProcessInfo } from './processes.ts';
import type { PowerReading, Version } from './replies.ts';

const isBrowserFamily = oneOf<BrowserFamily>('chromium', 'firefox');

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

export const isHistorySnapshot = shape<HistorySnapshot>({
  now_ms: isUint,
  span_ms: isUint,
  points: arrayOf(
    shape<CpuPoint>({
      t_ms: isUint,
      pct: isNumber,
      window_ms: isNumber,
      phase: oneOf<CpuPoint['phase']>(...PHASES, 'transition'),
    }),
  ),
  marks: arrayOf(shape<Mark>({ t_ms: isUint, kind: oneOf<MarkKind>('mute', 'release', 'unmute') })),
  released: arrayOf(
    shape<ReleasedInterval>({
      start_ms: isUint,
      end_ms: nullable(isUint),
      baseline_pct: nullableNumber,
      saved_cpu_s: isNumber,
    }),
  ),
  saved_cpu_s: isNumber,
  phase: isPhase,
});
