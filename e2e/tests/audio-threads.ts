// The audio threads of a CPU report, per `role:comm`, for the capture-latency CPU specs' raw samples:
// what each thread of the audio path cost (on-CPU % of one core) and how often it woke.
import type { CpuReport } from '../../extension/src/shared/protocol.ts';

/** `role:comm` -> [on-CPU %, wakeups/s], threads of the same name in one role summed. */
export type AudioThreads = Record<string, [number, number]>;

/** The audio threads (server, audio service, WebRTC, libpulse's `threaded-ml`) that did anything. */
export function audioThreads(r: CpuReport): AudioThreads {
  const out: AudioThreads = {};
  for (const p of r.processes) {
    for (const t of p.threads) {
      const pct = t.run_time_pct ?? t.cpu_pct;
      if (pct < 0.05 && (t.wakeups_per_s ?? 0) < 5) continue;
      if (!/audio|pulse|pipewire|threaded-ml|webrtc|data-loop|wireplumber/i.test(`${p.role} ${t.comm}`))
        continue;
      const key = `${p.role}:${t.comm}`;
      const prev = out[key] ?? [0, 0];
      out[key] = [Math.round((prev[0] + pct) * 100) / 100, Math.round(prev[1] + (t.wakeups_per_s ?? 0))];
    }
  }
  return out;
}
