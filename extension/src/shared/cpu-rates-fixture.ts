// CPU rates for unit tests (cpu-view.test.ts, scripts/demo/report.test.ts): a thread and a process as
// the host reports them, with the fields a test does not look at zero or null.
import type { ProcessRates, ThreadRates } from './protocol.ts';

/** A thread using `cpu` % (all user time), woken `wakeups` times a second (all voluntary). */
export const threadRates = (tid: number, comm: string, cpu: number, wakeups = 0): ThreadRates => ({
  tid,
  comm,
  cpu_pct: cpu,
  user_pct: cpu,
  system_pct: 0,
  run_time_ns: null,
  run_time_pct: null,
  wakeups_per_s: wakeups,
  voluntary_ctxt_per_s: wakeups,
  involuntary_ctxt_per_s: 0,
  read_syscalls_per_s: null,
  write_syscalls_per_s: null,
});

/** A process of `role` whose CPU is its threads' sum; `fields` sets any other field. */
export const processRates = (
  pid: number,
  role: string,
  threads: ThreadRates[],
  fields: Partial<ProcessRates> = {},
): ProcessRates => ({
  pid,
  ppid: 1,
  comm: 'x',
  role,
  cpu_pct: threads.reduce((a, t) => a + t.cpu_pct, 0),
  user_pct: 0,
  system_pct: 0,
  run_time_ns: null,
  run_time_pct: null,
  wakeups_per_s: null,
  voluntary_ctxt_per_s: null,
  involuntary_ctxt_per_s: null,
  read_syscalls_per_s: null,
  write_syscalls_per_s: null,
  thread_count: threads.length,
  threads,
  ...fields,
});
