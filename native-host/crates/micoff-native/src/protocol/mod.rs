//! The typed protocol (native-host/PROTOCOL.md): requests, results, errors and events, serde enums
//! tagged by `type`, snake_case with units in names; no I/O; every name re-exported here. Module
//! map, one per request family: `request`, `decode` (the tag first, then the variant, so every
//! rejection has its stable code and, when readable, the id), `errors`, `events`, `version`,
//! `processes`, `cpu`, `subscription`, `audio`, `doctor`, `latency`, `power`, `history`, `typed`
//! (`typed_result`: a result checked against its request type). Fitting a reply into one frame is
//! [`crate::fit_to_frame`]'s.

mod audio;
mod cpu;
mod decode;
mod doctor;
mod errors;
mod events;
mod history;
mod latency;
mod power;
mod processes;
mod request;
mod subscription;
mod typed;
mod version;

#[cfg(test)]
mod tests;

pub use self::audio::{AudioServerInfo, AudioServerKind, AudioStream, AudioStreams, StreamKind};
pub use self::cpu::{
    CpuReport, ProcessRates, Rates, Role, RoleTotals, ThreadRates, CPU_INTERVAL_MS_DEFAULT,
    CPU_INTERVAL_MS_MAX, CPU_INTERVAL_MS_MIN, CPU_WINDOW_MS_MAX, CPU_WINDOW_MS_MIN, MAX_PIDS,
};
pub use self::decode::decode_request;
pub use self::errors::{bound_message, bounded, ErrorCode, RequestError, MAX_ERROR_MESSAGE_CHARS};
pub use self::events::{ErrorBody, HostEvent, HostToExtension};
pub use self::history::{
    CpuPoint, HistorySnapshot, Mark, MarkKind, Phase, PhaseResult, PointPhase, ReleasedInterval,
};
pub use self::latency::{
    validate_capture_ms, Browser, CaptureStream, Configured, HeldDownBy, LatencyServer,
    LatencySetResult, LatencyStatus, Mechanism, ServerKind, CAPTURE_MS, CAPTURE_MS_MAX,
    CAPTURE_MS_MIN,
};
pub use self::power::{PowerReading, PowerSource};
pub use self::processes::{
    BrowserFamily, BrowserKind, BrowserRef, BrowserSource, ProcessInfo, Processes,
    CMDLINE_SUMMARY_CHARS, MAX_PID,
};
pub use self::request::{Request, RequestBody, RequestId, MAX_ID};
pub use self::subscription::{SubscriptionResult, Topic};
pub use self::typed::typed_result;
pub use self::version::{Version, PROTOCOL_VERSION};
