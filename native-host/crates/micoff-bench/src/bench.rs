//! The parent side of the bench: look at the server once (is it there, which kind, who else is
//! connected), measure the server alone for an idle baseline, then per latency, per repeat, per
//! mode (alternating) start the client as a child process, wait for its data to flow, sample the
//! client's and the server's threads over the window, stop the client, and turn it all into a
//! [`Report`].

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::client::{
    self, ChildMessage, DoneInfo, ReadyInfo, ServerActivity, ServerProbe, CHANNELS, SAMPLE_RATE,
};
use crate::report::{self, Columns, Mode, Run, SrbchannelAvailability, SrbchannelState, Summary};
use crate::sample::{self, ThreadRates};
use crate::server;
use crate::{BenchArgs, ChildCommand, CompareArg, Direction, SrbchannelArg};
use micoff_proc::{CpuReport, ProcFs};

/// How long a client may take to deliver its first data (an idle null sink takes about 2 s);
/// [`ready_timeout`] adds the time steady flow takes to show at the requested latency.
const READY_TIMEOUT: Duration = Duration::from_secs(20);
const DONE_TIMEOUT: Duration = Duration::from_secs(5);
/// How long the one-shot look at the server may take before the server counts as unreachable.
const PROBE_TIMEOUT: Duration = Duration::from_secs(10);

/// micoff-host's documented exit codes (`native-host/src/cli/mod.rs`, `EXIT_*`), mirrored here
/// because this crate sits below the host and must not depend on it.
pub const EXIT_ERROR: i32 = 1;
/// A usage error: clap exits with it before the bench runs (every argument is checked by its
/// value parser, see [`BenchArgs`]).
pub const EXIT_USAGE: i32 = 2;
pub const EXIT_NOT_FOUND: i32 = 4;

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
    /// The exit code micoff-host documents for this failure: 4 nothing found (no audio server, no
    /// such source/sink), 1 for everything else (usage errors, 2, never get this far).
    pub fn exit_code(&self) -> i32 {
        match self {
            BenchError::NoServer { .. } | BenchError::NotFound(_) => EXIT_NOT_FOUND,
            _ => EXIT_ERROR,
        }
    }
}

/// The server as the bench saw it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerReport {
    pub name: String,
    pub version: String,
    pub protocol_version: Option<u32>,
    pub pid: Option<u32>,
    pub socket: Option<PathBuf>,
    pub pipewire: bool,
    /// What the measured `on` clients got: derived from the run, never assumed.
    pub srbchannel: SrbchannelAvailability,
    /// Why srbchannel was not granted, as far as the bench can tell (only when it was not).
    pub srbchannel_detail: Option<String>,
    /// Names of the server's non-main threads that did work in any window.
    pub device_threads: Vec<String>,
    /// Other clients connected at some point (the probe before the run, and the start and end of
    /// each of our windows).
    pub other_clients: Vec<String>,
    /// Other clients' streams seen at those points: their work is in the server columns.
    pub other_streams: Vec<String>,
    /// Streams of the server's own modules (configuration, e.g. a remap source on its master).
    pub module_streams: Vec<String>,
}

/// The server measured with no bench client connected, before the modes: its row is what the
/// server does anyway (other clients, its own modules, timers); subtract it from the server
/// columns to see what the measured client alone costs the server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Baseline {
    pub window_s: f64,
    /// `client` stays zero.
    pub columns: Columns,
    pub server_threads: Vec<ThreadRates>,
}

/// Everything the bench measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub direction: Direction,
    pub window_s: f64,
    pub repeat: u32,
    pub latencies_ms: Vec<u32>,
    pub server: ServerReport,
    pub baseline: Option<Baseline>,
    pub summaries: Vec<Summary>,
    pub runs: Vec<Run>,
    pub chart: Option<PathBuf>,
    /// Things that make figures mean less than they seem (printed first, as `WARNING:`).
    pub warnings: Vec<String>,
    pub notes: Vec<String>,
}

/// Private client.conf files for the two modes, removed on drop.
struct ClientConfs {
    dir: PathBuf,
    on: PathBuf,
    off: PathBuf,
}

impl ClientConfs {
    fn create(err: &mut dyn Write) -> Result<Self, BenchError> {
        let dir = std::env::temp_dir().join(format!("micoff-bench-{}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|source| BenchError::File {
            path: dir.clone(),
            source,
        })?;
        let (includes, skipped): (Vec<PathBuf>, Vec<PathBuf>) =
            client_conf_chain(&|k| std::env::var(k).ok())
                .into_iter()
                .partition(|p| includable(p));
        for p in skipped {
            writeln!(
                err,
                "warning: cannot .include {} from the bench's client.conf (its path has '#', ';' or is too long); its settings are left out",
                p.display()
            )?;
        }
        let on = dir.join("client-shm-on.conf");
        let off = dir.join("client-shm-off.conf");
        for (path, shm) in [(&on, true), (&off, false)] {
            std::fs::write(path, client_conf_text(&includes, shm)).map_err(|source| {
                BenchError::File {
                    path: path.clone(),
                    source,
                }
            })?;
        }
        Ok(Self { dir, on, off })
    }
}

