//! Reconnect schedule: every `initial` for the first `fast_for` after a loss (a restarted server is
//! back within a second or two, and a capture that reconnected to it may wait for the sink waker:
//! docs/design/faults.md), then doubling up to `max`. A connect to a server that is not there fails
//! at once, so the fast phase costs nothing measurable. No jitter: one host talks to one local
//! server, there is no herd to spread.

use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    pub initial: Duration,
    /// How long retries come every `initial` before they start doubling.
    pub fast_for: Duration,
    pub max: Duration,
}

impl Default for Backoff {
    fn default() -> Self {
        Self {
            initial: Duration::from_millis(100),
            fast_for: Duration::from_secs(3),
            max: Duration::from_secs(5),
        }
    }
}

impl Backoff {
    /// Delay before reconnect attempt number `attempt` (0 = the first retry after a loss).
    pub fn delay(&self, attempt: u32) -> Duration {
        let fast = self.fast_for.as_millis() / self.initial.as_millis().max(1);
        let fast = u32::try_from(fast).unwrap_or(u32::MAX);
        let doublings = attempt.saturating_sub(fast.saturating_sub(1));
        let factor = 1u32.checked_shl(doublings.min(31)).unwrap_or(u32::MAX);
        self.initial
            .checked_mul(factor)
            .map_or(self.max, |d| d.min(self.max))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn every_100ms_for_3s_then_doubling_and_capped_at_5s() {
        let b = Backoff::default();
        let ms: Vec<u128> = (0..36).map(|a| b.delay(a).as_millis()).collect();
        assert_eq!(ms[..30], [100; 30]);
        assert_eq!(ms[30..], [200, 400, 800, 1600, 3200, 5000]);
    }

    #[test]
    fn huge_attempt_numbers_do_not_overflow() {
        let b = Backoff::default();
        assert_eq!(b.delay(40), Duration::from_secs(5));
        assert_eq!(b.delay(u32::MAX), Duration::from_secs(5));
    }

    #[test]
    fn custom_schedule() {
        let b = Backoff {
            initial: Duration::from_millis(10),
            fast_for: Duration::ZERO,
            max: Duration::from_millis(35),
        };
        let ms: Vec<u128> = (0..4).map(|a| b.delay(a).as_millis()).collect();
        assert_eq!(ms, [10, 20, 35, 35]);
    }
}
