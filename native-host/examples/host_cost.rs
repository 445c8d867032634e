//! What the native host costs: the real `micoff-host` in native messaging mode, measured from
//! outside in `--modes` alternated run by run: `subscription` (a `cpu` subscription at
//! `--interval-ms`), `history` (`phase capturing` only: samples kept, nothing sent), `idle`. A
//! stand-in browser (this program again, `--threads` idle, `--active` waking every 10 ms) launches
//! the host as Chromium does, against a private PulseAudio unless `--no-pulse`. After the first
//! event it measures for `--seconds` the host's CPU (`/proc/<pid>/stat`, `schedstat`) and peak RSS;
//! the runs' median comes last. `cargo run --release -p micoff-host --example host_cost -- [--runs
//! 3] [--host PATH] ...`; figures: docs/design/host-cost.md.
#![allow(clippy::print_stderr)]

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use micoff_proc::parse::{parse_schedstat, parse_stat};
use micoff_proc::ProcFs;
use micoff_testkit::host::chrome_origin;
use micoff_testkit::{AudioRig, HostClient, PulseRig};

type Error = Box<dyn std::error::Error>;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Subscription,
    History,
    Idle,
}

impl Mode {
    fn parse(s: &str) -> Result<Self, Error> {
        match s {
            "subscription" => Ok(Self::Subscription),
            "history" => Ok(Self::History),
            "idle" => Ok(Self::Idle),
            other => Err(format!("unknown mode {other} (subscription, history, idle)").into()),
        }
    }

    fn name(self) -> &'static str {
        match self {
            Self::Subscription => "subscription",
            Self::History => "history",
            Self::Idle => "idle",
        }
    }
}

struct Options {
    modes: Vec<Mode>,
    threads: usize,
    active: usize,
    seconds: u64,
    runs: usize,
    interval_ms: u64,
    pulse: bool,
    host: PathBuf,
}

fn main() -> Result<(), Error> {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("--as-browser") {
        return stand_in_browser(&args[2..]);
    }
    let mut o = Options {
        modes: vec![Mode::Subscription],
        threads: 300,
        active: 0,
        seconds: 60,
        runs: 3,
        interval_ms: 1000,
        pulse: true,
        host: micoff_testkit::host_beside_example()?,
    };
    let mut i = 1;
    while i < args.len() {
        let val = args.get(i + 1).cloned().unwrap_or_default();
        match args[i].as_str() {
            "--threads" => o.threads = val.parse()?,
            "--active" => o.active = val.parse()?,
            "--seconds" => o.seconds = val.parse()?,
            "--runs" => o.runs = val.parse::<usize>()?.max(1),
            "--interval-ms" => o.interval_ms = val.parse()?,
            "--modes" => {
                o.modes = val.split(',').map(Mode::parse).collect::<Result<_, _>>()?;
            }
            "--host" => o.host = PathBuf::from(val),
            "--no-pulse" => {
                o.pulse = false;
                i += 1;
                continue;
            }
            other => return Err(format!("unknown argument {other}").into()),
        }
        i += 2;
    }
    if !o.host.is_file() {
        return Err(format!(
            "{} not found: build it first (cargo build --release -p micoff-host) or pass --host",
            o.host.display()
        )
        .into());
    }
    let pulse = if !o.pulse {
        None
    } else if micoff_testkit::which("pulseaudio") {
        Some(PulseRig::start())
    } else {
        eprintln!("note: pulseaudio not installed: measuring without an audio server");
        None
    };
    let mut out = std::io::stdout().lock();
    let modes: Vec<&str> = o.modes.iter().map(|m| m.name()).collect();
    writeln!(
        out,
        "host {}; stand-in browser with {} threads ({} waking every 10 ms); audio server: {}; \
         modes {} (cpu subscription every {} ms); {} s per run, {} runs; load average {}",
        o.host.display(),
        o.threads,
        o.active,
        pulse.as_ref().map_or("none".to_owned(), |p| format!(
            "private pulseaudio ({})",
            p.socket().display()
        )),
        modes.join(", "),
        o.interval_ms,
        o.seconds,
        o.runs,
        load_average()
    )?;
    let mut results: Vec<(Mode, RunResult)> = Vec::new();
    for run in 1..=o.runs {
        // The order of the modes turns by one each run: the machine's load drifts over a run.
        for k in 0..o.modes.len() {
            let mode = o.modes[(k + run - 1) % o.modes.len()];
            let r = measure(&o, pulse.as_ref(), mode)?;
            writeln!(out, "run {run} {}: {}", mode.name(), r.line())?;
            out.flush()?;
            results.push((mode, r));
        }
    }
    for mode in &o.modes {
        let of: Vec<&RunResult> = results
            .iter()
            .filter(|(m, _)| m == mode)
            .map(|(_, r)| r)
            .collect();
        let median = |f: fn(&RunResult) -> f64| {
            let mut v: Vec<f64> = of.iter().map(|r| f(r)).collect();
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        };
        writeln!(
            out,
            "median of {} runs, {}: host CPU {:.3} % of one core (stat), {:.3} % (schedstat), peak \
             RSS {:.1} MiB (VmHWM); {:.0} events, {:.0} bytes per event; {:.0} history samples",
            of.len(),
            mode.name(),
            median(|r| r.cpu_pct_stat),
            median(|r| r.cpu_pct_schedstat),
            median(|r| r.vm_hwm_kib as f64 / 1024.0),
            median(|r| r.events as f64),
            median(|r| r.bytes_per_event as f64),
            median(|r| r.history_points as f64),
        )?;
    }
    writeln!(out, "load average at the end: {}", load_average())?;
    drop(pulse);
    Ok(())
}

