//! Everything a bench run measured ([`BenchResult`]): what `--json` prints, with the server as the
//! bench saw it, its idle baseline and what the run showed about srbchannel.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::args::Direction;
use crate::report::figures::Columns;
use crate::report::mode::{Mode, SrbchannelState};
use crate::report::runs::{Run, Summary};
use crate::sample::ThreadRates;

/// What the run showed about srbchannel at this server (the header's "srbchannel ..."). Derived
/// from what happened to the measured clients, never assumed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SrbchannelAvailability {
    /// Every `on` window's client held srbchannel's eventfds.
    Available,
    /// At least one `on` window's client did not get srbchannel: `on` and `off` were the same
    /// kind of client.
    NotGranted,
    /// pipewire-pulse: no shared memory, no srbchannel.
    NotApplicable,
    /// No `on` window was run (`--srbchannel off`).
    NotMeasured,
    /// The client's file descriptors could not be read.
    #[default]
    Unknown,
}

impl SrbchannelAvailability {
    pub fn label(self) -> &'static str {
        match self {
            SrbchannelAvailability::Available => "available (the on client got it)",
            SrbchannelAvailability::NotGranted => "NOT GRANTED to the on client",
            SrbchannelAvailability::NotApplicable => "not applicable",
            SrbchannelAvailability::NotMeasured => "not measured (no on window)",
            SrbchannelAvailability::Unknown => "unknown (client fds unreadable)",
        }
    }

    /// From the `on` windows: all active = available, any inactive = not granted.
    pub fn from_runs(runs: &[Run], pipewire: bool) -> Self {
        if pipewire {
            return SrbchannelAvailability::NotApplicable;
        }
        let on: Vec<SrbchannelState> = runs
            .iter()
            .filter(|r| r.mode == Mode::SrbchannelOn)
            .map(|r| r.srbchannel)
            .collect();
        if on.is_empty() {
            SrbchannelAvailability::NotMeasured
        } else if on.contains(&SrbchannelState::Inactive) {
            SrbchannelAvailability::NotGranted
        } else if on.iter().all(|s| *s == SrbchannelState::Active) {
            SrbchannelAvailability::Available
        } else {
            SrbchannelAvailability::Unknown
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

/// Everything a bench run measured: what `--json` prints and [`write_text`] renders.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchResult {
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
