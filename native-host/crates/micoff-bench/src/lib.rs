//! `micoff-host bench record|playback`: what the audio path costs a low-latency client and the
//! audio server, per thread, with and without PulseAudio's srbchannel, and against the requested
//! latency (the two measurements micoff started from, see `docs/design/srbchannel-bench.md`).
//!
//! Module map:
//! - [`client`]: the measured libpulse client (asynchronous API, own mainloop). It runs as a child
//!   process: this same binary re-executed with the hidden `--child` flag.
//! - [`run`]: the parent: finds the server, spawns the child per window (own `PULSE_CLIENTCONFIG`
//!   for `off`), samples both processes' threads over the window, repeats and sweeps; its result
//!   is a [`report::BenchResult`].
//! - [`plan`]: the modes and every window of a run, in order, known before the first one.
//! - [`conf`]: client.conf emulation: the bench's own client.conf, found and included the way
//!   libpulse reads the user's, with shared memory set around it.
//! - [`reference`]: parec / pacat, the outside reference at the same latency.
//! - [`sample`]: per-thread rates of client and server over the window (micoff-proc snapshots).
//! - [`server`]: socket path, server pid, srbchannel seen from the client's eventfds.
//! - [`report`]: columns, medians, savings, the result and its text tables. [`chart`]: the SVG
//!   sweep chart.
//!
//! Wiring (host): a `Bench(micoff_bench::BenchArgs)` subcommand named `bench` that calls
//! [`run`]; the child is then started as `<current_exe> bench <direction> --child ...`.

pub mod chart;
pub mod client;
pub mod conf;
pub mod plan;
pub mod reference;
pub mod report;
pub mod run;
pub mod sample;
pub mod server;

use std::io::Write;
use std::path::PathBuf;

use clap::ValueEnum;
use micoff_exit::{EXIT_ERROR, EXIT_OK};
use serde::{Deserialize, Serialize};

/// Record from a source, or play a tone to a sink.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    Record,
    Playback,
}

impl Direction {
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::Record => "record",
            Direction::Playback => "playback",
        }
    }
}

/// Which srbchannel modes to measure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SrbchannelArg {
    On,
    Off,
    Both,
}

/// Outside reference client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CompareArg {
    /// `parec` for record, `pacat` for playback, at the same latency.
    Parec,
}

/// Arguments of `bench`.
#[derive(Debug, Clone, clap::Args)]
pub struct BenchArgs {
    /// Record from a source, or play a tone to a sink.
    #[arg(value_enum)]
    pub direction: Direction,
    /// Requested latency in ms (fragsize for record, tlength for playback). A comma-separated list
    /// (5,10,20,50,100) sweeps and prints CPU against latency, and writes a chart.
    #[arg(long, value_delimiter = ',', default_value = "10", value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub latency_ms: Vec<u32>,
    /// Measured window per mode, in seconds.
    #[arg(long, default_value = "10", value_parser = positive_seconds)]
    pub duration: f64,
    /// Seconds to measure the audio server alone (no bench client) before the modes: its idle
    /// baseline, shown as its own row so that other clients' work can be subtracted. Default: the
    /// --duration; 0 skips it.
    #[arg(long, value_parser = seconds_or_zero)]
    pub baseline: Option<f64>,
    /// srbchannel modes to measure. on = shared memory on (PulseAudio offers srbchannel: control
    /// messages through a shared ring buffer, audio as shared-memory references); off = the
    /// client's shared memory disabled through its own client.conf, so it gets no srbchannel and
    /// its audio goes inline over the socket.
    #[arg(long, value_enum, default_value = "both")]
    pub srbchannel: SrbchannelArg,
    /// Also measure parec (record) / pacat (playback) at the same latency as an outside reference.
    #[arg(long, value_enum)]
    pub compare: Option<CompareArg>,
    /// Source to record from (default: the server's default source).
    #[arg(long, conflicts_with = "sink")]
    pub source: Option<String>,
    /// Sink to play to (default: the server's default sink).
    #[arg(long)]
    pub sink: Option<String>,
    /// Server string, as for PULSE_SERVER (e.g. unix:/run/user/1000/pulse/native).
    #[arg(long)]
    pub server: Option<String>,
    /// The audio server's pid, when it cannot be found from its socket.
    #[arg(long)]
    pub server_pid: Option<u32>,
    /// Measure each mode this many times (alternating modes) and report medians.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub repeat: u32,
    /// Settling time after the stream's data flows steadily, before the window, in ms.
    #[arg(long, default_value_t = 1000)]
    pub warmup_ms: u64,
    /// Write the whole report as JSON instead of tables.
    #[arg(long)]
    pub json: bool,
    /// Where to write the sweep chart (SVG). Default: ./results/bench-<direction>-sweep.svg when
    /// more than one latency is given.
    #[arg(long)]
    pub chart: Option<PathBuf>,
    /// Internal: run as the measured client (the bench re-executes itself with this).
    #[arg(long, hide = true)]
    pub child: bool,
    /// Internal: application name of the child client.
    #[arg(long, hide = true)]
    pub app_name: Option<String>,
}