// ------------------------------------------------------------------------------------------------
// The stand-in browser

fn stand_in_browser(args: &[String]) -> Result<(), Error> {
    let threads: usize = args.first().ok_or("threads")?.parse()?;
    let active: usize = args.get(1).ok_or("active")?.parse()?;
    let host = args.get(2).ok_or("host")?;
    // Name the process like Chromium's main process (comm, what the host's walk looks at).
    let name = c"chromium";
    // SAFETY: PR_SET_NAME reads a NUL-terminated string of at most 16 bytes.
    unsafe { libc::prctl(libc::PR_SET_NAME, name.as_ptr() as libc::c_ulong, 0, 0, 0) };
    for i in 0..threads {
        // The waking ones are named as audio threads: the host's history counts them.
        let name = if i < active {
            format!("audio-{i:03}")
        } else {
            format!("idle-{i:03}")
        };
        let builder = std::thread::Builder::new().name(name);
        if i < active {
            builder.spawn(|| loop {
                std::thread::sleep(Duration::from_millis(10));
            })?;
        } else {
            builder.spawn(|| loop {
                std::thread::park();
            })?;
        }
    }
    // The host gets our stdin/stdout (the benchmark's pipes), like a browser's native port.
    let status = Command::new(host)
        .arg(chrome_origin())
        .stdin(Stdio::inherit())
        .stdout(Stdio::inherit())
        .stderr(Stdio::inherit())
        .status()?;
    std::process::exit(status.code().unwrap_or(1));
}

// ------------------------------------------------------------------------------------------------
// One run

struct RunResult {
    seconds: f64,
    cpu_pct_stat: f64,
    cpu_pct_schedstat: f64,
    vm_hwm_kib: u64,
    vm_rss_kib: u64,
    events: usize,
    threads_per_report: usize,
    processes_per_report: usize,
    bytes_per_event: usize,
    /// `history` mode: the samples the host's history held after the window.
    history_points: usize,
}

impl RunResult {
    fn line(&self) -> String {
        format!(
            "host CPU {:.3} % of one core (stat utime+stime), {:.3} % (threads' schedstat); peak \
             RSS {:.1} MiB (VmHWM; now {:.1} MiB); {} cpu events in {:.1} s, {} processes / {} \
             threads per report, {} bytes per event, {} history samples",
            self.cpu_pct_stat,
            self.cpu_pct_schedstat,
            self.vm_hwm_kib as f64 / 1024.0,
            self.vm_rss_kib as f64 / 1024.0,
            self.events,
            self.seconds,
            self.processes_per_report,
            self.threads_per_report,
            self.bytes_per_event,
            self.history_points
        )
    }
}

/// The stand-in browser with the host inside, talked to over its stdin/stdout.
struct Session(HostClient);

impl Session {
    fn start(o: &Options, pulse: Option<&PulseRig>) -> Result<Self, Error> {
        let mut cmd = Command::new(std::env::current_exe()?);
        cmd.args([
            "--as-browser",
            &o.threads.to_string(),
            &o.active.to_string(),
            &o.host.to_string_lossy(),
        ])
        .stderr(Stdio::inherit());
        match pulse {
            Some(p) => p.env(&mut cmd),
            // No server: make sure the host does not find the desktop's.
            None => {
                cmd.env("PULSE_SERVER", "unix:/nonexistent/micoff-bench/native");
            }
        };
        cmd.env(
            "RUST_LOG",
            "micoff_host=warn,micoff_native=warn,micoff_backend=warn",
        );
        Ok(Self(HostClient::spawn(cmd)?))
    }

    fn send(&mut self, request: serde_json::Value) -> Result<(), Error> {
        self.0.try_send(request)?;
        Ok(())
    }

    /// The next frame: (body bytes, JSON).
    fn next(&self, limit: Duration) -> Result<(usize, serde_json::Value), Error> {
        let body = self.0.next_body(limit)?;
        Ok((body.len(), serde_json::from_slice(&body)?))
    }
}

