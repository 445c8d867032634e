//! The run itself: look at the server once (is it there, which kind, who else is connected),
//! measure the server alone for an idle baseline, then window by window as [`crate::plan`] lays
//! them out start the client as a child process (ours, or the reference from
//! [`crate::reference`]), wait for its data to flow, sample the client's and the server's threads
//! over the window, stop the client, and turn it all into a [`BenchResult`].

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use micoff_exit::{EXIT_ERROR, EXIT_NOT_FOUND};
use micoff_proc::{CpuReport, ProcFs};

use crate::client::{
    self, ChildMessage, DoneInfo, ReadyInfo, ServerActivity, ServerProbe, CHANNELS, SAMPLE_RATE,
};
use crate::conf::ClientConfs;
use crate::plan;
use crate::reference;
use crate::report::{
    self, Baseline, BenchResult, Columns, Mode, Run, ServerReport, SrbchannelAvailability,
    SrbchannelState, Summary,
};
use crate::sample;
use crate::server;
use crate::{BenchArgs, ChildCommand};

/// How long a client may take to deliver its first data (an idle null sink takes about 2 s);
/// [`ready_timeout`] adds the time steady flow takes to show at the requested latency.
pub(crate) const READY_TIMEOUT: Duration = Duration::from_secs(20);
const DONE_TIMEOUT: Duration = Duration::from_secs(5);
/// How long the one-shot look at the server may take before the server counts as unreachable.
const PROBE_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    #[error("no audio server reachable at {server}: {reason}")]
    NoServer { server: String, reason: String },
    #[error("not found: {0}")]
    NotFound(String),
    #[error("starting {exe}: {source}")]
    Spawn { exe: String, source: std::io::Error },
    #[error("the client failed: {0}")]
    Client(String),
    #[error("timed out waiting for {0}")]
    Timeout(String),
    #[error("{path}: {source}")]
    File {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("sampling: process {0} vanished during the window")]
    Vanished(u32),
    #[error("writing the report: {0}")]
    Io(#[from] std::io::Error),
}

impl BenchError {
    /// The exit code micoff-host documents for this failure: nothing found (no audio server, no
    /// such source/sink), or an error for everything else (usage errors never get this far: clap
    /// rejects them first).
    pub fn exit_code(&self) -> i32 {
        match self {
            BenchError::NoServer { .. } | BenchError::NotFound(_) => EXIT_NOT_FOUND,
            _ => EXIT_ERROR,
        }
    }
}

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

