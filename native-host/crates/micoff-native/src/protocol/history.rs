//! The audio path's CPU history (PROTOCOL.md, "History"): the `phase` request (the extension says
//! what the microphones of all tabs are doing), the `history` request and topic (what the popup
//! charts, and the CPU-seconds saved while released; docs/design/popup-savings.md).
//! [`crate::history`] keeps it.

use serde::{Deserialize, Serialize};

/// What the microphones of all tabs are doing, folded into one (highest first): a tab capturing
/// unmuted; muted but still open (the release delay); kept open while muted; every one released;
/// none in use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    Capturing,
    Muted,
    Kept,
    Released,
    Idle,
}

impl Phase {
    /// Every muted phase: the device open, kept, or released.
    pub fn is_muted(self) -> bool {
        matches!(self, Phase::Muted | Phase::Kept | Phase::Released)
    }
}

/// A sample's phase: the one in force throughout its window, or `transition` when it changed
/// inside it (such a sample counts nowhere).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PointPhase {
    Capturing,
    Muted,
    Kept,
    Released,
    Idle,
    Transition,
}

impl From<Phase> for PointPhase {
    fn from(p: Phase) -> Self {
        match p {
            Phase::Capturing => PointPhase::Capturing,
            Phase::Muted => PointPhase::Muted,
            Phase::Kept => PointPhase::Kept,
            Phase::Released => PointPhase::Released,
            Phase::Idle => PointPhase::Idle,
        }
    }
}

/// One sample of the audio path's CPU.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CpuPoint {
    /// End of the sample's window (ms since the epoch).
    pub t_ms: u64,
    /// Audio-path CPU over the window, % of one core.
    pub pct: f64,
    pub window_ms: f64,
    pub phase: PointPhase,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MarkKind {
    /// Capturing -> a muted phase.
    Mute,
    /// Entering `released`.
    Release,
    /// A muted phase -> capturing.
    Unmute,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mark {
    pub t_ms: u64,
    pub kind: MarkKind,
}

/// From entering `released` to leaving it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReleasedInterval {
    pub start_ms: u64,
    /// `None` while it lasts.
    pub end_ms: Option<u64>,
    /// Mean audio-path CPU of the capturing samples in the 10 s before the last one before the
    /// release; `None` when there was none (the interval then saves nothing).
    pub baseline_pct: Option<f64>,
    /// CPU-seconds saved over this interval so far.
    pub saved_cpu_s: f64,
}

/// The `history` result, and the `history` event's `history` (there `points` holds only the samples
/// taken since the subscription's previous event: all of them in its first event).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HistorySnapshot {
    pub now_ms: u64,
    /// How far back the history reaches (5 minutes).
    pub span_ms: u64,
    pub points: Vec<CpuPoint>,
    pub marks: Vec<Mark>,
    pub released: Vec<ReleasedInterval>,
    /// CPU-seconds saved while released since this host started (intervals that scrolled out of
    /// the span included).
    pub saved_cpu_s: f64,
    pub phase: Phase,
}

/// The `phase` result: what the releases saved so far (the extension keeps it across host
/// restarts).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PhaseResult {
    pub saved_cpu_s: f64,
}