impl Drop for ClientConfs {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The client.conf libpulse would read for this user, looked up the way libpulse does it
/// (`pa_open_config_file` in PulseAudio 16): `$PULSE_CLIENTCONFIG` (set but unreadable: no file
/// at all); else `$PULSE_CONFIG_PATH/client.conf`, or without it `~/.pulse/client.conf` then
/// `~/.config/pulse/client.conf` (libpulse does not read `$XDG_CONFIG_HOME` here); else
/// `/etc/pulse/client.conf`.
pub fn base_client_conf(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    if let Some(p) = env("PULSE_CLIENTCONFIG") {
        return Some(PathBuf::from(p)).filter(|p| p.is_file());
    }
    let local: Vec<PathBuf> = match (env("PULSE_CONFIG_PATH"), env("HOME")) {
        (Some(dir), _) => vec![Path::new(&dir).join("client.conf")],
        (None, Some(h)) => vec![
            Path::new(&h).join(".pulse/client.conf"),
            Path::new(&h).join(".config/pulse/client.conf"),
        ],
        (None, None) => vec![],
    };
    local
        .into_iter()
        .chain(std::iter::once(PathBuf::from("/etc/pulse/client.conf")))
        .find(|p| p.is_file())
}

/// The `<file>.d/*.conf` drop-ins libpulse reads after `file` (`pa_config_parse` with
/// `use_dot_d`: scandir with alphasort), in that order. Only regular files: libpulse skips a
/// dangling link (Debian ships one, `01-enable-autospawn.conf`), and an unreadable entry would
/// only stop parsing.
pub fn conf_d_files(file: &Path) -> Vec<PathBuf> {
    let mut dir = file.as_os_str().to_owned();
    dir.push(".d");
    let Ok(entries) = std::fs::read_dir(PathBuf::from(dir)) else {
        return Vec::new();
    };
    let mut v: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().ends_with(".conf"))
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .collect();
    // alphasort compares with strcoll; for the ASCII names these folders hold (NN-name.conf)
    // that is byte order in every locale that matters.
    v.sort();
    v
}

/// Everything libpulse would read for this user, in its order: the base client.conf, then its
/// `client.conf.d/` drop-ins. The bench's own client.conf includes them all, so that only shared
/// memory differs from what the user's clients get.
pub fn client_conf_chain(env: &dyn Fn(&str) -> Option<String>) -> Vec<PathBuf> {
    let Some(base) = base_client_conf(env) else {
        return Vec::new();
    };
    let mut v = vec![base.clone()];
    v.extend(conf_d_files(&base));
    v
}

/// Whether a path can go on a `.include` line: libpulse cuts a line at `#` or `;` (comments) and
/// reads lines into a 4096-byte buffer.
fn includable(p: &Path) -> bool {
    let s = p.to_string_lossy();
    !s.contains(['#', ';', '\n']) && s.len() < 4000
}

/// Our client.conf: shared memory on or off, the user's files (`.include`, in libpulse's order),
/// then shared memory again. The first setting is a guard: a file that fails to parse makes
/// libpulse stop reading the file that included it, which would drop the last lines.
pub fn client_conf_text(includes: &[PathBuf], shm: bool) -> String {
    let v = if shm { "yes" } else { "no" };
    let set = format!("enable-shm = {v}\nenable-memfd = {v}\n");
    let mut s = String::from("# written by micoff-host bench; removed when it ends\n");
    s.push_str(&set);
    for b in includes {
        s.push_str(&format!(".include {}\n", b.display()));
    }
    s.push_str(&set);
    s
}

/// The modes of one repeat, alternating order on odd repeats (ABBA) to cancel drift.
pub fn schedule(modes: &[Mode], rep: u32) -> Vec<Mode> {
    let mut v = modes.to_vec();
    if rep % 2 == 1 {
        v.reverse();
    }
    v
}

