//! The bench's command line ([`BenchArgs`]): what to measure ([`Direction`], latencies, modes,
//! the reference) and how (window, baseline, repeats, output), with its value checks.

use std::path::PathBuf;

use clap::ValueEnum;
use micoff_exit::{Range, PID};
use serde::{Deserialize, Serialize};

/// `--latency-ms`: what a client may ask of the server.
pub const LATENCY_MS: Range<u32> = Range::new(1, 10_000, "ms");
/// `--duration`: the measured window per mode.
pub const DURATION_S: Range<f64> = Range::new(0.1, 3600.0, "s");
/// `--baseline`: the server alone (0 skips it).
pub const BASELINE_S: Range<f64> = Range::new(0.0, 3600.0, "s");
/// `--repeat`: measurements per mode.
pub const REPEAT: Range<u32> = Range::new(1, 100, "times");
/// `--warmup-ms`: settling time before each window.
pub const WARMUP_MS: Range<u64> = Range::new(0, 60_000, "ms");

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
    #[arg(long, value_name = "MS", value_delimiter = ',', default_value = "10",
          value_parser = |s: &str| LATENCY_MS.parse(s),
          help = LATENCY_MS.help("Requested latency (fragsize for record, tlength for playback). A \
              comma-separated list (5,10,20,50,100) sweeps and prints CPU against latency, and writes a \
              chart."))]
    pub latency_ms: Vec<u32>,
    #[arg(long, value_name = "S", default_value = "10", value_parser = |s: &str| DURATION_S.parse(s),
          help = DURATION_S.help("Measured window per mode, in seconds."))]
    pub duration: f64,
    #[arg(long, value_name = "S", value_parser = |s: &str| BASELINE_S.parse(s),
          help = BASELINE_S.help("Seconds to measure the audio server alone (no bench client) before \
              the modes: its idle baseline, shown as its own row so that other clients' work can be \
              subtracted. Default: the --duration; 0 skips it."))]
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
    #[arg(long, value_name = "P", value_parser = |s: &str| PID.parse(s),
          help = PID.help("The audio server's pid, when it cannot be found from its socket."))]
    pub server_pid: Option<u32>,
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = |s: &str| REPEAT.parse(s),
          help = REPEAT.help("Measure each mode this many times (alternating modes) and report \
              medians."))]
    pub repeat: u32,
    #[arg(long, value_name = "MS", default_value_t = 1000, value_parser = |s: &str| WARMUP_MS.parse(s),
          help = WARMUP_MS.help("Settling time after the stream's data flows steadily, before the \
              window, in ms."))]
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
