//! `latency_status` and `latency_set` (PROTOCOL.md, "Capture latency"): the browsers micoff
//! configures, the accepted `capture_ms`, and the two results. The work behind them is
//! [`crate::latency`]; `micoff-host latency --json` prints the same shapes.

use serde::{Deserialize, Serialize};

/// Accepted `capture_ms` (10 ms is what Chromium asks by itself): the request's check and
/// `latency set --capture-ms` (its check and its `--help`) read this one range.
pub const CAPTURE_MS: micoff_exit::Range<u32> = micoff_exit::Range::new(10, 200, "ms");
pub const CAPTURE_MS_MIN: u32 = CAPTURE_MS.min;
pub const CAPTURE_MS_MAX: u32 = CAPTURE_MS.max;

/// `capture_ms` of a `latency_set` (null, a reset, is not checked here).
pub fn validate_capture_ms(ms: u32) -> Result<(), String> {
    if (CAPTURE_MS_MIN..=CAPTURE_MS_MAX).contains(&ms) {
        Ok(())
    } else {
        Err(format!(
            "`capture_ms` must be in {CAPTURE_MS_MIN}..={CAPTURE_MS_MAX} (or null to reset), got {ms}"
        ))
    }
}

/// A browser whose capture latency micoff configures (`--browser`, `browsers` on the wire): a
/// closed set of three of the browsers micoff knows, in the order micoff's files list them. What
/// micoff knows of each (capture client names, binaries, commands, desktop entries) is its row of
/// micoff-browsers' table ([`Browser::table`]); its wire name is that row's key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[derive(clap::ValueEnum)]
pub enum Browser {
    Chromium,
    Chrome,
    Firefox,
}

impl Browser {
    pub const ALL: [Browser; 3] = [Browser::Chromium, Browser::Chrome, Browser::Firefox];

    /// The browser of micoff-browsers' table.
    pub fn table(self) -> micoff_browsers::Browser {
        match self {
            Browser::Chromium => micoff_browsers::Browser::Chromium,
            Browser::Chrome => micoff_browsers::Browser::Chrome,
            Browser::Firefox => micoff_browsers::Browser::Firefox,
        }
    }

    /// Its wire name: the table's key.
    pub fn name(self) -> &'static str {
        self.table().key()
    }

    pub fn from_name(name: &str) -> Option<Browser> {
        Self::ALL.into_iter().find(|b| b.name() == name)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ServerKind {
    Pulseaudio,
    PipewirePulse,
    Unknown,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LatencyServer {
    pub kind: ServerKind,
    /// PulseAudio's version (`16.1`), or PipeWire's (`0.3.65`) for pipewire-pulse.
    pub version: Option<String>,
    /// The mechanism `latency set` picks on this server.
    pub mechanism: Mechanism,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum Mechanism {
    /// A `pulse.rules` drop-in for pipewire-pulse.
    PipewirePulseRule,
    /// `PULSE_LATENCY_MSEC` in the browser's launch environment (desktop entries, PATH wrappers).
    LaunchEnvironment,
}

impl Mechanism {
    pub fn name(self) -> &'static str {
        match self {
            Mechanism::PipewirePulseRule => "pipewire_pulse_rule",
            Mechanism::LaunchEnvironment => "launch_environment",
        }
    }
}

/// What micoff has written (read back from its files).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Configured {
    pub capture_ms: u32,
    pub mechanism: Mechanism,
    pub browsers: Vec<Browser>,
    pub files: Vec<String>,
    /// True when every capture stream of those browsers gets at least `capture_ms` (less the
    /// status's tolerance, `latency::TOLERANCE_US`); null when none is open (nothing to prove it
    /// by).
    pub in_effect: Option<bool>,
}

/// A record stream that keeps the source's latency below what a browser stream asked for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HeldDownBy {
    pub index: u32,
    pub client_name: Option<String>,
    pub application_name: Option<String>,
    pub application_process_id: Option<u32>,
    pub application_process_binary: Option<String>,
    /// Its own buffer latency at the server.
    pub latency_us: u64,
}

/// One browser capture stream (a record stream) as the server sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CaptureStream {
    pub index: u32,
    pub browser: Browser,
    pub client_name: Option<String>,
    pub application_process_id: Option<u32>,
    pub source_name: Option<String>,
    /// `PULSE_LATENCY_MSEC` in the environment of the stream's process (null: unset or unreadable).
    pub launch_env_latency_ms: Option<u32>,
    /// What the stream asked for: the launch environment's value, else Chromium's own 10 ms;
    /// null when unknown (Firefox).
    pub requested_latency_us: Option<u64>,
    /// The stream's buffer latency as the server reports it (pactl "Buffer Latency",
    /// `buffer_usec`). pipewire-pulse reports 0.
    pub granted_latency_us: u64,
    /// The record fragment the server grants, where it shows it (pipewire-pulse
    /// `pulse.attr.fragsize`), else null.
    pub granted_fragment_us: Option<u64>,
    /// The capture latency the stream actually gets: `granted_fragment_us` where known, else
    /// `granted_latency_us`. What `in_effect` and the popup use.
    pub capture_latency_us: u64,
    /// The source's configured latency (PulseAudio: the lowest any of its readers asked).
    pub source_configured_latency_us: Option<u64>,
    /// `pulse.min.frag` on the stream's properties (a pipewire-pulse rule matched its client).
    pub rule_min_frag: Option<String>,
    /// PulseAudio: the other readers of the same source whose lower latency the stream is
    /// granted instead of what it asked (empty when it got what it asked).
    pub held_down_by: Vec<HeldDownBy>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LatencyStatus {
    pub server: LatencyServer,
    pub configured: Option<Configured>,
    pub streams: Vec<CaptureStream>,
    /// What would need a restart for the configuration (or its removal) to be in effect:
    /// `pipewire-pulse`, or a browser (`chromium`, `chrome`, `firefox`).
    pub needs_restart: Vec<String>,
    /// Human explanations (why not in effect, what to restart and how).
    pub notes: Vec<String>,
}

/// Result of `latency_set` / `latency set` / `latency reset`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LatencySetResult {
    /// Null for a reset.
    pub capture_ms: Option<u32>,
    /// Null for a reset.
    pub mechanism: Option<Mechanism>,
    pub dry_run: bool,
    /// Files written or removed (or that would be, with `dry_run`).
    pub changed_files: Vec<String>,
    /// Files micoff left alone because it did not write them.
    pub skipped_files: Vec<String>,
    pub needs_restart: Vec<String>,
    pub message: String,
}
