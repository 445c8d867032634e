//! The typed protocol (native-host/PROTOCOL.md): requests from the extension, results, errors and
//! events from the host. Serde enums tagged by `type`; field names snake_case with units in names.
//! Nothing here does I/O; every name below is re-exported here (`protocol::X`).
//!
//! Module map, one module per request family:
//! - `request`: the request envelope and body (`Request`, `RequestBody` and its `type` names).
//! - `decode`: `decode_request`, which reads the tag first and then the variant's own fields, so
//!   every rejection gets its stable error code and, when readable, the request id.
//! - `errors`: the stable error codes, `RequestError`, the bound on what a message quotes.
//! - `events`: what the host sends (`result` / `error` / `event`) and the subscription events.
//! - `version`: the `version` result.
//! - `processes`: the `processes` result and the pid rule.
//! - `cpu`: `cpu_sample` and the `cpu` subscription: bounds and the CPU report (micoff-proc's).
//! - `subscription`: `subscribe` topics and the `subscribe` / `unsubscribe` result.
//! - `audio`: `audio_server_info`, `audio_streams` (micoff-pulse's types).
//! - `doctor`: the check of a `doctor` result.
//! - `latency`: `latency_status`, `latency_set`: the browsers, the `capture_ms` range, the results.
//! - `power`: the `power` reading.
//! - `history`: `phase`, `history` and the `history` topic: the audio path's CPU history.
//! - `typed`: `typed_result`, a result checked against the request type it answers.
//!
//! Fitting a reply into one frame is [`crate::fit_to_frame`]'s.

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
