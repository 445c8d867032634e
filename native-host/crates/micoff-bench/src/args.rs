//! The bench's command line ([`BenchArgs`]): what to measure ([`Direction`], latencies, modes,
//! the reference) and how (window, baseline, repeats, output), with its value checks.

use std::path::PathBuf;

use clap::ValueEnum;
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