/// The modes to measure: on pipewire-pulse (no shared memory, no srbchannel) `on` and `off`
/// collapse into one socket-only mode.
pub fn modes_for(args: &BenchArgs, pipewire: bool) -> Vec<Mode> {
    let mut m = if pipewire {
        vec![Mode::Socket]
    } else {
        match args.srbchannel {
            SrbchannelArg::On => vec![Mode::SrbchannelOn],
            SrbchannelArg::Off => vec![Mode::SrbchannelOff],
            SrbchannelArg::Both => vec![Mode::SrbchannelOn, Mode::SrbchannelOff],
        }
    };
    if args.compare == Some(CompareArg::Parec) {
        m.push(Mode::Reference);
    }
    m
}

/// Every window of the run, in order: per latency, per repeat, the modes alternating. Known
/// before the first window, so progress counts are right from the start.
pub fn plan(latencies_ms: &[u32], repeat: u32, modes: &[Mode]) -> Vec<(u32, Mode)> {
    latencies_ms
        .iter()
        .flat_map(|&lat| {
            (0..repeat).flat_map(move |rep| schedule(modes, rep).into_iter().map(move |m| (lat, m)))
        })
        .collect()
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

/// Run the bench and write the report.
pub fn run_bench(
    args: &BenchArgs,
    child: &ChildCommand,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<(), BenchError> {
    let env = |k: &str| std::env::var(k).ok();
    let first_look = probe(args.server.as_deref()).map_err(|reason| BenchError::NoServer {
        server: args
            .server
            .clone()
            .or_else(|| env("PULSE_SERVER"))
            .unwrap_or_else(|| "the default server".into()),
        reason,
    })?;
    let pipewire = server::is_pipewire(&first_look.server_name);
    let mut notes = Vec::new();
    let mut warnings = Vec::new();
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
    let socket = server::socket_path(args.server.as_deref(), &env);
    let server_pid = match (args.server_pid, &socket) {
        (Some(p), _) => Some(p),
        // micoff-proc's socket holder (right under socket activation too), else SO_PEERCRED.
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
    };

    let modes = modes_for(args, pipewire);
    let windows = plan(&args.latency_ms, args.repeat, &modes);
    let baseline_s = match server_pid {
        Some(_) => args.baseline.unwrap_or(args.duration),
        None => 0.0,
    };
    let total = windows.len() + usize::from(baseline_s > 0.0);
    let mut activity = first_look.activity.clone();
    let mut step = 0usize;
    let started = Instant::now();

    let baseline = match server_pid.filter(|_| baseline_s > 0.0) {
        Some(pid) => {
            step += 1;
            write!(
                err,
                "[{step}/{total}] server alone (idle baseline), {baseline_s:.1} s: "
            )?;
            err.flush()?;
            let b = measure_baseline(&procfs, pid, baseline_s, err)?;
            writeln!(
                err,
                "server {:.2} % CPU, {:.0} wakeups/s ({:.0} s elapsed)",
                b.columns.total.cpu_pct,
                b.columns.total.wakeups_per_s,
                started.elapsed().as_secs_f64()
            )?;
            Some(b)
        }
        None => None,
    };

    let mut runs: Vec<Run> = Vec::new();
    let ctx = RunCtx {
        args,
        child,
        confs: &confs,
        procfs: &procfs,
        server_pid,
        pipewire,
    };
    // What the server grants parec/pacat, per latency: one `-v` run for all the repeats.
    let mut reference_granted: HashMap<u32, u64> = HashMap::new();
    for (latency_ms, mode) in windows {
        step += 1;
        write!(
            err,
            "[{step}/{total}] {} {latency_ms} ms, {}: ",
            args.direction.as_str(),
            mode.label()
        )?;
        err.flush()?;
        let granted = match (mode, reference_granted.get(&latency_ms)) {
            (Mode::Reference, Some(&us)) => Some(us),
            (Mode::Reference, None) => {
                // Not kept when it failed: the next repeat tries again.
                let us = reference_granted_us(&ctx, latency_ms);
                if let Some(us) = us {
                    reference_granted.insert(latency_ms, us);
                }
                us
            }
            _ => None,
        };
        let (run, seen) = measure(&ctx, mode, latency_ms, granted, err)?;
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
            started.elapsed().as_secs_f64()
        )?;
        runs.push(run);
    }

    let mut device: Vec<String> = runs
        .iter()
        .flat_map(|r| r.server_threads.iter())
        .filter(|t| Some(t.tid) != server_pid && (t.cpu_pct > 0.0 || t.wakeups_per_s > 0.0))
        .map(|t| t.name.clone())
        .collect();
    device.sort();
    device.dedup();

    // srbchannel: what the `on` (and `off`) clients actually got.
    let availability = SrbchannelAvailability::from_runs(&runs, pipewire);
    let srbchannel_detail = (availability == SrbchannelAvailability::NotGranted)
        .then(|| srbchannel_detail(first_look.protocol_version, socket.is_some()));
    if let Some(detail) = &srbchannel_detail {
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
            if baseline.is_some() {
                " (the \"server alone (idle)\" row shows how much)"
            } else {
                " (no idle baseline was measured)"
            }
        ));
    }
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
    for w in &warnings {
        writeln!(err, "WARNING: {w}")?;
    }

    let srv = ServerReport {
        name: first_look.server_name.clone(),
        version: first_look.server_version.clone(),
        protocol_version: first_look.protocol_version,
        pid: server_pid,
        socket: socket.clone(),
        pipewire,
        srbchannel: availability,
        srbchannel_detail,
        device_threads: device,
        other_clients: activity.clients,
        other_streams: activity.client_streams,
        module_streams: activity.module_streams,
    };

    let summaries = report::summarize(&runs);
    let chart = if args.latency_ms.len() > 1 || args.chart.is_some() {
        let path = args.chart.clone().unwrap_or_else(|| {
            PathBuf::from("results").join(format!("bench-{}-sweep.svg", args.direction.as_str()))
        });
        let title = format!(
            "{} CPU against requested latency ({} {})",
            args.direction.as_str(),
            srv.name,
            srv.version
        );
        write_chart(&path, &crate::chart::chart_svg(&title, &summaries))?;
        Some(path)
    } else {
        None
    };

    let report = Report {
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
    };
    if args.json {
        serde_json::to_writer_pretty(&mut *out, &report).map_err(std::io::Error::other)?;
        writeln!(out)?;
    } else {
        write_report(out, &report)?;
    }
    Ok(())
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

