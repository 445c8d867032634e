//! The parent side of the bench: per latency, per repeat, per mode (alternating), start the client
//! as a child process, wait for its data to flow, sample the client's and the server's threads
//! over the window, stop the client, and turn it all into a [`Report`].

use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::client::{ChildMessage, DoneInfo, ReadyInfo, CHANNELS, SAMPLE_RATE};
use crate::report::{self, Columns, Mode, Run, SrbchannelState, Summary};
use crate::sample;
use crate::server;
use crate::{BenchArgs, ChildCommand, CompareArg, Direction, SrbchannelArg};
use micoff_proc::ProcFs;

/// How long a client may take to deliver its first data (an idle null sink takes about 2 s).
const READY_TIMEOUT: Duration = Duration::from_secs(20);
const DONE_TIMEOUT: Duration = Duration::from_secs(5);

#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    #[error("bad arguments: {0}")]
    Usage(String),
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

/// The server as the bench saw it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerReport {
    pub name: String,
    pub version: String,
    pub pid: Option<u32>,
    pub socket: Option<PathBuf>,
    pub pipewire: bool,
    /// "available" on PulseAudio, "not applicable" on pipewire-pulse.
    pub srbchannel: String,
    /// Names of the server's non-main threads that did work in any window.
    pub device_threads: Vec<String>,
}

/// Everything the bench measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub direction: Direction,
    pub window_s: f64,
    pub repeat: u32,
    pub latencies_ms: Vec<u32>,
    pub server: ServerReport,
    pub summaries: Vec<Summary>,
    pub runs: Vec<Run>,
    pub chart: Option<PathBuf>,
    pub notes: Vec<String>,
}

/// Private client.conf files for the two modes, removed on drop.
struct ClientConfs {
    dir: PathBuf,
    on: PathBuf,
    off: PathBuf,
}

