//! `cpu_sample` and the `cpu` subscription: their bounds (window, interval, pids) and the CPU
//! report they carry (micoff-proc's own types).

use super::processes::validate_pid;

pub const CPU_WINDOW_MS_MIN: u64 = 100;
pub const CPU_WINDOW_MS_MAX: u64 = 60_000;
pub const CPU_INTERVAL_MS_MIN: u64 = 250;
pub const CPU_INTERVAL_MS_MAX: u64 = 60_000;
pub const CPU_INTERVAL_MS_DEFAULT: u64 = 1000;
pub const MAX_PIDS: usize = 256;

/// CPU reports are micoff-proc's own types, carried as they are (one definition): per process, per
/// thread (`comm`, `user_pct`/`system_pct`, `run_time_ns`/`run_time_pct`, voluntary and involuntary
/// context switches per second, read/write syscalls per second) and per role (`roles`).
/// `threads_omitted` counts threads the host dropped to fit a frame ([`crate::fit_to_frame`]).
pub use micoff_proc::{CpuReport, ProcessRates, Rates, Role, RoleTotals, ThreadRates};

/// A `cpu_sample`'s `window_ms` and `pids`.
pub(super) fn validate_cpu_sample(window_ms: u64, pids: Option<&[u32]>) -> Result<(), String> {
    if !(CPU_WINDOW_MS_MIN..=CPU_WINDOW_MS_MAX).contains(&window_ms) {
        return Err(format!(
            "`window_ms` must be in {CPU_WINDOW_MS_MIN}..={CPU_WINDOW_MS_MAX}, got {window_ms}"
        ));
    }
    validate_pids(pids)
}

/// A `cpu` subscription's `interval_ms` and `pids`.
pub(super) fn validate_cpu_subscription(
    interval_ms: Option<u64>,
    pids: Option<&[u32]>,
) -> Result<(), String> {
    if let Some(interval) = interval_ms {
        if !(CPU_INTERVAL_MS_MIN..=CPU_INTERVAL_MS_MAX).contains(&interval) {
            return Err(format!(
                "`interval_ms` must be in {CPU_INTERVAL_MS_MIN}..={CPU_INTERVAL_MS_MAX}, got {interval}"
            ));
        }
    }
    validate_pids(pids)
}

fn validate_pids(pids: Option<&[u32]>) -> Result<(), String> {
    let Some(pids) = pids else { return Ok(()) };
    if pids.is_empty() || pids.len() > MAX_PIDS {
        return Err(format!(
            "`pids` must have 1..={MAX_PIDS} entries, got {}",
            pids.len()
        ));
    }
    pids.iter().try_for_each(|pid| validate_pid(*pid))
}
