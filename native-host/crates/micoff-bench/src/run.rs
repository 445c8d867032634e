//! The run itself: look at the server once (is it there, which kind, who else is connected),
//! measure the server alone for an idle baseline, then window by window as [`crate::plan`] lays
//! them out measure each one ([`crate::window`]: the client, ours or the reference, sampled with
//! the server over the window), and turn it all into a [`BenchResult`] with its warnings and
//! notes ([`crate::notes`]) and the sweep chart.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use micoff_proc::ProcFs;

use crate::args::BenchArgs;
use crate::client::{self, ServerActivity, ServerProbe};
use crate::conf::ClientConfs;
use crate::ctx::ChildCommand;
use crate::ctx::RunCtx;
use crate::error::BenchError;
use crate::notes::{more_notes, srbchannel_detail, warnings};
use crate::plan;
use crate::progress::Progress;
use crate::reference;
use crate::report::{
    self, Baseline, BenchResult, Mode, Run, ServerReport, SrbchannelAvailability, SrbchannelState,
    Summary,
};
use crate::server;
use crate::window::{measure, measure_baseline};

/// How long the one-shot look at the server may take before the server counts as unreachable.
const PROBE_TIMEOUT: Duration = Duration::from_secs(10);

/// [`client::probe_server`] on a thread of its own, so that a server that accepts the connection
/// and then never answers cannot hang the bench.
fn probe(server: Option<&str>) -> Result<ServerProbe, String> {
    let server = server.map(str::to_string);
    let (tx, rx) = mpsc::channel();
    std::thread::Builder::new()
        .name("bench-probe".into())
        .spawn(move || {
            let _ = tx.send(client::probe_server(server.as_deref()).map_err(|e| e.to_string()));
        })
        .map_err(|e| e.to_string())?;
    match rx.recv_timeout(PROBE_TIMEOUT) {
        Ok(r) => r,
        Err(_) => Err(format!("no answer within {} s", PROBE_TIMEOUT.as_secs())),
    }
}