impl ClientConfs {
    fn create() -> Result<Self, BenchError> {
        let dir = std::env::temp_dir().join(format!("micoff-bench-{}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|source| BenchError::File {
            path: dir.clone(),
            source,
        })?;
        let base = base_client_conf(&|k| std::env::var(k).ok());
        let on = dir.join("client-shm-on.conf");
        let off = dir.join("client-shm-off.conf");
        for (path, value) in [(&on, "yes"), (&off, "no")] {
            let text = client_conf_text(base.as_deref(), value == "yes");
            std::fs::write(path, text).map_err(|source| BenchError::File {
                path: path.clone(),
                source,
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

/// The client.conf libpulse would read for this user, to include in ours so that other settings
/// (default-server, cookie, ...) stay as they are. Only shared memory is overridden.
pub fn base_client_conf(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let mut candidates = Vec::new();
    if let Some(p) = env("PULSE_CLIENTCONFIG") {
        candidates.push(PathBuf::from(p));
    }
    if let Some(x) = env("XDG_CONFIG_HOME") {
        candidates.push(Path::new(&x).join("pulse/client.conf"));
    }
    if let Some(h) = env("HOME") {
        candidates.push(Path::new(&h).join(".config/pulse/client.conf"));
    }
    candidates.push(PathBuf::from("/etc/pulse/client.conf"));
    candidates.into_iter().find(|p| p.is_file())
}

/// Our client.conf: the user's settings (`.include`), then shared memory on or off.
pub fn client_conf_text(base: Option<&Path>, shm: bool) -> String {
    let mut s = String::from("# written by micoff-host bench; removed when it ends\n");
    if let Some(b) = base {
        s.push_str(&format!(".include {}\n", b.display()));
    }
    let v = if shm { "yes" } else { "no" };
    s.push_str(&format!("enable-shm = {v}\nenable-memfd = {v}\n"));
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

fn initial_modes(args: &BenchArgs) -> Vec<Mode> {
    let mut m = match args.srbchannel {
        SrbchannelArg::On => vec![Mode::SrbchannelOn],
        SrbchannelArg::Off => vec![Mode::SrbchannelOff],
        SrbchannelArg::Both => vec![Mode::SrbchannelOn, Mode::SrbchannelOff],
    };
    if args.compare == Some(CompareArg::Parec) {
        m.push(Mode::Reference);
    }
    m
}

/// Run the bench and write the report.
pub fn run_bench(
    args: &BenchArgs,
    child: &ChildCommand,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<(), BenchError> {
    if !(args.duration > 0.0 && args.duration.is_finite()) {
        return Err(BenchError::Usage("--duration must be > 0".into()));
    }
    let confs = ClientConfs::create()?;
    let procfs = ProcFs::system();
    let env = |k: &str| std::env::var(k).ok();
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

    let mut modes = initial_modes(args);
    let mut srv = ServerReport {
        pid: server_pid,
        socket: socket.clone(),
        srbchannel: "available".into(),
        ..ServerReport::default()
    };
    let mut notes = Vec::new();
    let mut runs: Vec<Run> = Vec::new();
    let total_windows = args.latency_ms.len() * args.repeat as usize * modes.len();
    let mut n = 0usize;
    let started = Instant::now();
    for &latency_ms in &args.latency_ms {
        for rep in 0..args.repeat {
            for mode in schedule(&modes.clone(), rep) {
                if !modes.contains(&mode) {
                    continue; // dropped after the server turned out to be pipewire-pulse
                }
                n += 1;
                write!(
                    err,
                    "[{n}/{total_windows}] {} {latency_ms} ms, {}: ",
                    args.direction.as_str(),
                    mode.label()
                )?;
                err.flush()?;
                let ctx = RunCtx {
                    args,
                    child,
                    confs: &confs,
                    procfs: &procfs,
                    server_pid,
                    pipewire: srv.pipewire,
                };
                let (mut run, ready) = measure(&ctx, mode, latency_ms, err)?;
                if let Some(ready) = ready {
                    if srv.name.is_empty() {
                        srv.name = ready.server_name.clone();
                        srv.version = ready.server_version.clone();
                    }
                    if server::is_pipewire(&ready.server_name) && !srv.pipewire {
                        srv.pipewire = true;
                        srv.srbchannel = "not applicable".into();
                        let note = format!(
                            "{} ({}) implements neither shared memory nor srbchannel: srbchannel not applicable, measuring the socket path only",
                            ready.server_name, ready.server_version
                        );
                        writeln!(err, "note: {note}")?;
                        notes.push(note);
                        run.mode = Mode::Socket;
                        run.srbchannel = SrbchannelState::NotApplicable;
                        modes.retain(|m| *m == Mode::Reference);
                        modes.insert(0, Mode::Socket);
                    }
                }
                writeln!(
                    err,
                    "total {:.2} % CPU, {:.0} wakeups/s ({:.0} s elapsed)",
                    run.columns.total.cpu_pct,
                    run.columns.total.wakeups_per_s,
                    started.elapsed().as_secs_f64()
                )?;
                runs.push(run);
            }
        }
    }

    let mut device: Vec<String> = runs
        .iter()
        .flat_map(|r| r.server_threads.iter())
        .filter(|t| Some(t.tid) != server_pid && (t.cpu_pct > 0.0 || t.wakeups_per_s > 0.0))
        .map(|t| t.name.clone())
        .collect();
    device.sort();
    device.dedup();
    srv.device_threads = device;
    if srv.pipewire {
        notes.push(
            "pipewire-pulse: the server columns are the pipewire-pulse process (socket holder); the graph itself runs in the pipewire daemon".into(),
        );
    }

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
        summaries,
        runs,
        chart,
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

/// The text report: a header, one table per latency, the sweep table and chart path.
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
        "server: {} {} (pid {}), srbchannel {}; device thread(s): {}",
        s.name,
        s.version,
        s.pid.map_or_else(|| "unknown".into(), |p| p.to_string()),
        s.srbchannel,
        if s.device_threads.is_empty() {
            "-".to_string()
        } else {
            s.device_threads.join(", ")
        }
    )?;
    for note in &r.notes {
        writeln!(out, "note: {note}")?;
    }
    for &lat in &r.latencies_ms {
        let rows: Vec<&Summary> = r.summaries.iter().filter(|x| x.latency_ms == lat).collect();
        writeln!(out)?;
        writeln!(out, "== requested {lat} ms ==")?;
        report::write_table(out, &rows)?;
    }
    if r.latencies_ms.len() > 1 {
        writeln!(out)?;
        writeln!(out, "== CPU against requested latency ==")?;
        report::write_sweep(out, &r.summaries)?;
    }
    if let Some(c) = &r.chart {
        writeln!(out)?;
        writeln!(out, "chart: {}", c.display())?;
    }
    Ok(())
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

fn spawn_reference(ctx: &RunCtx, latency_ms: u32) -> Result<Started, BenchError> {
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
    let stdin = match a.direction {
        // pacat plays silence from /dev/zero: the same bytes per second as our tone.
        Direction::Playback => {
            Stdio::from(File::open("/dev/zero").map_err(|source| BenchError::File {
                path: "/dev/zero".into(),
                source,
            })?)
        }
        Direction::Record => Stdio::null(),
    };
    // The reference keeps the user's own client.conf: it is "what an ordinary client gets".
    let child = cmd
        .stdin(stdin)
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

/// Wait until parec/pacat moves data: its stdout writes (parec) or stdin reads (pacat) grow.
fn wait_reference_flowing(ctx: &RunCtx, started: &mut Started, pid: u32) -> Result<(), BenchError> {
    let deadline = Instant::now() + READY_TIMEOUT;
    let write = ctx.args.direction == Direction::Record;
    let mut first: Option<u64> = None;
    loop {
        if let Ok(Some(status)) = started.child.try_wait() {
            return Err(BenchError::Client(format!(
                "the reference client exited: {status}"
            )));
        }
        if let Some(v) = sample::io_syscalls(ctx.procfs, pid, write) {
            match first {
                None => first = Some(v),
                Some(f) if v >= f + 3 => return Ok(()),
                Some(_) => {}
            }
        }
        if Instant::now() > deadline {
            return Err(BenchError::Timeout(
                "the reference client's first data".into(),
            ));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn wait_ready(started: &Started) -> Result<ReadyInfo, BenchError> {
    let Some(rx) = &started.messages else {
        return Err(BenchError::Client("no message channel".into()));
    };
    match rx.recv_timeout(READY_TIMEOUT) {
        Ok(ChildMessage::Ready(r)) => Ok(r),
        Ok(ChildMessage::Error { message }) => Err(BenchError::Client(message)),
        Ok(ChildMessage::Done(_)) => Err(BenchError::Client("done before ready".into())),
        Err(RecvTimeoutError::Timeout) => Err(BenchError::Timeout(
            "the client's stream to start and deliver data".into(),
        )),
        Err(RecvTimeoutError::Disconnected) => Err(BenchError::Client(
            "exited before its stream was ready".into(),
        )),
    }
}

/// One window of one mode.
fn measure(
    ctx: &RunCtx,
    mode: Mode,
    latency_ms: u32,
    err: &mut dyn Write,
) -> Result<(Run, Option<ReadyInfo>), BenchError> {
    let ours = mode != Mode::Reference;
    let mut started = if ours {
        spawn_ours(ctx, mode, latency_ms)?
    } else {
        spawn_reference(ctx, latency_ms)?
    };
    let client_pid = started.child.id();
    let ready = if ours {
        Some(wait_ready(&started)?)
    } else {
        wait_reference_flowing(ctx, &mut started, client_pid)?;
        None
    };
    let ready_at = Instant::now();
    std::thread::sleep(Duration::from_millis(ctx.args.warmup_ms));

    let srbchannel = if ctx.pipewire
        || ready
            .as_ref()
            .is_some_and(|r| server::is_pipewire(&r.server_name))
    {
        SrbchannelState::NotApplicable
    } else {
        SrbchannelState::from_eventfds(server::count_eventfds(ctx.procfs.root(), client_pid))
    };

    let window = Duration::from_secs_f64(ctx.args.duration);
    let pids: Vec<u32> = std::iter::once(client_pid).chain(ctx.server_pid).collect();
    let before = sample::snapshot(ctx.procfs, &pids);
    progress_sleep(window, err)?;
    let after = sample::snapshot(ctx.procfs, &pids);
    let rates = micoff_proc::rates(&before, &after);
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

    let buffer = done
        .as_ref()
        .map(|d| d.buffer)
        .or(ready.as_ref().map(|r| r.buffer));
    let granted_us = buffer.and_then(|b| b.granted_us(ctx.args.direction, SAMPLE_RATE, CHANNELS));
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
    Ok((run, ready))
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
    fn schedule_alternates() {
        let m = [Mode::SrbchannelOn, Mode::SrbchannelOff, Mode::Reference];
        assert_eq!(schedule(&m, 0), m.to_vec());
        assert_eq!(
            schedule(&m, 1),
            vec![Mode::Reference, Mode::SrbchannelOff, Mode::SrbchannelOn]
        );
    }

    #[test]
    fn client_conf_includes_the_users_and_overrides_shm() {
        let t = client_conf_text(Some(Path::new("/etc/pulse/client.conf")), false);
        assert!(t.contains(".include /etc/pulse/client.conf\n"));
        assert!(t.ends_with("enable-shm = no\nenable-memfd = no\n"));
        let t = client_conf_text(None, true);
        assert!(!t.contains(".include"));
        assert!(t.contains("enable-shm = yes"));
    }

    #[test]
    fn base_conf_prefers_pulse_clientconfig() {
        let dir = tempfile::tempdir().unwrap();
        let own = dir.path().join("own.conf");
        std::fs::write(&own, "").unwrap();
        let own_s = own.display().to_string();
        let env = move |k: &str| (k == "PULSE_CLIENTCONFIG").then(|| own_s.clone());
        assert_eq!(base_client_conf(&env), Some(own.clone()));
        let home = dir.path().display().to_string();
        std::fs::create_dir_all(dir.path().join(".config/pulse")).unwrap();
        std::fs::write(dir.path().join(".config/pulse/client.conf"), "").unwrap();
        let env = move |k: &str| (k == "HOME").then(|| home.clone());
        assert_eq!(
            base_client_conf(&env),
            Some(dir.path().join(".config/pulse/client.conf"))
        );
    }

    #[test]
    fn text_report_has_header_tables_and_sweep() {
        let run = |mode, lat, cpu| Run {
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
            srbchannel: SrbchannelState::Active,
            callbacks_per_s: None,
            client_threads: vec![],
            server_threads: vec![],
        };
        let runs = vec![
            run(Mode::SrbchannelOn, 10, 5.0),
            run(Mode::SrbchannelOff, 10, 6.0),
            run(Mode::SrbchannelOn, 20, 3.0),
            run(Mode::SrbchannelOff, 20, 3.5),
        ];
        let r = Report {
            direction: Direction::Record,
            window_s: 10.0,
            repeat: 1,
            latencies_ms: vec![10, 20],
            server: ServerReport {
                name: "pulseaudio".into(),
                version: "16.1".into(),
                pid: Some(7),
                srbchannel: "available".into(),
                device_threads: vec!["null-sink".into()],
                ..Default::default()
            },
            summaries: report::summarize(&runs),
            runs,
            chart: Some(PathBuf::from("results/x.svg")),
            notes: vec![],
        };
        let mut buf = Vec::new();
        write_report(&mut buf, &r).unwrap();
        let text = String::from_utf8(buf).unwrap();
        assert!(text.contains("server: pulseaudio 16.1 (pid 7)"), "{text}");
        assert!(text.contains("== requested 10 ms =="));
        assert!(text.contains("== requested 20 ms =="));
        assert!(text.contains("== CPU against requested latency =="));
        assert!(text.contains("+16.7 %"), "{text}");
        assert!(text.contains("chart: results/x.svg"));
        let json = serde_json::to_string(&r).unwrap();
        let back: Report = serde_json::from_str(&json).unwrap();
        assert_eq!(back.summaries.len(), 4);
    }
}
