import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { CpuReport, ProcessRates, ThreadRates } from '../../e2e/rig/host.ts';
import { buildRows, formatTable, type PhaseResult } from './report.ts';

const thread = (tid: number, comm: string, cpu: number, wakeups = 0): ThreadRates => ({
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
const proc = (pid: number, role: string, threads: ThreadRates[]): ProcessRates => ({
  pid,
  ppid: 1,
  comm: role === 'audio_server' ? 'pulseaudio' : 'chromium',
  role,
  cpu_pct: threads.reduce((a, t) => a + t.cpu_pct, 0),
  user_pct: 0,
  system_pct: 0,
  run_time_ns: null,
  run_time_pct: null,
  wakeups_per_s: threads.reduce((a, t) => a + (t.wakeups_per_s ?? 0), 0),
  voluntary_ctxt_per_s: null,
  involuntary_ctxt_per_s: null,
  read_syscalls_per_s: null,
  write_syscalls_per_s: null,
  thread_count: threads.length,
  threads,
});
const report = (processes: ProcessRates[]): CpuReport => ({
  window_ms: 1000,
  total_cpu_pct: 0,
  processes,
  roles: [],
  gone_pids: [],
  threads_omitted: 0,
});
const phase = (id: string, processes: ProcessRates[]): PhaseResult => ({
  id,
  label: id,
  window_s: 1,
  report: report(processes),
});

test('rows: processes by role, audio threads under them, totals per phase', () => {
  const phases = [
    phase('unmuted', [
      proc(10, 'browser', [thread(10, 'chromium', 0.2)]),
      proc(20, 'renderer', [thread(21, 'AudioInputDevic', 2, 100), thread(22, 'Compositor', 0)]),
      proc(30, 'audio_server', [thread(30, 'pulseaudio', 1.5, 600)]),
    ]),
    phase('muted', [
      proc(20, 'renderer', [thread(21, 'AudioInputDevic', 1.9, 99)]),
      proc(30, 'audio_server', []),
    ]),
  ];
  const rows = buildRows(phases);
  assert.deepEqual(
    rows.map((r) => `${r.kind}:${r.name}`),
    [
      'process:chromium',
      'thread:AudioInputDevic',
      'process:chromium',
      'process:pulseaudio',
      'thread:pulseaudio',
      'total:browser total',
      'total:audio server total',
      'total:total',
    ],
  );
  assert.equal(rows[0]?.role, 'renderer');
  assert.deepEqual(rows[1]?.values.muted, { cpu_pct: 1.9, wakeups_per_s: 99 });
  assert.equal(rows[2]?.values.muted, null, 'the browser process is missing in the muted phase');
  const total = rows.at(-1);
  assert.equal(total?.values.unmuted?.cpu_pct, 3.7);
  assert.equal(total?.values.unmuted?.wakeups_per_s, 700);

  const table = formatTable(phases, rows).split('\n');
  assert.match(
    table[0] ?? '',
    /process \/ thread\s+role\s+cpu% unmuted\s+cpu% muted\s+wakeups\/s unmuted\s+wakeups\/s muted/,
  );
  assert.match(
    table.find((l) => l.includes('AudioInputDevic')) ?? '',
    /AudioInputDevic \[21\]\s+renderer\s+2\.0\s+1\.9\s+100\s+99/,
  );
  assert.ok(table.some((l) => /^chromium \[10\].*-/.test(l)));
});
