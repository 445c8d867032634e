//! What the run tells stderr while it works: `[step/total] what: ` per step ([`Progress`]), and
//! how far along a long window is ([`progress_sleep`]).

use std::io::Write;
use std::time::{Duration, Instant};

/// `[step/total]` counting on stderr.
pub(crate) struct Progress {
    pub(crate) step: usize,
    pub(crate) total: usize,
    pub(crate) started: Instant,
}

impl Progress {
    /// Starts the next step's line: `[step/total] what: `.
    pub(crate) fn next(&mut self, what: &str, err: &mut dyn Write) -> std::io::Result<()> {
        self.step += 1;
        write!(err, "[{}/{}] {what}: ", self.step, self.total)?;
        err.flush()
    }

    pub(crate) fn elapsed_s(&self) -> f64 {
        self.started.elapsed().as_secs_f64()
    }
}

/// Sleep through the window, telling stderr how far along it is on windows of 5 s or more.
pub(crate) fn progress_sleep(window: Duration, err: &mut dyn Write) -> std::io::Result<()> {
    let start = Instant::now();
    let tick = Duration::from_secs(5);
    loop {
        let left = window.saturating_sub(start.elapsed());
        if left.is_zero() {
            break;
        }
        std::thread::sleep(left.min(tick));
        let done = start.elapsed();
        if window >= tick && done < window {
            write!(
                err,
                "{:.0}/{:.0} s.. ",
                done.as_secs_f64(),
                window.as_secs_f64()
            )?;
            err.flush()?;
        }
    }
    Ok(())
}
