import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cpuView } from './cpu-view.ts';
import type { CpuReport, ProcessCpu, ThreadCpu } from './protocol.ts';

const thread = (tid: number, name: string, cpu_pct: number): ThreadCpu => ({
  tid,
  name,
  cpu_pct,
  usr_pct: cpu_pct,
  sys_pct: 0,
  run_time_ns: null,
  wakeups_per_s: tid,
  involuntary_per_s: 0,
  read_syscalls_per_s: null,
  write_syscalls_per_s: null,
});
const proc = (pid: number, role: string, threads: ThreadCpu[]): ProcessCpu => ({
  pid,
  ppid: 1,
  name: 'x',
  role,
  cpu_pct: threads.reduce((a, t) => a + t.cpu_pct, 0),
  usr_pct: 0,
  sys_pct: 0,
  wakeups_per_s: 0,
  threads,
});

test('cpuView: totals and audio threads, busiest first', () => {
  const report: CpuReport = {
    window_ms: 1000,
    elapsed_ms: 1001,
    total_cpu_pct: 0,
    threads_omitted: 0,
    gone_pids: [],
    processes: [
      proc(10, 'renderer', [
        thread(11, 'AudioInputDevic', 2),
        thread(12, 'CrRendererMain', 5),
        thread(13, 'WebRTC_W_and_N', 1),
      ]),
      proc(20, 'audio_service', [thread(21, 'AudioProcessing', 3), thread(22, 'Chrome_ChildIOT', 0.5)]),
      proc(30, 'audio_server', [thread(31, 'pulseaudio', 2.5)]),
      proc(40, 'gpu', [thread(41, 'VizCompositorTh', 4)]),
    ],
  };
  const v = cpuView(report, 4);
  assert.equal(v.browser_cpu_pct, 15.5);
  assert.equal(v.audio_server_cpu_pct, 2.5);
  assert.deepEqual(
    v.threads.map((t) => `${t.role}:${t.thread}`),
    [
      'audio_service:AudioProcessing',
      'audio_server:pulseaudio',
      'renderer:AudioInputDevic',
      'renderer:WebRTC_W_and_N',
    ],
  );
});
