//! The history itself and the definition of what a release saved (docs/design/popup-savings.md,
//! "CPU-seconds saved: the definition"), over samples and phase changes given with their times.
//! Pure: the watch ([`super::watch`]) feeds it; `native-host/tests/history.rs` runs recorded calls
//! through it and compares with what the extension's own history (before the host kept it) made of
//! them.

use crate::protocol::{
    CpuPoint, HistorySnapshot, Mark, MarkKind, Phase, PointPhase, ReleasedInterval,
};

/// How far back the history reaches.
pub const HISTORY_SPAN_MS: u64 = 5 * 60_000;
/// How far back before a mute the unmuted rate is averaged.
pub const BASELINE_MS: u64 = 10_000;

/// 5 minutes of audio-path samples, the marks and released intervals on them, and the CPU-seconds
/// saved since it was created.
#[derive(Debug, Clone)]
pub struct CpuHistory {
    span_ms: u64,
    points: Vec<CpuPoint>,
    marks: Vec<Mark>,
    intervals: Vec<ReleasedInterval>,
    current: Phase,
    changed_at_ms: u64,
    /// CPU-seconds of intervals that scrolled out of the span (still part of the total).
    dropped_cpu_s: f64,
}

impl Default for CpuHistory {
    fn default() -> Self {
        Self::new(HISTORY_SPAN_MS)
    }
}

impl CpuHistory {
    pub fn new(span_ms: u64) -> Self {
        Self {
            span_ms,
            points: Vec::new(),
            marks: Vec::new(),
            intervals: Vec::new(),
            current: Phase::Idle,
            changed_at_ms: 0,
            dropped_cpu_s: 0.0,
        }
    }

    pub fn phase(&self) -> Phase {
        self.current
    }

    /// The phase changed at `t_ms`: marks a mute (capturing -> muted), a release (entering
    /// `released`, which opens an interval with its baseline) and an unmute (muted -> capturing).
    pub fn set_phase(&mut self, t_ms: u64, next: Phase) {
        let prev = self.current;
        if next == prev {
            return;
        }
        if prev == Phase::Capturing && next.is_muted() {
            self.mark(t_ms, MarkKind::Mute);
        }
        if next == Phase::Released {
            self.mark(t_ms, MarkKind::Release);
            let baseline_pct = self.baseline();
            self.intervals.push(ReleasedInterval {
                start_ms: t_ms,
                end_ms: None,
                baseline_pct,
                saved_cpu_s: 0.0,
            });
        }
        if prev == Phase::Released {
            if let Some(open) = self.intervals.last_mut().filter(|i| i.end_ms.is_none()) {
                open.end_ms = Some(t_ms);
            }
        }
        if prev.is_muted() && next == Phase::Capturing {
            self.mark(t_ms, MarkKind::Unmute);
        }
        self.current = next;
        self.changed_at_ms = t_ms;
        self.trim(t_ms);
    }

    /// One sample: the audio path's CPU `pct` over the `window_ms` ending at `t_ms`. A window that
    /// saw a phase change is a `transition` and counts nowhere. Returns the CPU-seconds it saved
    /// (negative when it ran above the baseline: noise averages out instead of adding up).
    pub fn add_sample(&mut self, t_ms: u64, pct: f64, window_ms: f64) -> f64 {
        let phase = if self.changed_at_ms as f64 > t_ms as f64 - window_ms {
            PointPhase::Transition
        } else {
            PointPhase::from(self.current)
        };
        self.points.push(CpuPoint {
            t_ms,
            pct,
            window_ms,
            phase,
        });
        let mut saved = 0.0;
        if phase == PointPhase::Released {
            if let Some(open) = self.intervals.last_mut().filter(|i| i.end_ms.is_none()) {
                if let Some(baseline) = open.baseline_pct {
                    saved = ((baseline - pct) / 100.0) * (window_ms / 1000.0);
                    open.saved_cpu_s += saved;
                }
            }
        }
        self.trim(t_ms);
        saved
    }

    /// CPU-seconds saved since this history began, scrolled-out intervals included.
    pub fn saved_cpu_s(&self) -> f64 {
        let in_span = self.intervals.iter().fold(0.0, |s, i| s + i.saved_cpu_s);
        in_span + self.dropped_cpu_s
    }

    /// Everything, as of `now_ms` (points are trimmed as samples and phase changes come, not here).
    pub fn snapshot(&self, now_ms: u64) -> HistorySnapshot {
        self.snapshot_with(now_ms, self.points.clone())
    }

    /// As [`Self::snapshot`] with only the latest point: what a subscriber that has the rest needs
    /// after a sample.
    pub fn snapshot_latest(&self, now_ms: u64) -> HistorySnapshot {
        self.snapshot_with(now_ms, self.points.last().cloned().into_iter().collect())
    }