fn measure(o: &Options, pulse: Option<&PulseRig>, mode: Mode) -> Result<RunResult, Error> {
    let mut s = Session::start(o, pulse)?;
    s.send(serde_json::json!({"type": "version"}))?;
    let (_, version) = s.next(Duration::from_secs(10))?;
    let host_pid = version["result"]["pid"]
        .as_u64()
        .ok_or_else(|| format!("no pid in {version}"))? as u32;
    match mode {
        Mode::Subscription => {
            s.send(serde_json::json!({
                "type": "subscribe", "topic": "cpu", "interval_ms": o.interval_ms
            }))?;
            let limit = Duration::from_millis(o.interval_ms * 3 + 5000);
            // The subscribe result, then the first event: from here on the host is in its steady
            // state.
            loop {
                let (_, v) = s.next(limit)?;
                if v["type"] == "event" {
                    check_event(&v)?;
                    break;
                }
                if v["type"] == "error" {
                    return Err(format!("subscribe failed: {v}").into());
                }
            }
        }
        Mode::History => {
            s.send(serde_json::json!({"type": "phase", "phase": "capturing"}))?;
            let (_, v) = s.next(Duration::from_secs(10))?;
            if v["type"] != "result" {
                return Err(format!("phase failed: {v}").into());
            }
            // Past the first sample (the baseline tick is at once, the first sample 5 s later).
            std::thread::sleep(Duration::from_millis(5500));
        }
        Mode::Idle => std::thread::sleep(Duration::from_secs(1)),
    }
    let start_stat = stat_ticks(host_pid)?;
    let start_sched = schedstat_ns(host_pid)?;
    let start = Instant::now();
    let end = start + Duration::from_secs(o.seconds);
    let (mut events, mut bytes, mut threads, mut processes) = (0usize, 0usize, 0usize, 0usize);
    while Instant::now() < end {
        let left = end.saturating_duration_since(Instant::now());
        let Ok((len, v)) = s.next(left) else {
            break;
        };
        if mode != Mode::Subscription {
            return Err(
                format!("the host sent a frame unasked in {} mode: {v}", mode.name()).into(),
            );
        }
        let (p, t) = check_event(&v)?;
        events += 1;
        bytes += len;
        processes = p;
        threads = t;
    }
    let seconds = start.elapsed().as_secs_f64();
    let stat = stat_ticks(host_pid)? - start_stat;
    let sched = schedstat_ns(host_pid)?.saturating_sub(start_sched);
    let (vm_hwm_kib, vm_rss_kib) = (
        status_kib(host_pid, "VmHWM:")?,
        status_kib(host_pid, "VmRSS:")?,
    );
    let history_points = if mode == Mode::History {
        s.send(serde_json::json!({"type": "history"}))?;
        let (_, v) = s.next(Duration::from_secs(10))?;
        let points = v["result"]["points"]
            .as_array()
            .ok_or_else(|| format!("no history in {v}"))?;
        if o.active > 0 && points.iter().all(|p| p["pct"].as_f64() == Some(0.0)) {
            return Err(format!("the history saw no audio thread: {v}").into());
        }
        points.len()
    } else {
        0
    };
    let clk_tck = ProcFs::system().clk_tck() as f64;
    Ok(RunResult {
        seconds,
        cpu_pct_stat: stat as f64 / clk_tck * 100.0 / seconds,
        cpu_pct_schedstat: sched as f64 / 1e9 * 100.0 / seconds,
        vm_hwm_kib,
        vm_rss_kib,
        events,
        threads_per_report: threads,
        processes_per_report: processes,
        bytes_per_event: bytes / events.max(1),
        history_points,
    })
}

/// `/proc/loadavg`'s first three fields.
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|t| t.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".into())
}

/// A `cpu` event with the stand-in in it: (processes, threads) in the report.
fn check_event(v: &serde_json::Value) -> Result<(usize, usize), Error> {
    if v["event"]["type"] != "cpu" {
        return Err(format!("expected a cpu event, got {v}").into());
    }
    let processes = v["event"]["report"]["processes"]
        .as_array()
        .ok_or("no processes")?;
    if !processes.iter().any(|p| p["comm"] == "chromium") {
        return Err("the host did not find the stand-in browser".into());
    }
    let threads = processes
        .iter()
        .map(|p| p["threads"].as_array().map_or(0, Vec::len))
        .sum();
    Ok((processes.len(), threads))
}

/// utime + stime of the whole process (exited threads included), in clock ticks.
fn stat_ticks(pid: u32) -> Result<u64, Error> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    let st = parse_stat(&text).ok_or("stat")?;
    Ok(st.utime + st.stime)
}

/// The sum of the live threads' schedstat run time (ns).
fn schedstat_ns(pid: u32) -> Result<u64, Error> {
    let mut sum = 0;
    for entry in std::fs::read_dir(format!("/proc/{pid}/task"))? {
        let path = entry?.path().join("schedstat");
        if let Ok(text) = std::fs::read_to_string(path) {
            sum += parse_schedstat(&text).map_or(0, |s| s.run_time_ns);
        }
    }
    Ok(sum)
}

fn status_kib(pid: u32, field: &str) -> Result<u64, Error> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    text.lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| format!("no {field}").into())
}