fn seconds(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|e| format!("not a number of seconds: {e}"))?;
    if v.is_finite() {
        Ok(v)
    } else {
        Err("not a finite number of seconds".into())
    }
}

/// `--duration`: a positive number of seconds (a bad one is a usage error, exit code 2).
fn positive_seconds(s: &str) -> Result<f64, String> {
    seconds(s).and_then(|v| {
        if v > 0.0 {
            Ok(v)
        } else {
            Err("must be more than 0 seconds".into())
        }
    })
}

fn seconds_or_zero(s: &str) -> Result<f64, String> {
    seconds(s).and_then(|v| {
        if v >= 0.0 {
            Ok(v)
        } else {
            Err("must be 0 or more seconds".into())
        }
    })
}

/// How to start the child client: an executable and the arguments before `<direction>`.
#[derive(Debug, Clone)]
pub struct ChildCommand {
    pub exe: PathBuf,
    pub prefix: Vec<String>,
}

impl ChildCommand {
    /// This process's executable with `prefix` (["bench"] inside micoff-host).
    pub fn current_exe(prefix: &[&str]) -> std::io::Result<Self> {
        Ok(Self {
            exe: std::env::current_exe()?,
            prefix: prefix.iter().map(|s| s.to_string()).collect(),
        })
    }
}

/// Entry point for `micoff-host bench ...`: re-executes the current executable as
/// `<exe> bench <direction> --child ...` for the measured client. Returns micoff-host's
/// documented exit code: 0 ok, 1 error, 2 usage error, 4 no audio server (or no such device).
pub fn run(args: &BenchArgs, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    match ChildCommand::current_exe(&["bench"]) {
        Ok(child) => run_with(args, &child, out, err),
        Err(e) => {
            let _ = writeln!(err, "micoff-host bench: cannot find own executable: {e}");
            EXIT_ERROR
        }
    }
}

/// Like [`run`], with an explicit way to start the child (the standalone `micoff-bench` binary
/// passes no prefix).
pub fn run_with(
    args: &BenchArgs,
    child: &ChildCommand,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    if args.child {
        return run_child(args, out, err);
    }
    match run::run_bench(args, child, out, err) {
        Ok(()) => EXIT_OK,
        Err(e) => {
            let _ = writeln!(err, "bench: {e}");
            e.exit_code()
        }
    }
}

fn run_child(args: &BenchArgs, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let cfg = client::ClientConfig {
        direction: args.direction,
        latency_ms: args.latency_ms.first().copied().unwrap_or(10),
        device: match args.direction {
            Direction::Record => args.source.clone(),
            Direction::Playback => args.sink.clone(),
        },
        server: args.server.clone(),
        app_name: args
            .app_name
            .clone()
            .unwrap_or_else(|| "micoff-bench".to_string()),
    };
    match client::run_client(&cfg, out) {
        Ok(()) => EXIT_OK,
        Err(e) => {
            let msg = client::ChildMessage::Error {
                message: e.to_string(),
                not_found: matches!(e, client::ClientError::NotFound(_)),
            };
            if let Ok(line) = serde_json::to_string(&msg) {
                let _ = writeln!(out, "{line}");
                let _ = out.flush();
            }
            let _ = writeln!(err, "bench client: {e}");
            EXIT_ERROR
        }
    }
}
