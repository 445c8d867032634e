// Host -> extension: a CPU report (`cpu_sample`, `cpu` and `history` events; micoff-proc's `CpuReport`).
import type { Role } from './processes.ts';

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