/// The text report: a header (warnings first), one table per latency, the sweep table and chart
/// path.
pub fn write_report(out: &mut dyn Write, r: &Report) -> std::io::Result<()> {
    let s = &r.server;
    writeln!(
        out,
        "micoff bench: {}, {:.1} s window, {} run(s) per mode{}",
        r.direction.as_str(),
        r.window_s,
        r.repeat,
        if r.repeat > 1 { " (medians)" } else { "" }
    )?;
    writeln!(
        out,
        "server: {} {} (protocol {}, pid {}), srbchannel {}; device thread(s): {}",
        s.name,
        s.version,
        s.protocol_version
            .map_or_else(|| "?".into(), |p| p.to_string()),
        s.pid.map_or_else(|| "unknown".into(), |p| p.to_string()),
        s.srbchannel.label(),
        if s.device_threads.is_empty() {
            "-".to_string()
        } else {
            s.device_threads.join(", ")
        }
    )?;
    for w in &r.warnings {
        writeln!(out, "WARNING: {w}")?;
    }
    for note in &r.notes {
        writeln!(out, "note: {note}")?;
    }
    if let Some(b) = &r.baseline {
        writeln!(
            out,
            "idle baseline: the server alone for {:.1} s before the modes (row \"{}\")",
            b.window_s,
            report::BASELINE_LABEL
        )?;
    }
    let baseline = r.baseline.as_ref().map(|b| &b.columns);
    for &lat in &r.latencies_ms {
        let rows: Vec<&Summary> = r.summaries.iter().filter(|x| x.latency_ms == lat).collect();
        writeln!(out)?;
        writeln!(out, "== requested {lat} ms ==")?;
        report::write_table(out, &rows, baseline)?;
    }
    if r.latencies_ms.len() > 1 {
        writeln!(out)?;
        writeln!(out, "== CPU against requested latency ==")?;
        report::write_sweep(out, &r.summaries, baseline)?;
    }
    if let Some(c) = &r.chart {
        writeln!(out)?;
        writeln!(out, "chart: {}", c.display())?;
    }
    Ok(())
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

struct RunCtx<'a> {
    args: &'a BenchArgs,
    child: &'a ChildCommand,
    confs: &'a ClientConfs,
    procfs: &'a ProcFs,
    server_pid: Option<u32>,
    pipewire: bool,
}

