// The soak benchmark's figures (scripts/soak.ts): one interval from two stats snapshots of the call,
// and the table. Pure, so the unit test checks them.
import type { MeetingStats } from '../../e2e/rig/meeting-page.ts';

export interface Interval {
  /** Seconds since the call came up, at the end of the interval. */
  t_s: number;
  wall_s: number;
  captured_s: number;
  /** (wall - captured) / wall, percent: audio missing from the track. */
  capture_shortfall_pct: number;
  concealed_pct: number | null;
  concealment_events: number | null;
  audio_path_cpu_pct: number;
  granted_latency_ms: (number | null)[];
}

/** One interval's capture and receiver figures from two stats snapshots taken `wallS` apart. */
export function intervalOf(
  a: MeetingStats,
  b: MeetingStats,
  wallS: number,
): Pick<
  Interval,
  'wall_s' | 'captured_s' | 'capture_shortfall_pct' | 'concealed_pct' | 'concealment_events'
> {
  const captured = (b.source?.totalSamplesDuration ?? 0) - (a.source?.totalSamplesDuration ?? 0);
  const received = (b.inbound?.totalSamplesReceived ?? 0) - (a.inbound?.totalSamplesReceived ?? 0);
  const concealed = (b.inbound?.concealedSamples ?? 0) - (a.inbound?.concealedSamples ?? 0);
  const ea = a.inbound?.concealmentEvents;
  const eb = b.inbound?.concealmentEvents;
  return {
    wall_s: wallS,
    captured_s: captured,
    capture_shortfall_pct: wallS > 0 ? (100 * Math.max(0, wallS - captured)) / wallS : 0,
    concealed_pct: received > 0 ? (100 * concealed) / received : null,
    concealment_events: typeof ea === 'number' && typeof eb === 'number' ? eb - ea : null,
  };
}

export function formatTable(run: { server: string; version: string; intervals: Interval[] }): string {
  const head = 't (s)  captured/wall (s)  shortfall %  concealed %  events  audio path CPU %  granted ms';
  const rows = run.intervals.map((r) =>
    [
      String(r.t_s).padStart(5),
      `${r.captured_s.toFixed(2)}/${r.wall_s.toFixed(2)}`.padStart(17),
      r.capture_shortfall_pct.toFixed(2).padStart(11),
      (r.concealed_pct?.toFixed(3) ?? '-').padStart(11),
      String(r.concealment_events ?? '-').padStart(6),
      r.audio_path_cpu_pct.toFixed(1).padStart(16),
      r.granted_latency_ms
        .map((g) => g ?? '?')
        .join('/')
        .padStart(10),
    ].join('  '),
  );
  return [`${run.server} ${run.version}`, head, ...rows].join('\n');
}