/// Why the `on` client may not have got srbchannel, from what the bench knows.
pub fn srbchannel_detail(protocol_version: Option<u32>, unix_socket: bool) -> String {
    if let Some(v) = protocol_version.filter(|v| *v < 30) {
        return format!(
            "the server speaks native protocol {v}; srbchannel needs 30 (PulseAudio 6.0 or later)"
        );
    }
    if !unix_socket {
        return "not a unix-socket connection; srbchannel is only offered over the unix socket"
            .into();
    }
    "the server did not offer it: module-native-protocol-unix loaded with srbchannel=false, or shared memory off on the server (enable-shm = no in daemon.conf, --disable-shm), or no shared memory possible between client and server (another user or a container)".into()
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

/// `[step/total]` counting on stderr.
struct Progress {
    step: usize,
    total: usize,
    started: Instant,
}

impl Progress {
    /// Starts the next step's line: `[step/total] what: `.
    fn next(&mut self, what: &str, err: &mut dyn Write) -> std::io::Result<()> {
        self.step += 1;
        write!(err, "[{}/{}] {what}: ", self.step, self.total)?;
        err.flush()
    }

    fn elapsed_s(&self) -> f64 {
        self.started.elapsed().as_secs_f64()
    }
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

/// What makes the figures mean less than they seem: srbchannel not as asked, other clients'
/// streams in the server columns.
fn warnings(
    runs: &[Run],
    srbchannel_detail: Option<&str>,
    activity: &ServerActivity,
    baseline: bool,
) -> Vec<String> {
    let mut warnings = Vec::new();
    if let Some(detail) = srbchannel_detail {
        warnings.push(report::same_client_warning(&format!(
            "srbchannel was NOT granted to the `on` client ({detail})"
        )));
    }
    if runs
        .iter()
        .any(|r| r.mode == Mode::SrbchannelOff && r.srbchannel == SrbchannelState::Active)
    {
        warnings.push(report::same_client_warning(
            "the `off` client got srbchannel anyway (its client.conf override did not take effect)",
        ));
    }
    if !activity.client_streams.is_empty() {
        warnings.push(format!(
            "other clients' streams were at the server during the bench: {}; their work is in the server columns{}",
            activity.client_streams.join(", "),
            if baseline {
                " (the \"server alone (idle)\" row shows how much)"
            } else {
                " (no idle baseline was measured)"
            }
        ));
    }
    warnings
}

/// What else the reader should know: idle clients, the server's own module streams, where
/// pipewire-pulse's work is.
fn more_notes(activity: &ServerActivity, pipewire: bool) -> Vec<String> {
    let mut notes = Vec::new();
    if !activity.clients.is_empty() {
        notes.push(format!(
            "other clients connected (an idle client costs the server nothing): {}",
            activity.clients.join(", ")
        ));
    }
    if !activity.module_streams.is_empty() {
        notes.push(format!(
            "streams of the server's own modules: {} (their cost is in every server figure, and in the idle row)",
            activity.module_streams.join(", ")
        ));
    }
    if pipewire {
        notes.push(
            "pipewire-pulse: the server columns are the pipewire-pulse process (socket holder); the graph itself runs in the pipewire daemon".into(),
        );
    }
    notes
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

/// The server alone over `secs`: no bench client connected.
fn measure_baseline(
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

/// What every window of a run shares.
pub(crate) struct RunCtx<'a> {
    pub(crate) args: &'a BenchArgs,
    pub(crate) child: &'a ChildCommand,
    pub(crate) confs: &'a ClientConfs,
    pub(crate) procfs: &'a ProcFs,
    pub(crate) server_pid: Option<u32>,
    pub(crate) pipewire: bool,
}

/// A started client: ours (with its message channel) or the reference.
pub(crate) struct Started {
    pub(crate) child: Child,
    pub(crate) stdin: Option<ChildStdin>,
    pub(crate) messages: Option<Receiver<ChildMessage>>,
}

impl Started {
    fn stop(mut self, ours: bool) -> Option<DoneInfo> {
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

fn spawn_ours(ctx: &RunCtx, mode: Mode, latency_ms: u32) -> Result<Started, BenchError> {
    let a = ctx.args;
    let mut cmd = Command::new(&ctx.child.exe);
    cmd.args(&ctx.child.prefix)
        .arg(a.direction.as_str())
        .arg("--child")
        .arg("--latency-ms")
        .arg(latency_ms.to_string())
        .arg("--app-name")
        .arg(app_name(mode));
    if let Some(s) = &a.source {
        cmd.arg("--source").arg(s);
    }
    if let Some(s) = &a.sink {
        cmd.arg("--sink").arg(s);
    }
    if let Some(s) = &a.server {
        cmd.arg("--server").arg(s);
    }
    let conf = if mode == Mode::SrbchannelOff {
        &ctx.confs.off
    } else {
        &ctx.confs.on
    };
    cmd.env("PULSE_CLIENTCONFIG", conf)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    let mut child = cmd.spawn().map_err(|source| BenchError::Spawn {
        exe: ctx.child.exe.display().to_string(),
        source,
    })?;
    let stdin = child.stdin.take();
    let stdout = child.stdout.take();
    let (tx, rx) = mpsc::channel();
    if let Some(stdout) = stdout {
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                match serde_json::from_str::<ChildMessage>(&line) {
                    Ok(m) => {
                        if tx.send(m).is_err() {
                            break;
                        }
                    }
                    Err(_) => tracing::debug!("bench client said: {line}"),
                }
            }
        });
    }
    Ok(Started {
        child,
        stdin,
        messages: Some(rx),
    })
}

/// The application name tells the modes apart in the server's log and `pactl list`.
pub fn app_name(mode: Mode) -> String {
    match mode {
        Mode::SrbchannelOn => "micoff-bench srbchannel-on".into(),
        Mode::SrbchannelOff => "micoff-bench srbchannel-off".into(),
        Mode::Socket => "micoff-bench socket".into(),
        Mode::Reference => "micoff-bench reference".into(),
    }
}

/// How long a client at `latency_ms` may take from its start until its data flows steadily:
/// [`READY_TIMEOUT`] for the first data, plus what [`client::SteadyFlow`] needs to see the flow
/// at that latency (at 10 s periods that is 90 s on its own).
pub(crate) fn ready_timeout(latency_ms: u32) -> Duration {
    READY_TIMEOUT + client::SteadyFlow::new(latency_ms).longest_wait()
}

fn wait_ready(started: &Started, latency_ms: u32) -> Result<ReadyInfo, BenchError> {
    let Some(rx) = &started.messages else {
        return Err(BenchError::Client("no message channel".into()));
    };
    match rx.recv_timeout(ready_timeout(latency_ms)) {
        Ok(ChildMessage::Ready(r)) => Ok(r),
        Ok(ChildMessage::Error { message, not_found }) => Err(if not_found {
            BenchError::NotFound(message)
        } else {
            BenchError::Client(message)
        }),
        Ok(ChildMessage::Done(_)) => Err(BenchError::Client("done before ready".into())),
        Err(RecvTimeoutError::Timeout) => Err(BenchError::Timeout(
            "the client's stream to start and deliver data".into(),
        )),
        Err(RecvTimeoutError::Disconnected) => Err(BenchError::Client(
            "exited before its stream was ready".into(),
        )),
    }
}

/// One window of one mode; also what our client saw of other clients at its start and end.
/// `reference_granted`: what the server grants parec/pacat at this latency (reference windows).
fn measure(
    ctx: &RunCtx,
    mode: Mode,
    latency_ms: u32,
    reference_granted: Option<u64>,
    err: &mut dyn Write,
) -> Result<(Run, ServerActivity), BenchError> {
    let ours = mode != Mode::Reference;
    let mut started = if ours {
        spawn_ours(ctx, mode, latency_ms)?
    } else {
        reference::spawn_reference(ctx, latency_ms)?
    };
    let client_pid = started.child.id();
    let ready = if ours {
        Some(wait_ready(&started, latency_ms)?)
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

/// Sleep through the window, telling stderr how far along it is on windows of 5 s or more.
fn progress_sleep(window: Duration, err: &mut dyn Write) -> std::io::Result<()> {
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn not_found_and_other_errors_have_the_documented_exit_codes() {
        let e = BenchError::NoServer {
            server: "unix:/nowhere".into(),
            reason: "Connection refused".into(),
        };
        assert_eq!(e.exit_code(), 4);
        assert!(e.to_string().contains("unix:/nowhere"));
        assert_eq!(BenchError::NotFound("no source".into()).exit_code(), 4);
        assert_eq!(BenchError::Client("x".into()).exit_code(), 1);
    }

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
            let mut flow = client::SteadyFlow::new(lat);
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

    #[test]
    fn srbchannel_detail_names_the_likely_cause() {
        assert!(srbchannel_detail(Some(29), true).contains("protocol 29"));
        assert!(srbchannel_detail(Some(35), false).contains("unix socket"));
        assert!(srbchannel_detail(Some(35), true).contains("srbchannel=false"));
    }
}
