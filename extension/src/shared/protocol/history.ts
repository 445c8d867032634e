// The audio path's CPU history (PROTOCOL.md "History"; the host keeps it: native-host/crates/micoff-native/
// src/history/; docs/design/popup-savings.md).

/** What the microphones of all tabs are doing, folded into one (highest first): a tab capturing
 * unmuted; muted but still open (the release delay); kept open while muted; every one released. */
export type Phase = 'capturing' | 'muted' | 'kept' | 'released' | 'idle';
export const PHASES: readonly Phase[] = ['capturing', 'muted', 'kept', 'released', 'idle'];

export interface CpuPoint {
  /** End of the sample's window (ms since the epoch, on the host's clock). */
  t_ms: number;
  /** Audio-path CPU over the window, % of one core. */
  pct: number;
  window_ms: number;
  /** The phase throughout the window; 'transition' when it changed inside it. */
  phase: Phase | 'transition';
}

export type MarkKind = 'mute' | 'release' | 'unmute';
export interface Mark {
  t_ms: number;
  kind: MarkKind;
}

export interface ReleasedInterval {
  start_ms: number;
  /** null while it lasts. */
  end_ms: number | null;
  /** Mean audio-path CPU of the capturing samples in the 10 s before the mute; null when none. */
  baseline_pct: number | null;
  /** CPU-seconds saved over this interval so far (0 without a baseline). */
  saved_cpu_s: number;
}

export interface HistorySnapshot {
  now_ms: number;
  span_ms: number;
  points: CpuPoint[];
  marks: Mark[];
  released: ReleasedInterval[];
  /** Since this host started (the extension adds what earlier hosts saved). */
  saved_cpu_s: number;
  phase: Phase;
}

/** The `phase` result. */
export interface PhaseResult {
  saved_cpu_s: number;
}
