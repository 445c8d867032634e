//! A started client process, ours or the reference ([`Started`]): how long it may take until its
//! data flows ([`ready_timeout`]), and how it is stopped (ours is asked for its end figures first;
//! the child is always killed and reaped by its own pid, never by name).

use std::io::Write;
use std::process::{Child, ChildStdin};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use crate::client::{ChildMessage, DoneInfo, SteadyFlow};

/// How long a client may take to deliver its first data (an idle null sink takes about 2 s);
/// [`ready_timeout`] adds the time steady flow takes to show at the requested latency.
pub(crate) const READY_TIMEOUT: Duration = Duration::from_secs(20);
/// How long our client may take to report its end figures once asked to stop.
const DONE_TIMEOUT: Duration = Duration::from_secs(5);

/// How long a client at `latency_ms` may take from its start until its data flows steadily:
/// [`READY_TIMEOUT`] for the first data, plus what [`SteadyFlow`] needs to see the flow at that
/// latency (at 10 s periods that is 90 s on its own).
pub(crate) fn ready_timeout(latency_ms: u32) -> Duration {
    READY_TIMEOUT + SteadyFlow::new(latency_ms).longest_wait()
}

/// A started client: ours (with its message channel) or the reference.
pub(crate) struct Started {
    pub(crate) child: Child,
    pub(crate) stdin: Option<ChildStdin>,
    pub(crate) messages: Option<Receiver<ChildMessage>>,
}

impl Started {
    /// Ends the client; `ours`: asks it to stop and waits for its end figures first.
    pub(crate) fn stop(mut self, ours: bool) -> Option<DoneInfo> {
        let mut done = None;
        if ours {
            if let Some(mut stdin) = self.stdin.take() {
                let _ = stdin.write_all(b"stop\n");
            }
            if let Some(rx) = &self.messages {
                let deadline = Instant::now() + DONE_TIMEOUT;
                while let Some(left) = deadline.checked_duration_since(Instant::now()) {
                    match rx.recv_timeout(left) {
                        Ok(ChildMessage::Done(d)) => {
                            done = Some(d);
                            break;
                        }
                        Ok(_) => {}
                        Err(_) => break,
                    }
                }
            }
        }
        // Our own child, by its pid (Child::kill); a no-op if it already exited.
        if done.is_none() || !ours {
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
        done
    }
}

impl Drop for Started {
    fn drop(&mut self) {
        // Only reached with the child still owned on an error path.
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn ready_timeout_grows_with_the_latency() {
        // Short periods: SteadyFlow's 200 ms intervals add well under a second.
        let t = ready_timeout(10);
        assert!(
            t > READY_TIMEOUT && t < READY_TIMEOUT + Duration::from_secs(1),
            "{t:?}"
        );
        // A stream that delivers at its period is seen as steady within the added time, also at
        // latencies where that alone takes longer than READY_TIMEOUT (from about 3.5 s up).
        let t0 = Instant::now();
        for lat in [1u32, 10, 50, 100, 1000, 3500, 10_000] {
            let mut flow = SteadyFlow::new(lat);
            let period = Duration::from_millis(u64::from(lat));
            let steady_after = (1..=1000u32)
                .map(|n| (period * n, u64::from(n)))
                .find(|&(at, count)| flow.observe(t0 + at, count))
                .map(|(at, _)| at)
                .unwrap();
            assert!(
                steady_after <= ready_timeout(lat) - READY_TIMEOUT,
                "{lat} ms: steady after {steady_after:?}, timeout {:?}",
                ready_timeout(lat)
            );
            if lat >= 3500 {
                assert!(steady_after > READY_TIMEOUT, "{lat} ms: {steady_after:?}");
            }
        }
        assert_eq!(ready_timeout(10_000), Duration::from_secs(20 + 90));
    }
}
