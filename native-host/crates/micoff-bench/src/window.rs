//! One measured window: start the client (ours, or the reference), wait for its data to flow,
//! settle, sample the client's and the server's threads over the window, stop the client, and
//! make a [`Run`] of it; and the server alone over a window ([`measure_baseline`]).

use std::io::Write;
use std::time::{Duration, Instant};

use micoff_proc::{CpuReport, ProcFs};

use crate::client::{ServerActivity, CHANNELS, SAMPLE_RATE};
use crate::ctx::RunCtx;
use crate::error::BenchError;
use crate::our_client;
use crate::progress::progress_sleep;
use crate::reference;
use crate::report::{Baseline, Columns, Mode, Run, SrbchannelState};
use crate::sample;
use crate::server;

/// One window of one mode; also what our client saw of other clients at its start and end.
/// `reference_granted`: what the server grants parec/pacat at this latency (reference windows).
pub(crate) fn measure(
    ctx: &RunCtx,
    mode: Mode,
    latency_ms: u32,
    reference_granted: Option<u64>,
    err: &mut dyn Write,
) -> Result<(Run, ServerActivity), BenchError> {
    let ours = mode != Mode::Reference;
    let mut started = if ours {
        our_client::spawn_ours(ctx, mode, latency_ms)?
    } else {
        reference::spawn_reference(ctx, latency_ms)?
    };
    let client_pid = started.child.id();
    let ready = if ours {
        Some(our_client::wait_ready(&started, latency_ms)?)
    } else {
        reference::wait_reference_flowing(ctx, &mut started, client_pid, latency_ms)?;
        None
    };
    let ready_at = Instant::now();
    std::thread::sleep(Duration::from_millis(ctx.args.warmup_ms));

    let srbchannel = if ctx.pipewire {
        SrbchannelState::NotApplicable
    } else {
        SrbchannelState::from_eventfds(server::count_eventfds(ctx.procfs.root(), client_pid))
    };

    let window = Duration::from_secs_f64(ctx.args.duration);
    let pids: Vec<u32> = std::iter::once(client_pid).chain(ctx.server_pid).collect();
    let rates = sample_window(ctx.procfs, &pids, window, err)?;
    let client_threads = sample::threads_of(&rates, client_pid);
    if client_threads.is_empty() {
        return Err(BenchError::Vanished(client_pid));
    }
    let server_threads = ctx
        .server_pid
        .map(|p| sample::threads_of(&rates, p))
        .unwrap_or_default();
    let done = started.stop(ours);
    if ours && done.is_none() {
        writeln!(err, "warning: the client did not report its end figures")?;
    }

    let mut seen = ServerActivity::default();
    if let Some(r) = &ready {
        seen.merge(&r.others);
    }
    if let Some(d) = &done {
        seen.merge(&d.others);
    }
    let buffer = done
        .as_ref()
        .map(|d| d.buffer)
        .or(ready.as_ref().map(|r| r.buffer));
    let granted_us = buffer
        .and_then(|b| b.granted_us(ctx.args.direction, SAMPLE_RATE, CHANNELS))
        .or(reference_granted);
    let callbacks_per_s = match (&ready, &done) {
        (Some(r), Some(d)) => {
            let secs = ready_at.elapsed().as_secs_f64();
            (secs > 0.0).then(|| d.callbacks.saturating_sub(r.callbacks) as f64 / secs)
        }
        _ => None,
    };
    let columns = Columns::from_threads(
        &client_threads,
        &server_threads,
        ctx.server_pid.unwrap_or(0),
    );
    let run = Run {
        mode,
        latency_ms,
        window_s: rates.window_ms / 1000.0,
        columns,
        granted_us,
        latency_us: done.as_ref().and_then(|d| d.latency_us),
        srbchannel,
        callbacks_per_s,
        client_threads,
        server_threads,
    };
    Ok((run, seen))
}

/// The server alone over `secs`: no bench client connected.
pub(crate) fn measure_baseline(
    procfs: &ProcFs,
    server_pid: u32,
    secs: f64,
    err: &mut dyn Write,
) -> Result<Baseline, BenchError> {
    let rates = sample_window(procfs, &[server_pid], Duration::from_secs_f64(secs), err)?;
    let threads = sample::threads_of(&rates, server_pid);
    if threads.is_empty() {
        return Err(BenchError::Vanished(server_pid));
    }
    Ok(Baseline {
        window_s: rates.window_ms / 1000.0,
        columns: Columns::from_threads(&[], &threads, server_pid),
        server_threads: threads,
    })
}

/// The per-thread rates of `pids` over one window: a snapshot at each end, with
/// [`progress_sleep`] between them.
fn sample_window(
    procfs: &ProcFs,
    pids: &[u32],
    window: Duration,
    err: &mut dyn Write,
) -> std::io::Result<CpuReport> {
    let before = sample::snapshot(procfs, pids);
    progress_sleep(window, err)?;
    let after = sample::snapshot(procfs, pids);
    Ok(micoff_proc::rates(&before, &after))
}
