// The audio path's CPU over the last minutes, the mute / release / unmute moments on it, and the CPU
// micoff saved (docs/design/popup-savings.md has the definition). Pure: the popup hub (popup-hub.ts)
// feeds it the host's cpu reports and the tabs' phase, and keeps the saved CPU across background
// restarts (savings-store.ts); the popup draws `snapshot()`.
import type {
  CpuPoint,
  HistorySnapshot,
  Mark,
  MarkKind,
  Phase,
  ReleasedInterval,
  TabReleaseView,
} from '../shared/messages/popup-background.ts';

export const HISTORY_SPAN_MS = 5 * 60_000;
/** How far back before a mute the unmuted rate is averaged. */
export const BASELINE_MS = 10_000;

export function phaseOf(views: Iterable<TabReleaseView>): Phase {
  let phase: Phase = 'idle';
  const rank: Phase[] = ['capturing', 'muted', 'kept', 'released', 'idle'];
  for (const v of views) {
    const p: Phase =
      v.state === 'capturing'
        ? v.muted
          ? 'muted'
          : 'capturing'
        : v.state === 'released'
          ? 'released'
          : 'kept';
    if (rank.indexOf(p) < rank.indexOf(phase)) phase = p;
  }
  return phase;
}

const isMuted = (p: Phase) => p === 'muted' || p === 'kept' || p === 'released';

export class CpuHistory {
  private points: CpuPoint[] = [];
  private marks: Mark[] = [];
  private intervals: ReleasedInterval[] = [];
  private current: Phase = 'idle';
  private changedAt = 0;
  private savedBefore = 0;

  constructor(
    private readonly now: () => number,
    private readonly spanMs = HISTORY_SPAN_MS,
  ) {}

  /** CPU-seconds saved in earlier lives of the background (storage.session). */
  restore(savedCpuS: number): void {
    this.savedBefore = savedCpuS;
  }

  setPhase(next: Phase): void {
    const prev = this.current;
    if (next === prev) return;
    const t = this.now();
    if (!isMuted(prev) && isMuted(next) && prev === 'capturing') this.mark(t, 'mute');
    if (next === 'released') {
      this.mark(t, 'release');
      this.intervals.push({ start_ms: t, end_ms: null, baseline_pct: this.baseline(), saved_cpu_s: 0 });
    }
    if (prev === 'released') {
      const open = this.intervals.at(-1);
      if (open && open.end_ms === null) open.end_ms = t;
    }
    if (isMuted(prev) && next === 'capturing') this.mark(t, 'unmute');
    this.current = next;
    this.changedAt = t;
    this.trim(t);
  }

  /** One report: the audio-path CPU over the `window_ms` ending now. Returns the CPU-seconds it saved. */
  addSample(pct: number, windowMs: number): number {
    const t = this.now();
    const phase = this.changedAt > t - windowMs ? 'transition' : this.current;
    this.points.push({ t_ms: t, pct, window_ms: windowMs, phase });
    let saved = 0;
    const open = this.intervals.at(-1);
    if (phase === 'released' && open && open.end_ms === null && open.baseline_pct !== null) {
      saved = ((open.baseline_pct - pct) / 100) * (windowMs / 1000);
      open.saved_cpu_s += saved;
    }
    this.trim(t);
    return saved;
  }

  savedCpuS(): number {
    return this.savedBefore + this.intervals.reduce((s, i) => s + i.saved_cpu_s, 0) + this.dropped;
  }

  snapshot(): HistorySnapshot {
    return {
      now_ms: this.now(),
      span_ms: this.spanMs,
      points: [...this.points],
      marks: [...this.marks],
      released: this.intervals.map((i) => ({ ...i })),
      saved_cpu_s: this.savedCpuS(),
      phase: this.current,
    };
  }

  /** The capturing samples of the last BASELINE_MS before the latest mute (or now). */
  private baseline(): number | null {
    const capturing = this.points.filter((p) => p.phase === 'capturing');
    const last = capturing.at(-1);
    if (!last) return null;
    const recent = capturing.filter((p) => p.t_ms > last.t_ms - BASELINE_MS);
    return recent.reduce((s, p) => s + p.pct, 0) / recent.length;
  }

  private mark(t: number, kind: MarkKind): void {
    this.marks.push({ t_ms: t, kind });
  }

  /** CPU-seconds of intervals that scrolled out of the span (still part of the total). */
  private dropped = 0;

  private trim(t: number): void {
    const from = t - this.spanMs;
    while (this.points[0] && this.points[0].t_ms < from) this.points.shift();
    while (this.marks[0] && this.marks[0].t_ms < from) this.marks.shift();
    while (this.intervals[0] && this.intervals[0].end_ms !== null && this.intervals[0].end_ms < from) {
      this.dropped += this.intervals[0].saved_cpu_s;
      this.intervals.shift();
    }
  }
}