/// A started client: ours (with its message channel) or the reference.
struct Started {
    child: Child,
    stdin: Option<ChildStdin>,
    messages: Option<Receiver<ChildMessage>>,
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

/// parec (record) / pacat (playback) at `latency_ms`, the way the reference runs, without its
/// stdio.
fn reference_command(ctx: &RunCtx, latency_ms: u32) -> (Command, &'static str) {
    let a = ctx.args;
    let (exe, device) = match a.direction {
        Direction::Record => ("parec", a.source.as_ref()),
        Direction::Playback => ("pacat", a.sink.as_ref()),
    };
    let mut cmd = Command::new(exe);
    cmd.arg(format!("--latency-msec={latency_ms}"))
        .arg("--raw")
        .arg("--format=s16ne")
        .arg(format!("--rate={SAMPLE_RATE}"))
        .arg(format!("--channels={CHANNELS}"))
        .arg("--client-name=micoff-bench reference");
    if a.direction == Direction::Playback {
        cmd.arg("--playback");
    }
    if let Some(d) = device {
        cmd.arg(format!("--device={d}"));
    }
    if let Some(s) = &a.server {
        cmd.arg(format!("--server={s}"));
    }
    // The reference keeps the user's own client.conf: it is "what an ordinary client gets".
    (cmd, exe)
}

/// What pacat/parec would play from: silence from /dev/zero (the same bytes per second as our
/// tone) for pacat, nothing for parec.
fn reference_stdin(direction: Direction) -> Result<Stdio, BenchError> {
    Ok(match direction {
        Direction::Playback => {
            Stdio::from(File::open("/dev/zero").map_err(|source| BenchError::File {
                path: "/dev/zero".into(),
                source,
            })?)
        }
        Direction::Record => Stdio::null(),
    })
}

fn spawn_reference(ctx: &RunCtx, latency_ms: u32) -> Result<Started, BenchError> {
    let (mut cmd, exe) = reference_command(ctx, latency_ms);
    let child = cmd
        .stdin(reference_stdin(ctx.args.direction)?)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|source| BenchError::Spawn {
            exe: exe.into(),
            source,
        })?;
    Ok(Started {
        child,
        stdin: None,
        messages: None,
    })
}

/// The fragsize (record) or tlength (playback) in bytes from parec/pacat's `-v` line
/// `Buffer metrics: maxlength=4194304, fragsize=1764`.
pub fn parse_buffer_metrics(line: &str, direction: Direction) -> Option<u32> {
    let rest = line.trim().strip_prefix("Buffer metrics:")?;
    let key = match direction {
        Direction::Record => "fragsize",
        Direction::Playback => "tlength",
    };
    rest.split(',').find_map(|kv| {
        let (k, v) = kv.trim().split_once('=')?;
        (k == key).then(|| v.trim().parse().ok()).flatten()
    })
}

/// What the server grants the reference: an identical parec/pacat run with `-v`, stopped as soon
/// as it prints its buffer metrics. Not the measured process itself: `-v` also asks the server
/// for timing every 50 ms, which would add work to the measured window.
fn reference_granted_us(ctx: &RunCtx, latency_ms: u32) -> Option<u64> {
    let (mut cmd, _) = reference_command(ctx, latency_ms);
    let mut child = cmd
        .arg("-v")
        .stdin(reference_stdin(ctx.args.direction).ok()?)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .ok()?;
    let stderr = child.stderr.take()?;
    let (tx, rx) = mpsc::channel();
    let direction = ctx.args.direction;
    std::thread::spawn(move || {
        // pacat ends status lines with \r, not \n: split on both.
        let mut reader = BufReader::new(stderr);
        let mut buf = Vec::new();
        while reader.read_until(b'\n', &mut buf).is_ok_and(|n| n > 0) {
            for line in String::from_utf8_lossy(&buf).split('\r') {
                if let Some(bytes) = parse_buffer_metrics(line, direction) {
                    let _ = tx.send(bytes);
                    return;
                }
            }
            buf.clear();
        }
    });
    let bytes = rx.recv_timeout(READY_TIMEOUT).ok();
    // Our own child, by its pid; then reaped.
    let _ = child.kill();
    let _ = child.wait();
    bytes.and_then(|b| client::bytes_to_us(b, SAMPLE_RATE, CHANNELS))
}

/// How long a client at `latency_ms` may take from its start until its data flows steadily:
/// [`READY_TIMEOUT`] for the first data, plus what [`client::SteadyFlow`] needs to see the flow
/// at that latency (at 10 s periods that is 90 s on its own).
fn ready_timeout(latency_ms: u32) -> Duration {
    READY_TIMEOUT + client::SteadyFlow::new(latency_ms).longest_wait()
}

