//! [`SteadyFlow`]: when a stream's data flows steadily, from a growing count of its transfers.
//! Our client waits for it before `ready`; the parent waits for it on parec/pacat.

/// Decides when a stream's data flows steadily, from a growing count of its transfers (our
/// callbacks, or parec's writes): two intervals in a row, each of max(200 ms, 3 periods), with at
/// least half the expected transfers. The first data is not enough: after a stream opens, an
/// idle null sink can send a short burst and then stall until its old (up to 2 s) timer fires
/// (module-null-sink keeps its next wake-up time when the requested latency drops).
#[derive(Debug, Clone)]
pub struct SteadyFlow {
    interval: std::time::Duration,
    period: std::time::Duration,
    expected: u64,
    mark: Option<(std::time::Instant, u64)>,
    good: u32,
}

impl SteadyFlow {
    const GOOD_INTERVALS: u32 = 2;

    pub fn new(period_ms: u32) -> Self {
        let period_ms = u64::from(period_ms.max(1));
        let interval_ms = (3 * period_ms).max(200);
        Self {
            interval: std::time::Duration::from_millis(interval_ms),
            period: std::time::Duration::from_millis(period_ms),
            expected: interval_ms / period_ms,
            mark: None,
            good: 0,
        }
    }

    /// The longest a stream that flows at its period takes to be seen as steady: its first
    /// transfer (a period), then the good intervals, each ending at the first transfer after it
    /// (up to a period late).
    pub fn longest_wait(&self) -> std::time::Duration {
        self.period + (self.interval + self.period) * Self::GOOD_INTERVALS
    }

    /// Feed the count at `now`; true once enough whole intervals in a row saw enough transfers.
    pub fn observe(&mut self, now: std::time::Instant, count: u64) -> bool {
        match self.mark {
            None => self.mark = Some((now, count)),
            Some((t, c)) if now.duration_since(t) >= self.interval => {
                if count.saturating_sub(c) * 2 >= self.expected {
                    self.good += 1;
                } else {
                    self.good = 0;
                }
                self.mark = Some((now, count));
            }
            Some(_) => {}
        }
        self.good >= Self::GOOD_INTERVALS
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steady_flow_needs_two_good_intervals_in_a_row() {
        use std::time::{Duration, Instant};
        let t0 = Instant::now();
        let ms = |n| t0 + Duration::from_millis(n);
        // 10 ms periods: intervals of 200 ms, 20 expected, 10 needed.
        let mut f = SteadyFlow::new(10);
        assert!(!f.observe(ms(0), 1));
        assert!(!f.observe(ms(200), 26), "a burst: one good interval");
        assert!(!f.observe(ms(400), 27), "then the stall");
        assert!(!f.observe(ms(1800), 28));
        assert!(!f.observe(ms(2000), 48));
        assert!(f.observe(ms(2200), 67), "two good intervals in a row");
        // 100 ms periods: intervals of 300 ms, 3 expected, 2 needed.
        let mut f = SteadyFlow::new(100);
        assert!(!f.observe(ms(0), 5));
        assert!(!f.observe(ms(300), 7));
        assert!(f.observe(ms(600), 10));
    }
}