/// Run the bench and write its result: JSON with `--json`, else the text tables.
pub fn run_bench(
    args: &BenchArgs,
    child: &ChildCommand,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<(), BenchError> {
    let result = measure_run(args, child, err)?;
    if args.json {
        serde_json::to_writer_pretty(&mut *out, &result).map_err(std::io::Error::other)?;
        writeln!(out)?;
    } else {
        report::write_text(out, &result)?;
    }
    Ok(())
}

/// Every window of the run, with progress on `err`, and what they add up to.
pub fn measure_run(
    args: &BenchArgs,
    child: &ChildCommand,
    err: &mut dyn Write,
) -> Result<BenchResult, BenchError> {
    let mut notes = Vec::new();
    let first_look = look_at_server(args)?;
    let pipewire = server::is_pipewire(&first_look.server_name);
    if pipewire {
        let note = format!(
            "{} ({}) implements neither shared memory nor srbchannel: srbchannel not applicable, measuring the socket path only",
            first_look.server_name, first_look.server_version
        );
        writeln!(err, "note: {note}")?;
        notes.push(note);
    }

    let confs = ClientConfs::create(err)?;
    let procfs = ProcFs::system();
    let socket = server::socket_path(args.server.as_deref(), &|k: &str| std::env::var(k).ok());
    let server_pid = find_server_pid(args.server_pid, socket.as_deref(), &procfs, err)?;

    let modes = plan::modes_for(args, pipewire);
    let windows = plan::plan(&args.latency_ms, args.repeat, &modes);
    let baseline_s = match server_pid {
        Some(_) => args.baseline.unwrap_or(args.duration),
        None => 0.0,
    };
    let mut progress = Progress {
        step: 0,
        total: windows.len() + usize::from(baseline_s > 0.0),
        started: Instant::now(),
    };
    let baseline = match server_pid.filter(|_| baseline_s > 0.0) {
        Some(pid) => Some(idle_baseline(&procfs, pid, baseline_s, &mut progress, err)?),
        None => None,
    };

    let ctx = RunCtx {
        args,
        child,
        confs: &confs,
        procfs: &procfs,
        server_pid,
        pipewire,
    };
    let mut activity = first_look.activity.clone();
    let runs = run_windows(&ctx, windows, &mut progress, &mut activity, err)?;

    // srbchannel: what the `on` (and `off`) clients actually got.
    let availability = SrbchannelAvailability::from_runs(&runs, pipewire);
    let srbchannel_detail = (availability == SrbchannelAvailability::NotGranted)
        .then(|| srbchannel_detail(first_look.protocol_version, socket.is_some()));
    let warnings = warnings(
        &runs,
        srbchannel_detail.as_deref(),
        &activity,
        baseline.is_some(),
    );
    notes.extend(more_notes(&activity, pipewire));
    for w in &warnings {
        writeln!(err, "WARNING: {w}")?;
    }

    let srv = ServerReport {
        name: first_look.server_name.clone(),
        version: first_look.server_version.clone(),
        protocol_version: first_look.protocol_version,
        pid: server_pid,
        socket,
        pipewire,
        srbchannel: availability,
        srbchannel_detail,
        device_threads: device_threads(&runs, server_pid),
        other_clients: activity.clients,
        other_streams: activity.client_streams,
        module_streams: activity.module_streams,
    };
    let summaries = report::summarize(&runs);
    let chart = sweep_chart(args, &srv, &summaries)?;
    Ok(BenchResult {
        direction: args.direction,
        window_s: args.duration,
        repeat: args.repeat,
        latencies_ms: args.latency_ms.clone(),
        server: srv,
        baseline,
        summaries,
        runs,
        chart,
        warnings,
        notes,
    })
}

/// The one-shot look at the server; none reachable is [`BenchError::NoServer`].
fn look_at_server(args: &BenchArgs) -> Result<ServerProbe, BenchError> {
    probe(args.server.as_deref()).map_err(|reason| BenchError::NoServer {
        server: server::describe(args.server.as_deref(), &|k| std::env::var(k).ok()),
        reason,
    })
}

/// The audio server's pid: `--server-pid`, else the process holding its socket (micoff-proc's
/// socket holder, right under socket activation too, else SO_PEERCRED). `None`, with a warning,
/// when it cannot be found: the server columns stay empty then.
fn find_server_pid(
    given: Option<u32>,
    socket: Option<&Path>,
    procfs: &ProcFs,
    err: &mut dyn Write,
) -> std::io::Result<Option<u32>> {
    Ok(match (given, socket) {
        (Some(p), _) => Some(p),
        (None, Some(path)) => match procfs
            .socket_owner(path)
            .map_or_else(|| server::socket_peer_pid(path), Ok)
        {
            Ok(p) => Some(p),
            Err(e) => {
                writeln!(
                    err,
                    "warning: cannot find the audio server's pid from {}: {e}; server columns stay empty (use --server-pid)",
                    path.display()
                )?;
                None
            }
        },
        (None, None) => {
            writeln!(
                err,
                "warning: not a unix socket server; server columns stay empty (use --server-pid)"
            )?;
            None
        }
    })
}

fn idle_baseline(
    procfs: &ProcFs,
    pid: u32,
    secs: f64,
    progress: &mut Progress,
    err: &mut dyn Write,
) -> Result<Baseline, BenchError> {
    progress.next(&format!("server alone (idle baseline), {secs:.1} s"), err)?;
    let b = measure_baseline(procfs, pid, secs, err)?;
    writeln!(
        err,
        "server {:.2} % CPU, {:.0} wakeups/s ({:.0} s elapsed)",
        b.columns.total.cpu_pct,
        b.columns.total.wakeups_per_s,
        progress.elapsed_s()
    )?;
    Ok(b)
}

/// Every window in order; what our clients saw of other clients is merged into `activity`.
fn run_windows(
    ctx: &RunCtx,
    windows: Vec<(u32, Mode)>,
    progress: &mut Progress,
    activity: &mut ServerActivity,
    err: &mut dyn Write,
) -> Result<Vec<Run>, BenchError> {
    let mut runs: Vec<Run> = Vec::new();
    // What the server grants parec/pacat, per latency: one `-v` run for all the repeats.
    let mut reference_granted: HashMap<u32, u64> = HashMap::new();
    for (latency_ms, mode) in windows {
        progress.next(
            &format!(
                "{} {latency_ms} ms, {}",
                ctx.args.direction.as_str(),
                mode.label()
            ),
            err,
        )?;
        let granted = match (mode, reference_granted.get(&latency_ms)) {
            (Mode::Reference, Some(&us)) => Some(us),
            (Mode::Reference, None) => {
                // Not kept when it failed: the next repeat tries again.
                let us = reference::reference_granted_us(ctx, latency_ms);
                if let Some(us) = us {
                    reference_granted.insert(latency_ms, us);
                }
                us
            }
            _ => None,
        };
        let (run, seen) = measure(ctx, mode, latency_ms, granted, err)?;
        activity.merge(&seen);
        writeln!(
            err,
            "total {:.2} % CPU, {:.0} wakeups/s{} ({:.0} s elapsed)",
            run.columns.total.cpu_pct,
            run.columns.total.wakeups_per_s,
            match run.srbchannel {
                SrbchannelState::NotApplicable => String::new(),
                s => format!(", srbchannel {}", s.label()),
            },
            progress.elapsed_s()
        )?;
        runs.push(run);
    }
    Ok(runs)
}

/// Names of the server's non-main threads that did work in any window.
fn device_threads(runs: &[Run], server_pid: Option<u32>) -> Vec<String> {
    let mut device: Vec<String> = runs
        .iter()
        .flat_map(|r| r.server_threads.iter())
        .filter(|t| Some(t.tid) != server_pid && (t.cpu_pct > 0.0 || t.wakeups_per_s > 0.0))
        .map(|t| t.name.clone())
        .collect();
    device.sort();
    device.dedup();
    device
}

/// The sweep chart, written when more than one latency was measured or `--chart` asks for it.
fn sweep_chart(
    args: &BenchArgs,
    srv: &ServerReport,
    summaries: &[Summary],
) -> Result<Option<PathBuf>, BenchError> {
    if args.latency_ms.len() <= 1 && args.chart.is_none() {
        return Ok(None);
    }
    let path = args.chart.clone().unwrap_or_else(|| {
        PathBuf::from("results").join(format!("bench-{}-sweep.svg", args.direction.as_str()))
    });
    let title = format!(
        "{} CPU against requested latency ({} {})",
        args.direction.as_str(),
        srv.name,
        srv.version
    );
    write_chart(&path, &crate::chart::chart_svg(&title, summaries))?;
    Ok(Some(path))
}

fn write_chart(path: &Path, svg: &str) -> Result<(), BenchError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|source| BenchError::File {
            path: dir.to_path_buf(),
            source,
        })?;
    }
    std::fs::write(path, svg).map_err(|source| BenchError::File {
        path: path.to_path_buf(),
        source,
    })
}