/// Wait until parec/pacat moves data steadily: its stdout writes (parec) or stdin reads (pacat)
/// grow at about the stream's rate (see [`client::SteadyFlow`]).
fn wait_reference_flowing(
    ctx: &RunCtx,
    started: &mut Started,
    pid: u32,
    latency_ms: u32,
) -> Result<(), BenchError> {
    let deadline = Instant::now() + ready_timeout(latency_ms);
    let write = ctx.args.direction == Direction::Record;
    let mut flow = client::SteadyFlow::new(latency_ms);
    loop {
        if let Ok(Some(status)) = started.child.try_wait() {
            return Err(BenchError::Client(format!(
                "the reference client exited: {status}"
            )));
        }
        if let Some(v) = sample::io_syscalls(ctx.procfs, pid, write) {
            if flow.observe(Instant::now(), v) {
                return Ok(());
            }
        }
        if Instant::now() > deadline {
            return Err(BenchError::Timeout(
                "the reference client's data to flow".into(),
            ));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
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
        spawn_reference(ctx, latency_ms)?
    };
    let client_pid = started.child.id();
    let ready = if ours {
        Some(wait_ready(&started, latency_ms)?)
    } else {
        wait_reference_flowing(ctx, &mut started, client_pid, latency_ms)?;
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

    fn try_args(cli: &[&str]) -> Result<BenchArgs, clap::Error> {
        #[derive(clap::Parser)]
        struct Cli {
            #[command(flatten)]
            a: BenchArgs,
        }
        let argv = std::iter::once("bench").chain(cli.iter().copied());
        <Cli as clap::Parser>::try_parse_from(argv).map(|c| c.a)
    }

    fn args(cli: &[&str]) -> BenchArgs {
        try_args(cli).unwrap()
    }

    #[test]
    fn schedule_alternates() {
        let m = [Mode::SrbchannelOn, Mode::SrbchannelOff, Mode::Reference];
        assert_eq!(schedule(&m, 0), m.to_vec());
        assert_eq!(
            schedule(&m, 1),
            vec![Mode::Reference, Mode::SrbchannelOff, Mode::SrbchannelOn]
        );
    }

    #[test]
    fn modes_and_plan_are_known_before_the_first_window() {
        let a = args(&["record", "--compare", "parec"]);
        assert_eq!(
            modes_for(&a, false),
            vec![Mode::SrbchannelOn, Mode::SrbchannelOff, Mode::Reference]
        );
        // pipewire-pulse: on and off collapse into one socket-only mode, so a sweep there has
        // half the windows (the old loop counted them as if both ran: "[1/2]" and stop).
        assert_eq!(modes_for(&a, true), vec![Mode::Socket, Mode::Reference]);
        let p = plan(&[5, 10], 2, &[Mode::Socket]);
        assert_eq!(p.len(), 4);
        let p = plan(&[10, 20], 2, &[Mode::SrbchannelOn, Mode::SrbchannelOff]);
        assert_eq!(
            p,
            vec![
                (10, Mode::SrbchannelOn),
                (10, Mode::SrbchannelOff),
                (10, Mode::SrbchannelOff),
                (10, Mode::SrbchannelOn),
                (20, Mode::SrbchannelOn),
                (20, Mode::SrbchannelOff),
                (20, Mode::SrbchannelOff),
                (20, Mode::SrbchannelOn),
            ]
        );
    }

    #[test]
    fn clap_rejects_what_the_bench_cannot_use_as_a_usage_error() {
        // Every argument is checked by its clap value parser (the bench has no checks of its
        // own): a bad one exits with 2 before anything runs.
        for bad in [
            &["record", "--duration", "0"][..],
            &["record", "--duration", "NaN"],
            &["record", "--duration", "inf"],
            &["record", "--baseline", "NaN"],
            &["record", "--baseline", "-1"],
            &["record", "--latency-ms", ""],
            &["record", "--latency-ms", "10,"],
            &["record", "--latency-ms", "0"],
            &["record", "--latency-ms", "10001"],
            &["record", "--repeat", "0"],
        ] {
            let e = try_args(bad)
                .err()
                .unwrap_or_else(|| panic!("{bad:?} accepted"));
            assert_eq!(e.exit_code(), EXIT_USAGE, "{bad:?}: {e}");
        }
        let a = args(&["record", "--baseline", "0"]);
        assert_eq!(a.baseline, Some(0.0));
        assert_eq!(a.latency_ms, vec![10]);
        assert_eq!(
            args(&["record", "--latency-ms", "5,10"]).latency_ms,
            [5, 10]
        );
    }

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
    fn client_conf_overrides_shm_around_the_users_files() {
        let inc = [
            PathBuf::from("/etc/pulse/client.conf"),
            PathBuf::from("/etc/pulse/client.conf.d/50-x.conf"),
        ];
        let t = client_conf_text(&inc, false);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(
            lines[1..],
            [
                "enable-shm = no",
                "enable-memfd = no",
                ".include /etc/pulse/client.conf",
                ".include /etc/pulse/client.conf.d/50-x.conf",
                "enable-shm = no",
                "enable-memfd = no",
            ]
        );
        let t = client_conf_text(&[], true);
        assert!(!t.contains(".include"));
        assert!(t.ends_with("enable-shm = yes\nenable-memfd = yes\n"));
        assert!(!includable(Path::new("/home/a#b/client.conf")));
        assert!(includable(Path::new("/home/a b/client.conf")));
    }

    #[test]
    fn base_conf_is_found_the_way_libpulse_finds_it() {
        let dir = tempfile::tempdir().unwrap();
        let own = dir.path().join("own.conf");
        std::fs::write(&own, "").unwrap();
        let own_s = own.display().to_string();
        let env = move |k: &str| (k == "PULSE_CLIENTCONFIG").then(|| own_s.clone());
        assert_eq!(base_client_conf(&env), Some(own.clone()));
        // Set but missing: libpulse reads no file at all.
        let env = |k: &str| (k == "PULSE_CLIENTCONFIG").then(|| "/nonexistent/x.conf".into());
        assert_eq!(base_client_conf(&env), None);

        let home = dir.path().display().to_string();
        std::fs::create_dir_all(dir.path().join(".config/pulse")).unwrap();
        std::fs::write(dir.path().join(".config/pulse/client.conf"), "").unwrap();
        let h = home.clone();
        let env = move |k: &str| (k == "HOME").then(|| h.clone());
        assert_eq!(
            base_client_conf(&env),
            Some(dir.path().join(".config/pulse/client.conf"))
        );
        // ~/.pulse/client.conf comes first.
        std::fs::create_dir_all(dir.path().join(".pulse")).unwrap();
        std::fs::write(dir.path().join(".pulse/client.conf"), "").unwrap();
        let h = home.clone();
        let env = move |k: &str| (k == "HOME").then(|| h.clone());
        assert_eq!(
            base_client_conf(&env),
            Some(dir.path().join(".pulse/client.conf"))
        );
        // XDG_CONFIG_HOME is not where libpulse looks.
        let xdg = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(xdg.path().join("pulse")).unwrap();
        std::fs::write(xdg.path().join("pulse/client.conf"), "").unwrap();
        let x = xdg.path().display().to_string();
        let env = move |k: &str| match k {
            "XDG_CONFIG_HOME" => Some(x.clone()),
            "HOME" => Some("/nonexistent".into()),
            _ => None,
        };
        assert_ne!(
            base_client_conf(&env),
            Some(xdg.path().join("pulse/client.conf"))
        );
    }

    #[test]
    fn conf_chain_adds_the_drop_ins_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().join("client.conf");
        std::fs::write(&base, "").unwrap();
        let d = dir.path().join("client.conf.d");
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("50-b.conf"), "").unwrap();
        std::fs::write(d.join("10-a.conf"), "").unwrap();
        std::fs::write(d.join("README"), "").unwrap();
        std::fs::create_dir_all(d.join("20-dir.conf")).unwrap();
        std::os::unix::fs::symlink("/nonexistent", d.join("01-dangling.conf")).unwrap();
        let b = base.display().to_string();
        let env = move |k: &str| (k == "PULSE_CLIENTCONFIG").then(|| b.clone());
        assert_eq!(
            client_conf_chain(&env),
            vec![base.clone(), d.join("10-a.conf"), d.join("50-b.conf")]
        );
    }

    #[test]
    fn buffer_metrics_of_parec_and_pacat() {
        let rec = "Buffer metrics: maxlength=4194304, fragsize=1764";
        assert_eq!(parse_buffer_metrics(rec, Direction::Record), Some(1764));
        assert_eq!(parse_buffer_metrics(rec, Direction::Playback), None);
        let play = "Buffer metrics: maxlength=4194304, tlength=3528, prebuf=3532, minreq=1764\n";
        assert_eq!(parse_buffer_metrics(play, Direction::Playback), Some(3528));
        assert_eq!(
            parse_buffer_metrics("Time: 0.1 sec", Direction::Record),
            None
        );
    }

    #[test]
    fn srbchannel_detail_names_the_likely_cause() {
        assert!(srbchannel_detail(Some(29), true).contains("protocol 29"));
        assert!(srbchannel_detail(Some(35), false).contains("unix socket"));
        assert!(srbchannel_detail(Some(35), true).contains("srbchannel=false"));
    }

    fn run(mode: Mode, lat: u32, cpu: f64, srb: SrbchannelState) -> Run {
        Run {
            mode,
            latency_ms: lat,
            window_s: 10.0,
            columns: Columns {
                total: report::Figures {
                    cpu_pct: cpu,
                    ..Default::default()
                },
                ..Default::default()
            },
            granted_us: Some(u64::from(lat) * 1000),
            latency_us: None,
            srbchannel: srb,
            callbacks_per_s: None,
            client_threads: vec![],
            server_threads: vec![],
        }
    }

    fn report_of(runs: Vec<Run>, latencies_ms: Vec<u32>) -> Report {
        Report {
            direction: Direction::Record,
            window_s: 10.0,
            repeat: 1,
            latencies_ms,
            server: ServerReport {
                name: "pulseaudio".into(),
                version: "16.1".into(),
                protocol_version: Some(35),
                pid: Some(7),
                srbchannel: SrbchannelAvailability::from_runs(&runs, false),
                device_threads: vec!["null-sink".into()],
                ..Default::default()
            },
            baseline: Some(Baseline {
                window_s: 10.0,
                columns: Columns {
                    server_main: report::Figures {
                        cpu_pct: 0.25,
                        ..Default::default()
                    },
                    total: report::Figures {
                        cpu_pct: 0.25,
                        ..Default::default()
                    },
                    ..Default::default()
                },
                server_threads: vec![],
            }),
            summaries: report::summarize(&runs),
            runs,
            chart: Some(PathBuf::from("results/x.svg")),
            warnings: vec![],
            notes: vec![],
        }
    }

    #[test]
    fn text_report_has_header_tables_baseline_and_sweep() {
        use SrbchannelState::{Active, Inactive};
        let runs = vec![
            run(Mode::SrbchannelOn, 10, 5.0, Active),
            run(Mode::SrbchannelOff, 10, 6.0, Inactive),
            run(Mode::SrbchannelOn, 20, 3.0, Active),
            run(Mode::SrbchannelOff, 20, 3.5, Inactive),
        ];
        let r = report_of(runs, vec![10, 20]);
        let mut buf = Vec::new();
        write_report(&mut buf, &r).unwrap();
        let text = String::from_utf8(buf).unwrap();
        assert!(
            text.contains("server: pulseaudio 16.1 (protocol 35, pid 7), srbchannel available"),
            "{text}"
        );
        assert!(text.contains("== requested 10 ms =="));
        assert!(text.contains("== requested 20 ms =="));
        assert!(text.contains("== CPU against requested latency =="));
        assert!(text.contains("+16.7 %"), "{text}");
        assert!(text.contains("server alone (idle)"), "{text}");
        assert!(
            text.contains("| - | server alone (idle) | - | - | 0.25 |"),
            "{text}"
        );
        assert!(text.contains("chart: results/x.svg"));
        assert!(!text.contains("WARNING"));
        let json = serde_json::to_string(&r).unwrap();
        assert!(json.contains(r#""srbchannel":"available""#), "{json}");
        let back: Report = serde_json::from_str(&json).unwrap();
        assert_eq!(back.summaries.len(), 4);
    }

    #[test]
    fn srbchannel_not_granted_voids_the_saving_in_text_and_json() {
        use SrbchannelState::Inactive;
        let runs = vec![
            run(Mode::SrbchannelOn, 10, 5.0, Inactive),
            run(Mode::SrbchannelOff, 10, 6.0, Inactive),
        ];
        let mut r = report_of(runs, vec![10]);
        assert_eq!(r.server.srbchannel, SrbchannelAvailability::NotGranted);
        r.warnings
            .push("srbchannel was NOT granted to the `on` client (x)".into());
        let mut buf = Vec::new();
        write_report(&mut buf, &r).unwrap();
        let text = String::from_utf8(buf).unwrap();
        assert!(
            text.contains("srbchannel NOT GRANTED to the on client"),
            "{text}"
        );
        assert!(
            text.contains("WARNING: srbchannel was NOT granted"),
            "{text}"
        );
        assert!(text.contains("n/a"), "{text}");
        assert!(!text.contains("+16.7 %"), "{text}");
        assert!(
            text.contains("on and off are the same client here"),
            "{text}"
        );
        let json: serde_json::Value = serde_json::to_value(&r).unwrap();
        assert_eq!(json["server"]["srbchannel"], "not_granted");
        let on = &json["summaries"][0];
        assert_eq!(on["mode"], "srbchannel_on");
        assert!(on["cpu_saving_pct"].is_null());
        assert!(on["saving_note"].as_str().unwrap().contains("same client"));
    }

    #[test]
    fn json_spells_not_applicable_one_way() {
        let runs = vec![run(Mode::Socket, 10, 1.0, SrbchannelState::NotApplicable)];
        let mut r = report_of(runs, vec![10]);
        r.server.pipewire = true;
        r.server.srbchannel = SrbchannelAvailability::from_runs(&r.runs, true);
        let json = serde_json::to_string(&r).unwrap();
        assert!(!json.contains("not applicable"), "{json}");
        assert_eq!(json.matches("\"not_applicable\"").count(), 3, "{json}");
    }
}
