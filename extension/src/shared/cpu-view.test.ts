import assert from 'node:assert/strict';
import { test } from 'node:test';
import { processRates, threadRates } from './cpu-rates-fixture.ts';
import { cpuView } from './cpu-view.ts';
import type { CpuReport, ProcessRates, ThreadRates } from './protocol.ts';

const thread = (tid: number, comm: string, cpu_pct: number): ThreadRates =>
  threadRates(tid, comm, cpu_pct, tid);
const proc = (pid: number, role: string, threads: ThreadRates[]): ProcessRates =>
  processRates(pid, role, threads);

test('cpuView: totals and audio threads, busiest first', () => {
  const report: CpuReport = {
    window_ms: 1001,
    total_cpu_pct: 0,
    roles: [],
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
      proc(50, 'wireplumber', [thread(51, 'wireplumber', 0.25)]),
    ],
  };
  const v = cpuView(report, 4);
  assert.equal(v.browser_cpu_pct, 15.5);
  assert.equal(v.audio_server_cpu_pct, 2.75);
  // The audio path: server (2.75) + audio service (3.5) + the renderer's audio threads (2 + 1); the
  // renderer's main thread and the GPU process are not audio work.
  assert.equal(v.audio_path_cpu_pct, 9.25);
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