    fn snapshot_with(&self, now_ms: u64, points: Vec<CpuPoint>) -> HistorySnapshot {
        HistorySnapshot {
            now_ms,
            span_ms: self.span_ms,
            points,
            marks: self.marks.clone(),
            released: self.intervals.clone(),
            saved_cpu_s: self.saved_cpu_s(),
            phase: self.current,
        }
    }

    /// The mean of the capturing samples of the last [`BASELINE_MS`] before the latest one.
    fn baseline(&self) -> Option<f64> {
        let last = self
            .points
            .iter()
            .rev()
            .find(|p| p.phase == PointPhase::Capturing)?;
        let from = last.t_ms as f64 - BASELINE_MS as f64;
        let recent: Vec<f64> = self
            .points
            .iter()
            .filter(|p| p.phase == PointPhase::Capturing && p.t_ms as f64 > from)
            .map(|p| p.pct)
            .collect();
        Some(recent.iter().fold(0.0, |s, p| s + p) / recent.len() as f64)
    }

    fn mark(&mut self, t_ms: u64, kind: MarkKind) {
        self.marks.push(Mark { t_ms, kind });
    }

    fn trim(&mut self, t_ms: u64) {
        let from = t_ms.saturating_sub(self.span_ms);
        self.points.retain(|p| p.t_ms >= from);
        self.marks.retain(|m| m.t_ms >= from);
        while let Some(first) = self.intervals.first() {
            match first.end_ms {
                Some(end) if end < from => {
                    self.dropped_cpu_s += first.saved_cpu_s;
                    self.intervals.remove(0);
                }
                _ => break,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn approx(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn no_baseline_no_saving_transitions_count_nowhere_old_points_scroll_out() {
        let mut h = CpuHistory::default();
        let mut now = 1_000_000;
        h.set_phase(now, Phase::Released); // released before any unmuted sample was seen
        now += 1000;
        assert_eq!(h.add_sample(now, 1.0, 1000.0), 0.0);
        assert_eq!(h.snapshot(now).released[0].baseline_pct, None);
        now += 500;
        h.set_phase(now, Phase::Capturing);
        now += 500;
        h.add_sample(now, 9.0, 1000.0); // the window saw the unmute
        assert_eq!(
            h.snapshot(now).points.last().map(|p| p.phase),
            Some(PointPhase::Transition)
        );
        now += 1000;
        h.add_sample(now, 3.0, 1000.0);
        h.set_phase(now, Phase::Released); // straight from capturing: mute and release marks
        assert_eq!(
            h.snapshot(now).released.last().and_then(|r| r.baseline_pct),
            Some(3.0)
        );
        let kinds: Vec<MarkKind> = h.snapshot(now).marks.iter().map(|m| m.kind).collect();
        assert_eq!(
            kinds,
            [
                MarkKind::Release,
                MarkKind::Unmute,
                MarkKind::Mute,
                MarkKind::Release
            ]
        );
        now += 1000;
        assert!(approx(h.add_sample(now, 5.0, 1000.0), -0.02)); // above the baseline: counts against
        now += HISTORY_SPAN_MS + 1;
        h.set_phase(now, Phase::Capturing);
        let s = h.snapshot(now);
        assert!(s.points.is_empty());
        assert_eq!(s.released.len(), 1); // ended just now: still on the chart
        assert!(approx(s.saved_cpu_s, -0.02));
        now += HISTORY_SPAN_MS + 1;
        h.set_phase(now, Phase::Released);
        let s = h.snapshot(now);
        assert_eq!(s.released.len(), 1); // the old interval scrolled out, its saving stays
        assert!(approx(s.saved_cpu_s, -0.02));
    }

    #[test]
    fn a_release_delay_is_not_in_the_baseline_and_only_whole_released_windows_count() {
        let mut h = CpuHistory::default();
        let mut now = 50_000;
        h.set_phase(now, Phase::Capturing);
        for pct in [10.0, 12.0, 11.0] {
            now += 5000;
            h.add_sample(now, pct, 5000.0);
        }
        now += 100;
        h.set_phase(now, Phase::Muted);
        now += 5000;
        h.add_sample(now, 40.0, 5000.0); // muted, the device still open: not in the baseline
        now += 100;
        h.set_phase(now, Phase::Released);
        // The baseline: capturing samples within 10 s before the last one (12 and 11, not 10).
        assert_eq!(h.snapshot(now).released[0].baseline_pct, Some(11.5));
        now += 1000;
        assert_eq!(h.add_sample(now, 1.5, 1500.0), 0.0); // its window saw the release
        now += 1000;
        assert!(approx(h.add_sample(now, 1.5, 1000.0), 0.1));
        assert!(approx(h.saved_cpu_s(), 0.1));
    }
}
