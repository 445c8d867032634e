//! Reconnect schedule: `initial`, doubling up to `max`. No jitter: one host talks to one local
//! server, there is no herd to spread.

use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    pub initial: Duration,
    pub max: Duration,
}

impl Default for Backoff {
    fn default() -> Self {
        Self {
            initial: Duration::from_millis(100),
            max: Duration::from_secs(5),
        }
    }
}

impl Backoff {
    /// Delay before reconnect attempt number `attempt` (0 = the first retry after a loss).
    pub fn delay(&self, attempt: u32) -> Duration {
        let factor = 1u32.checked_shl(attempt.min(31)).unwrap_or(u32::MAX);
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
    fn doubles_from_100ms_and_caps_at_5s() {
        let b = Backoff::default();
        let ms: Vec<u128> = (0..9).map(|a| b.delay(a).as_millis()).collect();
        assert_eq!(ms, [100, 200, 400, 800, 1600, 3200, 5000, 5000, 5000]);
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
            max: Duration::from_millis(35),
        };
        let ms: Vec<u128> = (0..4).map(|a| b.delay(a).as_millis()).collect();
        assert_eq!(ms, [10, 20, 35, 35]);
    }
}
