//! A request from the extension: its id and its body, the body tagged by `type` on the wire
//! (decoded by [`super::decode_request`]; serialized by tests and tools).

use serde::Serialize;

use super::history::Phase;
use super::latency::Browser;
use super::subscription::Topic;

pub type RequestId = u64;
/// Ids are JS numbers: safe integers only.
pub const MAX_ID: u64 = (1 << 53) - 1;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Request {
    pub id: RequestId,
    #[serde(flatten)]
    pub body: RequestBody,
}

/// A request's body, tagged by `type` on the wire. Serialize only: requests are decoded by
/// [`super::decode_request`], which reads the tag first and then the variant's own fields, so no
/// generic JSON tree is built (serde's internally tagged enums buffer the whole object as one).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum RequestBody {
    Version,
    Processes {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        browser_pid: Option<u32>,
    },
    CpuSample {
        window_ms: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pids: Option<Vec<u32>>,
    },
    Subscribe(Topic),
    Unsubscribe {
        subscription: u64,
    },
    AudioServerInfo,
    AudioStreams,
    /// The machine check (micoff-doctor's report, as `micoff-host doctor --json` prints it);
    /// `not_implemented` from a host built without a doctor.
    Doctor,
    /// Capture latency at the server and micoff's configuration of it ([`crate::latency`]).
    LatencyStatus,
    /// Sets (`capture_ms`) or resets (`capture_ms: null`) the browsers' capture latency. The
    /// field must be present: a missing `capture_ms` is refused rather than read as a reset.
    LatencySet {
        capture_ms: Option<u32>,
        dry_run: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        browsers: Option<Vec<Browser>>,
    },
    /// What the machine reports it draws (RAPL, or a discharging battery) over one second, and
    /// how many cores were busy meanwhile ([`crate::power`]); says why where it reports nothing.
    Power,
    /// What the microphones of all tabs are doing ([`Phase`]): the extension sends it on every
    /// change; the host keeps the audio path's CPU history while it is not `idle`.
    Phase {
        phase: Phase,
    },
    /// The audio path's CPU history ([`crate::history`]).
    History,
}

impl RequestBody {
    pub const TYPES: [&'static str; 13] = [
        "version",
        "processes",
        "cpu_sample",
        "subscribe",
        "unsubscribe",
        "audio_server_info",
        "audio_streams",
        "doctor",
        "latency_status",
        "latency_set",
        "power",
        "phase",
        "history",
    ];

    pub fn type_name(&self) -> &'static str {
        match self {
            Self::Version => "version",
            Self::Processes { .. } => "processes",
            Self::CpuSample { .. } => "cpu_sample",
            Self::Subscribe(_) => "subscribe",
            Self::Unsubscribe { .. } => "unsubscribe",
            Self::AudioServerInfo => "audio_server_info",
            Self::AudioStreams => "audio_streams",
            Self::Doctor => "doctor",
            Self::LatencyStatus => "latency_status",
            Self::LatencySet { .. } => "latency_set",
            Self::Power => "power",
            Self::Phase { .. } => "phase",
            Self::History => "history",
        }
    }
}
