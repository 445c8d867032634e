// A CpuReport (the whole browser tree + audio server, every thread) -> the few rows the popup shows:
// totals, and the busiest threads that do audio work.
import { AUDIO_SERVER_ROLES, type CpuReport } from './protocol.ts';

export interface CpuRow {
  pid: number;
  tid: number;
  role: string;
  thread: string;
  cpu_pct: number;
  wakeups_per_s: number;
}

export interface CpuView {
  window_ms: number;
  browser_cpu_pct: number;
  audio_server_cpu_pct: number;
  /** The audio path: the audio server, Chromium's audio service, and the audio threads of every other
   * process (capture, processing, WebRTC's audio, libpulse's mainloop). */
  audio_path_cpu_pct: number;
  threads: CpuRow[];
}

/** Thread names (Linux `comm`, 15 chars) doing audio work: Chromium `AudioInputDevic`, `AudioOutputDevi`,
 * `AudioProcessing`, `ThreadPoolAudio`, `WebRTC_W_and_N`, `threaded-ml` (libpulse); Firefox
 * `GraphRunner`, `AudioIP~allback`, `AudioIP~ver RPC`, `cubeb*`. */
export const AUDIO_THREAD = /audio|webrtc|threaded-ml|graphrunner|cubeb|pulse|capture|media/i;
/** Processes whose every thread counts as audio work: the audio server and Chromium's audio service. */
const isAudioProcess = (role: string): boolean => role === 'audio_service' || AUDIO_SERVER_ROLES.has(role);

/** The audio path's CPU (% of one core): audio server + audio service processes whole, the audio
 * threads of every other process. `runTime`: on-CPU time from schedstat where the host has it
 * (nanosecond resolution; what the CPU comparisons use), else utime+stime. */
export function audioPathCpuPct(report: CpuReport, runTime = false): number {
  const pct = (x: { cpu_pct: number; run_time_pct: number | null }) =>
    runTime ? (x.run_time_pct ?? x.cpu_pct) : x.cpu_pct;
  let sum = 0;
  for (const p of report.processes) {
    if (isAudioProcess(p.role)) sum += pct(p);
    else for (const t of p.threads) if (AUDIO_THREAD.test(t.comm)) sum += pct(t);
  }
  return sum;
}

export function cpuView(report: CpuReport, limit = 8): CpuView {
  let browser = 0;
  let server = 0;
  const rows: CpuRow[] = [];
  for (const p of report.processes) {
    if (AUDIO_SERVER_ROLES.has(p.role)) server += p.cpu_pct;
    else browser += p.cpu_pct;
    const all = isAudioProcess(p.role);
    for (const t of p.threads) {
      if (!all && !AUDIO_THREAD.test(t.comm)) continue;
      rows.push({
        pid: p.pid,
        tid: t.tid,
        role: p.role,
        thread: t.comm,
        cpu_pct: t.cpu_pct,
        wakeups_per_s: t.wakeups_per_s ?? 0,
      });
    }
  }
  rows.sort((a, b) => b.cpu_pct - a.cpu_pct || b.wakeups_per_s - a.wakeups_per_s || a.tid - b.tid);
  return {
    window_ms: report.window_ms,
    browser_cpu_pct: browser,
    audio_server_cpu_pct: server,
    audio_path_cpu_pct: audioPathCpuPct(report),
    threads: rows.slice(0, limit),
  };
}
