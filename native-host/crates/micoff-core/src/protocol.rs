//! The typed protocol (native-host/PROTOCOL.md): requests from the extension, results, errors and
//! events from the host. Serde enums tagged by `type`; field names snake_case with units in names.
//!
//! Requests are decoded in steps ([`decode_request`]) so every rejection gets its stable error code
//! and, when it could be read, the request id. Nothing here does I/O.

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub const PROTOCOL_VERSION: u32 = 1;
/// Ids are JS numbers: safe integers only.
pub const MAX_ID: u64 = (1 << 53) - 1;
pub const CPU_WINDOW_MS_MIN: u64 = 100;
pub const CPU_WINDOW_MS_MAX: u64 = 60_000;
pub const CPU_INTERVAL_MS_MIN: u64 = 250;
pub const CPU_INTERVAL_MS_MAX: u64 = 60_000;
pub const CPU_INTERVAL_MS_DEFAULT: u64 = 1000;
pub const MAX_PIDS: usize = 256;
pub const MAX_PID: u32 = i32::MAX as u32;

/// Stable numeric error codes (PROTOCOL.md, "Error codes").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum ErrorCode {
    InvalidJson = 1,
    InvalidRequest = 2,
    UnknownType = 3,
    TooLarge = 4,
    AudioServerUnavailable = 5,
    NotFound = 6,
    Internal = 7,
    Busy = 8,
    NotImplemented = 9,
    Forbidden = 10,
}

impl ErrorCode {
    pub const ALL: [ErrorCode; 10] = [
        Self::InvalidJson,
        Self::InvalidRequest,
        Self::UnknownType,
        Self::TooLarge,
        Self::AudioServerUnavailable,
        Self::NotFound,
        Self::Internal,
        Self::Busy,
        Self::NotImplemented,
        Self::Forbidden,
    ];

    pub fn code(self) -> u32 {
        self as u32
    }

    pub fn from_code(code: u32) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.code() == code)
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::InvalidJson => "invalid_json",
            Self::InvalidRequest => "invalid_request",
            Self::UnknownType => "unknown_type",
            Self::TooLarge => "too_large",
            Self::AudioServerUnavailable => "audio_server_unavailable",
            Self::NotFound => "not_found",
            Self::Internal => "internal",
            Self::Busy => "busy",
            Self::NotImplemented => "not_implemented",
            Self::Forbidden => "forbidden",
        }
    }
}

// ------------------------------------------------------------------------------------------------
// Extension -> host

pub type RequestId = u64;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Request {
    pub id: RequestId,
    #[serde(flatten)]
    pub body: RequestBody,
}

/// A request's body, tagged by `type` on the wire. Serialize only: requests are decoded by
/// [`decode_request`], which reads the tag first and then the variant's own fields, so no generic
/// JSON tree is built (serde's internally tagged enums buffer the whole object as one).
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
        browsers: Option<Vec<crate::latency::Browser>>,
    },
    /// What the machine reports it draws (RAPL, or a discharging battery) over one second, and
    /// how many cores were busy meanwhile ([`crate::power`]); says why where it reports nothing.
    Power,
}

impl RequestBody {
    pub const TYPES: [&'static str; 11] = [
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
        }
    }
}

/// What a `subscribe` asks for, tagged by `topic` on the wire (decoded like [`RequestBody`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "topic", rename_all = "snake_case")]
pub enum Topic {
    Cpu {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        interval_ms: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pids: Option<Vec<u32>>,
    },
    Audio,
}

/// Why a request frame was rejected: what goes into the error reply.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct RequestError {
    pub id: Option<RequestId>,
    pub code: ErrorCode,
    pub message: String,
}

impl RequestError {
    fn new(id: Option<RequestId>, code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            id,
            code,
            message: bounded(message.into(), MAX_ERROR_MESSAGE_CHARS),
        }
    }
}

/// Longest error message the host sends: a rejection quotes a bit of the caller's request (a
/// serde message quotes a mistyped string value), never the request back whole.
pub const MAX_ERROR_MESSAGE_CHARS: usize = 256;
/// Longest piece of a caller's value (an `id`, a `type`) quoted in a message.
const QUOTED_CHARS: usize = 64;

/// `text` cut to `max` characters (ending in `…` when cut).
pub fn bounded(mut text: String, max: usize) -> String {
    if let Some((cut, _)) = text.char_indices().nth(max) {
        text.truncate(cut);
        text.push('…');
    }
    text
}

/// The envelope of a request, read without building a JSON tree: the `id`, the `type` and the
/// `topic` (a `subscribe`'s tag), each as the caller sent it (a foreign value is kept as a short
/// description for the error message). Every other field is skipped (`IgnoredAny`).
#[derive(Default)]
struct Head {
    id: Option<Loose>,
    kind: Option<Loose>,
    topic: Option<Loose>,
    /// A tag (`type`, `topic`) given twice: refused, as serde refuses a duplicate field.
    duplicate_tag: Option<&'static str>,
}

/// A JSON value summarised: an unsigned integer or a string kept, anything else described.
enum Loose {
    Uint(u64),
    Str(String),
    Other(String),
}

impl Loose {
    fn describe(&self) -> String {
        match self {
            Loose::Uint(n) => n.to_string(),
            Loose::Str(s) => format!("{:?}", bounded(s.clone(), QUOTED_CHARS)),
            Loose::Other(d) => d.clone(),
        }
    }
}

impl<'de> Deserialize<'de> for Loose {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Loose;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_u64<E>(self, v: u64) -> Result<Loose, E> {
                Ok(Loose::Uint(v))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Loose, E> {
                Ok(Loose::Other(v.to_string()))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Loose, E> {
                Ok(Loose::Other(v.to_string()))
            }
            fn visit_bool<E>(self, v: bool) -> Result<Loose, E> {
                Ok(Loose::Other(v.to_string()))
            }
            fn visit_unit<E>(self) -> Result<Loose, E> {
                Ok(Loose::Other("null".into()))
            }
            fn visit_str<E>(self, v: &str) -> Result<Loose, E> {
                // Kept whole only up to a little over what a message quotes.
                Ok(Loose::Str(bounded(v.to_owned(), QUOTED_CHARS)))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut a: A) -> Result<Loose, A::Error> {
                while a.next_element::<serde::de::IgnoredAny>()?.is_some() {}
                Ok(Loose::Other("an array".into()))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut a: A) -> Result<Loose, A::Error> {
                while a
                    .next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?
                    .is_some()
                {}
                Ok(Loose::Other("an object".into()))
            }
        }
        d.deserialize_any(V)
    }
}

impl<'de> Deserialize<'de> for Head {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(field_identifier, rename_all = "snake_case")]
        enum Key {
            Id,
            Type,
            Topic,
            #[serde(other)]
            Other,
        }
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Head;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut a: A) -> Result<Head, A::Error> {
                let mut head = Head::default();
                while let Some(key) = a.next_key::<Key>()? {
                    match key {
                        Key::Id => head.id = Some(a.next_value()?),
                        Key::Type => {
                            if head.kind.is_some() {
                                head.duplicate_tag.get_or_insert("type");
                            }
                            head.kind = Some(a.next_value()?);
                        }
                        Key::Topic => {
                            if head.topic.is_some() {
                                head.duplicate_tag.get_or_insert("topic");
                            }
                            head.topic = Some(a.next_value()?);
                        }
                        Key::Other => {
                            a.next_value::<serde::de::IgnoredAny>()?;
                        }
                    }
                }
                Ok(head)
            }
        }
        d.deserialize_map(V)
    }
}

/// A field that must be present and may be null (`"capture_ms": null` resets).
fn number_or_null<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u32>, D::Error> {
    Option::<u32>::deserialize(d)
}

/// The fields of each request type with fields, read straight from the frame (unknown fields,
/// `id` and the tags included, are skipped without being kept).
mod fields {
    use serde::Deserialize;

    #[derive(Deserialize)]
    pub struct Processes {
        #[serde(default)]
        pub browser_pid: Option<u32>,
    }

    #[derive(Deserialize)]
    pub struct CpuSample {
        pub window_ms: u64,
        #[serde(default)]
        pub pids: Option<Vec<u32>>,
    }

    #[derive(Deserialize)]
    pub struct Cpu {
        #[serde(default)]
        pub interval_ms: Option<u64>,
        #[serde(default)]
        pub pids: Option<Vec<u32>>,
    }

    #[derive(Deserialize)]
    pub struct Unsubscribe {
        pub subscription: u64,
    }

    #[derive(Deserialize)]
    pub struct LatencySet {
        // `deserialize_with` without `default`: serde refuses a missing field instead of reading
        // it as None.
        #[serde(deserialize_with = "super::number_or_null")]
        pub capture_ms: Option<u32>,
        #[serde(default)]
        pub dry_run: bool,
        #[serde(default)]
        pub browsers: Option<Vec<crate::latency::Browser>>,
    }
}

/// serde_json's message without its position (` at line 1 column 42`): the same text the caller
/// got when requests went through serde's tagged enums.
fn field_error(e: &serde_json::Error) -> String {
    let text = e.to_string();
    let position = format!(" at line {} column {}", e.line(), e.column());
    match text.strip_suffix(&position) {
        Some(bare) => bare.to_owned(),
        None => text,
    }
}

/// The typed body of a request of type `type_name` (one of [`RequestBody::TYPES`]): the variant's
/// own fields, decoded from `text` with everything else skipped.
fn decode_body(type_name: &str, head: &Head, text: &str) -> Result<RequestBody, String> {
    fn typed<T: for<'de> Deserialize<'de>>(text: &str) -> Result<T, String> {
        serde_json::from_str::<T>(text).map_err(|e| field_error(&e))
    }
    Ok(match type_name {
        "version" => RequestBody::Version,
        "processes" => {
            let f: fields::Processes = typed(text)?;
            RequestBody::Processes {
                browser_pid: f.browser_pid,
            }
        }
        "cpu_sample" => {
            let f: fields::CpuSample = typed(text)?;
            RequestBody::CpuSample {
                window_ms: f.window_ms,
                pids: f.pids,
            }
        }
        "subscribe" => RequestBody::Subscribe(match &head.topic {
            None => return Err("missing field `topic`".into()),
            Some(Loose::Str(t)) if t == "cpu" => {
                let f: fields::Cpu = typed(text)?;
                Topic::Cpu {
                    interval_ms: f.interval_ms,
                    pids: f.pids,
                }
            }
            Some(Loose::Str(t)) if t == "audio" => Topic::Audio,
            Some(Loose::Str(t)) => {
                return Err(format!(
                    "unknown variant `{}`, expected `cpu` or `audio`",
                    bounded(t.clone(), QUOTED_CHARS)
                ))
            }
            Some(other) => {
                return Err(format!(
                    "`topic` must be a string, got {}",
                    other.describe()
                ))
            }
        }),
        "unsubscribe" => {
            let f: fields::Unsubscribe = typed(text)?;
            RequestBody::Unsubscribe {
                subscription: f.subscription,
            }
        }
        "audio_server_info" => RequestBody::AudioServerInfo,
        "audio_streams" => RequestBody::AudioStreams,
        "doctor" => RequestBody::Doctor,
        "latency_status" => RequestBody::LatencyStatus,
        "latency_set" => {
            let f: fields::LatencySet = typed(text)?;
            RequestBody::LatencySet {
                capture_ms: f.capture_ms,
                dry_run: f.dry_run,
                browsers: f.browsers,
            }
        }
        "power" => RequestBody::Power,
        other => return Err(format!("no decoder for `{other}`")),
    })
}

/// Decodes one request frame body: UTF-8 JSON -> object -> id -> type -> fields -> ranges,
/// without a generic JSON tree: a syntax pass that keeps nothing, the envelope ([`Head`]: `id`,
/// `type`, `topic`, every other value skipped), then the variant's own fields straight into their
/// types (skipping the rest again). What is kept is the typed request and at most a few short
/// strings for messages, whatever the frame holds (the frame size is capped at
/// [`crate::framing::MAX_INCOMING_BYTES`]).
pub fn decode_request(body: &[u8]) -> Result<Request, RequestError> {
    let invalid_json =
        |e: String| RequestError::new(None, ErrorCode::InvalidJson, format!("invalid JSON: {e}"));
    let text = std::str::from_utf8(body).map_err(|e| invalid_json(e.to_string()))?;
    // Syntax first, over the whole frame, without keeping anything.
    serde_json::from_str::<serde::de::IgnoredAny>(text).map_err(|e| invalid_json(e.to_string()))?;
    let head = serde_json::from_str::<Head>(text).map_err(|_| {
        RequestError::new(
            None,
            ErrorCode::InvalidRequest,
            "a request must be a JSON object",
        )
    })?;
    let id = match head.id {
        None => {
            return Err(RequestError::new(
                None,
                ErrorCode::InvalidRequest,
                "missing `id`",
            ))
        }
        Some(Loose::Uint(id)) if id <= MAX_ID => id,
        Some(ref other) => {
            return Err(RequestError::new(
                None,
                ErrorCode::InvalidRequest,
                format!(
                    "`id` must be an integer in 0..=2^53-1, got {}",
                    other.describe()
                ),
            ))
        }
    };
    let type_name = match &head.kind {
        Some(Loose::Str(t)) => t.as_str(),
        Some(_) => {
            return Err(RequestError::new(
                Some(id),
                ErrorCode::InvalidRequest,
                "`type` must be a string",
            ))
        }
        None => {
            return Err(RequestError::new(
                Some(id),
                ErrorCode::InvalidRequest,
                "missing `type`",
            ))
        }
    };
    let Some(type_name) = RequestBody::TYPES.iter().copied().find(|t| *t == type_name) else {
        return Err(RequestError::new(
            Some(id),
            ErrorCode::UnknownType,
            format!(
                "unknown request type `{}`",
                bounded(type_name.to_owned(), QUOTED_CHARS)
            ),
        ));
    };
    let invalid = |message: String| {
        RequestError::new(
            Some(id),
            ErrorCode::InvalidRequest,
            format!("invalid `{type_name}` request: {message}"),
        )
    };
    // `topic` is a tag only for `subscribe`; elsewhere it is one more unknown field.
    match head.duplicate_tag {
        Some("topic") if type_name != "subscribe" => {}
        Some(tag) => return Err(invalid(format!("duplicate field `{tag}`"))),
        None => {}
    }
    let body = decode_body(type_name, &head, text).map_err(invalid)?;
    validate(&body).map_err(invalid)?;
    Ok(Request { id, body })
}

fn validate(body: &RequestBody) -> Result<(), String> {
    match body {
        RequestBody::Processes {
            browser_pid: Some(pid),
        } => validate_pid(*pid),
        RequestBody::CpuSample { window_ms, pids } => {
            if !(CPU_WINDOW_MS_MIN..=CPU_WINDOW_MS_MAX).contains(window_ms) {
                return Err(format!(
                    "`window_ms` must be in {CPU_WINDOW_MS_MIN}..={CPU_WINDOW_MS_MAX}, got {window_ms}"
                ));
            }
            validate_pids(pids.as_deref())
        }
        RequestBody::Subscribe(Topic::Cpu { interval_ms, pids }) => {
            if let Some(interval) = interval_ms {
                if !(CPU_INTERVAL_MS_MIN..=CPU_INTERVAL_MS_MAX).contains(interval) {
                    return Err(format!(
                        "`interval_ms` must be in {CPU_INTERVAL_MS_MIN}..={CPU_INTERVAL_MS_MAX}, got {interval}"
                    ));
                }
            }
            validate_pids(pids.as_deref())
        }
        RequestBody::LatencySet {
            capture_ms: Some(ms),
            ..
        } => crate::latency::validate_capture_ms(*ms),
        _ => Ok(()),
    }
}

fn validate_pid(pid: u32) -> Result<(), String> {
    if pid == 0 || pid > MAX_PID {
        return Err(format!("pid {pid} is out of range 1..={MAX_PID}"));
    }
    Ok(())
}

fn validate_pids(pids: Option<&[u32]>) -> Result<(), String> {
    let Some(pids) = pids else { return Ok(()) };
    if pids.is_empty() || pids.len() > MAX_PIDS {
        return Err(format!(
            "`pids` must have 1..={MAX_PIDS} entries, got {}",
            pids.len()
        ));
    }
    pids.iter().try_for_each(|pid| validate_pid(*pid))
}

// ------------------------------------------------------------------------------------------------
// Host -> extension: envelope

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum HostToExtension {
    Result {
        id: RequestId,
        result: Value,
    },
    Error {
        id: Option<RequestId>,
        error: ErrorBody,
    },
    Event {
        subscription: u64,
        /// Boxed: streams and server infos are large next to the other variants.
        event: Box<HostEvent>,
    },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorBody {
    /// An [`ErrorCode`], or a code from a newer host.
    pub code: u32,
    pub message: String,
}

impl HostToExtension {
    pub fn error(id: Option<RequestId>, code: ErrorCode, message: impl Into<String>) -> Self {
        Self::Error {
            id,
            error: ErrorBody {
                code: code.code(),
                message: message.into(),
            },
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum HostEvent {
    Cpu {
        report: CpuReport,
    },
    /// A `cpu` subscription has nothing to report (no browser and no audio server found, or the
    /// sampling failed). Sent once when reports stop; the host keeps looking and `cpu` events
    /// resume when there is something to sample again.
    CpuUnavailable {
        /// An [`ErrorCode`] (`not_found`, `internal`).
        code: u32,
        reason: String,
    },
    AudioConnected {
        server: AudioServerInfo,
    },
    AudioDisconnected {
        reason: String,
    },
    StreamAdded {
        stream: AudioStream,
    },
    StreamChanged {
        stream: AudioStream,
    },
    StreamRemoved {
        kind: StreamKind,
        index: u32,
    },
    /// The subscription's last event: its source stopped (the explicit `pids` are all gone, the
    /// sampler or the audio client failed). The subscription no longer exists afterwards.
    SubscriptionEnded {
        /// An [`ErrorCode`] (`not_found`, `audio_server_unavailable`, `internal`).
        code: u32,
        reason: String,
    },
}

impl HostEvent {
    pub fn cpu_unavailable(code: ErrorCode, reason: impl Into<String>) -> Self {
        Self::CpuUnavailable {
            code: code.code(),
            reason: reason.into(),
        }
    }

    pub fn subscription_ended(code: ErrorCode, reason: impl Into<String>) -> Self {
        Self::SubscriptionEnded {
            code: code.code(),
            reason: reason.into(),
        }
    }
}

// ------------------------------------------------------------------------------------------------
// Result payloads

/// The browser families (`chromium`, `firefox`), micoff-proc's definition.
pub use micoff_proc::BrowserFamily;
/// CPU reports are micoff-proc's own types, carried as they are (one definition): per process, per
/// thread (`comm`, `user_pct`/`system_pct`, `run_time_ns`/`run_time_pct`, voluntary and involuntary
/// context switches per second, read/write syscalls per second) and per role (`roles`).
/// `threads_omitted` counts threads the host dropped to fit a frame.
pub use micoff_proc::{CpuReport, ProcessRates, Role, RoleTotals, ThreadRates};
/// Audio streams are micoff-pulse's `Stream`, carried as it is: the device's properties
/// (`device_bus`, `device_description`, `device_props`), the sample spec, requested and current
/// latencies, corked state.
pub use micoff_pulse::{Stream as AudioStream, StreamKind};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Version {
    pub host_version: String,
    pub protocol_version: u32,
    pub pid: u32,
    pub origin: Option<String>,
    pub extension_id: Option<String>,
    pub browser_family: Option<BrowserFamily>,
    pub chrome_extension_id: String,
    pub firefox_extension_id: String,
}

/// Longest `cmdline` summary on the wire (Chromium children carry kilobytes of flags).
pub const CMDLINE_SUMMARY_CHARS: usize = 160;

/// micoff-proc's [`micoff_proc::ProcessInfo`] on the wire: the command line shortened to a summary.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessInfo {
    pub pid: u32,
    /// 0 when there is none.
    pub ppid: u32,
    pub comm: String,
    /// Open set (PROTOCOL.md, "Roles"; unknown strings read as `other`).
    pub role: Role,
    pub family: Option<BrowserFamily>,
    /// At most [`CMDLINE_SUMMARY_CHARS`] characters of the command line (ends with `…` when cut).
    pub cmdline: String,
}

impl From<&micoff_proc::ProcessInfo> for ProcessInfo {
    fn from(p: &micoff_proc::ProcessInfo) -> Self {
        Self {
            pid: p.pid,
            ppid: p.ppid,
            comm: p.comm.clone(),
            role: p.role,
            family: p.family,
            cmdline: p.cmdline_summary(CMDLINE_SUMMARY_CHARS),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BrowserKind {
    Chromium,
    Firefox,
    Unknown,
}

impl From<Option<BrowserFamily>> for BrowserKind {
    fn from(f: Option<BrowserFamily>) -> Self {
        match f {
            Some(BrowserFamily::Chromium) => Self::Chromium,
            Some(BrowserFamily::Firefox) => Self::Firefox,
            None => Self::Unknown,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BrowserSource {
    /// Found by walking up from the host's parent process.
    Parent,
    /// Given as `browser_pid`.
    Explicit,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BrowserRef {
    pub pid: u32,
    pub family: BrowserKind,
    pub source: BrowserSource,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Processes {
    pub browser: Option<BrowserRef>,
    pub processes: Vec<ProcessInfo>,
    pub audio_server: Vec<ProcessInfo>,
    /// Processes of the tree left out (from its end: the deepest) to fit the reply into one frame.
    #[serde(default)]
    pub processes_omitted: u64,
}

/// Sorts processes and their threads by `cpu_pct`, highest first (the documented order).
pub fn sort_report(report: &mut CpuReport) {
    let by_cpu = |a: f64, b: f64| b.total_cmp(&a);
    for process in &mut report.processes {
        process
            .threads
            .sort_by(|a, b| by_cpu(a.cpu_pct, b.cpu_pct).then(a.tid.cmp(&b.tid)));
    }
    report
        .processes
        .sort_by(|a, b| by_cpu(a.cpu_pct, b.cpu_pct).then(a.pid.cmp(&b.pid)));
}

/// Threads listed in the report (after any trimming).
pub fn thread_count(report: &CpuReport) -> usize {
    report.processes.iter().map(|p| p.threads.len()).sum()
}

/// Drops the `n` threads with the lowest `cpu_pct` (over all processes), counting them in
/// `threads_omitted`. Used to fit the report into one frame. Process and role totals keep counting
/// the dropped threads (`thread_count` stays the real count).
pub fn drop_lowest_threads(report: &mut CpuReport, n: usize) {
    if n == 0 {
        return;
    }
    let mut all: Vec<(f64, usize, usize)> = Vec::with_capacity(thread_count(report));
    for (p, process) in report.processes.iter().enumerate() {
        for (t, thread) in process.threads.iter().enumerate() {
            all.push((thread.cpu_pct, p, t));
        }
    }
    // Linear: a partial selection of the `n` lowest, then one `retain` per process (removing
    // thousands of threads one by one was quadratic: most of a 3000-thread event's cost).
    let n = n.min(all.len());
    if n < all.len() {
        all.select_nth_unstable_by(n, |a, b| a.0.total_cmp(&b.0));
    }
    let mut doomed: Vec<Vec<bool>> = report
        .processes
        .iter()
        .map(|p| vec![false; p.threads.len()])
        .collect();
    for &(_, p, t) in &all[..n] {
        doomed[p][t] = true;
    }
    let mut dropped = 0u64;
    for (process, doomed) in report.processes.iter_mut().zip(doomed) {
        let mut i = 0;
        process.threads.retain(|_| {
            let keep = !doomed[i];
            i += 1;
            keep
        });
        dropped += doomed.iter().filter(|d| **d).count() as u64;
    }
    report.threads_omitted += dropped;
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AudioServerKind {
    Pulseaudio,
    Pipewire,
    Unknown,
}

/// micoff-pulse's [`micoff_pulse::ServerInfo`] (flattened), plus what the host adds: the server's
/// `kind` and its process(es).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AudioServerInfo {
    #[serde(flatten)]
    pub server: micoff_pulse::ServerInfo,
    pub kind: AudioServerKind,
    /// The process holding the server's socket (plus pipewire and wireplumber for pipewire-pulse);
    /// possibly empty.
    pub pids: Vec<u32>,
}

impl AudioServerInfo {
    pub fn new(server: micoff_pulse::ServerInfo, pids: Vec<u32>) -> Self {
        let kind = if server.is_pipewire {
            AudioServerKind::Pipewire
        } else if server
            .server_name
            .to_ascii_lowercase()
            .contains("pulseaudio")
        {
            AudioServerKind::Pulseaudio
        } else {
            AudioServerKind::Unknown
        };
        Self { server, kind, pids }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SubscriptionResult {
    pub subscription: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AudioStreams {
    pub streams: Vec<AudioStream>,
}

/// Checks a `result` payload against the request type it answers: decodes it into the typed
/// payload and re-encodes it (used by the fixture tests and available to tools).
pub fn typed_result(request_type: &str, result: &Value) -> Result<Value, String> {
    fn roundtrip<T: Serialize + for<'de> Deserialize<'de>>(v: &Value) -> Result<Value, String> {
        let typed = T::deserialize(v).map_err(|e| e.to_string())?;
        serde_json::to_value(typed).map_err(|e| e.to_string())
    }
    match request_type {
        "version" => roundtrip::<Version>(result),
        "processes" => roundtrip::<Processes>(result),
        "cpu_sample" => roundtrip::<CpuReport>(result),
        "subscribe" | "unsubscribe" => roundtrip::<SubscriptionResult>(result),
        "audio_server_info" => roundtrip::<AudioServerInfo>(result),
        "audio_streams" => roundtrip::<AudioStreams>(result),
        "doctor" => check_doctor_report(result).map(|()| result.clone()),
        "latency_status" => roundtrip::<crate::latency::LatencyStatus>(result),
        "latency_set" => roundtrip::<crate::latency::LatencySetResult>(result),
        "power" => roundtrip::<crate::power::PowerReading>(result),
        other => Err(format!("no typed result for `{other}`")),
    }
}

/// The `doctor` result is micoff-doctor's `Report` (serialize-only there): checks the fields the
/// extension reads.
fn check_doctor_report(v: &Value) -> Result<(), String> {
    let str_field = |o: &Value, k: &str| o.get(k).and_then(Value::as_str).map(|_| ());
    v.get("schema_version")
        .and_then(Value::as_u64)
        .ok_or("`schema_version` must be an integer")?;
    str_field(v, "kernel_release").ok_or("`kernel_release` must be a string")?;
    let findings = v
        .get("findings")
        .and_then(Value::as_array)
        .ok_or("`findings` must be an array")?;
    for f in findings {
        for k in ["id", "category", "title", "status", "current", "why"] {
            str_field(f, k).ok_or_else(|| format!("finding `{k}` must be a string: {f}"))?;
        }
        if !f.get("fix").is_some_and(|x| x.is_null() || x.is_string()) {
            return Err(format!("finding `fix` must be a string or null: {f}"));
        }
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn request_serializes_back_to_the_wire_shape() {
        let req = Request {
            id: 3,
            body: RequestBody::Subscribe(Topic::Cpu {
                interval_ms: Some(500),
                pids: None,
            }),
        };
        let json = serde_json::to_value(&req).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"id": 3, "type": "subscribe", "topic": "cpu", "interval_ms": 500})
        );
        let back = decode_request(json.to_string().as_bytes()).unwrap();
        assert_eq!(back, req);
    }

    #[test]
    fn error_codes_are_stable() {
        let codes: Vec<(u32, &str)> = ErrorCode::ALL
            .iter()
            .map(|c| (c.code(), c.name()))
            .collect();
        assert_eq!(
            codes,
            vec![
                (1, "invalid_json"),
                (2, "invalid_request"),
                (3, "unknown_type"),
                (4, "too_large"),
                (5, "audio_server_unavailable"),
                (6, "not_found"),
                (7, "internal"),
                (8, "busy"),
                (9, "not_implemented"),
                (10, "forbidden"),
            ]
        );
    }

    #[test]
    fn rejection_keeps_the_id_when_it_was_readable() {
        let err =
            decode_request(br#"{"id": 9, "type": "cpu_sample", "window_ms": 5}"#).unwrap_err();
        assert_eq!((err.id, err.code), (Some(9), ErrorCode::InvalidRequest));
        let err = decode_request(b"\xff\xfe").unwrap_err();
        assert_eq!((err.id, err.code), (None, ErrorCode::InvalidJson));
    }

    #[test]
    fn tags_and_fields_are_checked_like_serde_fields() {
        let reject = |text: &str| decode_request(text.as_bytes()).unwrap_err();
        let e = reject(r#"{"id":1,"type":"version","type":"version"}"#);
        assert_eq!((e.id, e.code), (Some(1), ErrorCode::InvalidRequest));
        assert_eq!(
            e.message,
            "invalid `version` request: duplicate field `type`"
        );
        let e = reject(r#"{"id":2,"type":"subscribe","topic":"cpu","topic":"audio"}"#);
        assert_eq!(
            e.message,
            "invalid `subscribe` request: duplicate field `topic`"
        );
        // `topic` is an ordinary (ignored) field of other requests.
        assert!(decode_request(br#"{"id":3,"type":"version","topic":1,"topic":2}"#).is_ok());
        let e = reject(r#"{"id":4,"type":"subscribe"}"#);
        assert_eq!(
            e.message,
            "invalid `subscribe` request: missing field `topic`"
        );
        let e = reject(r#"{"id":5,"type":"subscribe","topic":"disk"}"#);
        assert_eq!(
            e.message,
            "invalid `subscribe` request: unknown variant `disk`, expected `cpu` or `audio`"
        );
        let e = reject(r#"{"id":6,"type":"subscribe","topic":7}"#);
        assert_eq!(e.code, ErrorCode::InvalidRequest);
        // serde's own messages, without serde_json's position.
        let e = reject(r#"{"id":7,"type":"cpu_sample"}"#);
        assert_eq!(
            e.message,
            "invalid `cpu_sample` request: missing field `window_ms`"
        );
        let e = reject(r#"{"id":8,"type":"cpu_sample","window_ms":"soon"}"#);
        assert_eq!(
            e.message,
            "invalid `cpu_sample` request: invalid type: string \"soon\", expected u64"
        );
        let e = reject(r#"{"id":9,"type":"latency_set","dry_run":true}"#);
        assert_eq!(
            e.message,
            "invalid `latency_set` request: missing field `capture_ms`"
        );
        let e = reject(r#"{"id":10,"type":"unsubscribe","subscription":1,"subscription":2}"#);
        assert_eq!(
            e.message,
            "invalid `unsubscribe` request: duplicate field `subscription`"
        );
        // The tag may come anywhere, fields in any order.
        let r = decode_request(
            br#"{"pids":[4],"interval_ms":500,"topic":"cpu","x":{"y":[]},"type":"subscribe","id":11}"#,
        )
        .unwrap();
        assert_eq!(
            r.body,
            RequestBody::Subscribe(Topic::Cpu {
                interval_ms: Some(500),
                pids: Some(vec![4])
            })
        );
    }

    fn thread(tid: u32, cpu_pct: f64) -> ThreadRates {
        ThreadRates {
            tid,
            comm: format!("t{tid}"),
            cpu_pct,
            user_pct: cpu_pct,
            system_pct: 0.0,
            run_time_ns: None,
            run_time_pct: None,
            wakeups_per_s: None,
            voluntary_ctxt_per_s: None,
            involuntary_ctxt_per_s: None,
            read_syscalls_per_s: None,
            write_syscalls_per_s: None,
            window_ms: None,
        }
    }

    #[test]
    fn drop_lowest_threads_keeps_the_busy_ones() {
        let process = |pid, threads: Vec<ThreadRates>| ProcessRates {
            thread_count: threads.len(),
            threads,
            ..ProcessRates::idle(pid, 1, "p", Role::Other)
        };
        let mut report = CpuReport {
            window_ms: 100.0,
            total_cpu_pct: 0.0,
            roles: vec![],
            threads_omitted: 0,
            gone_pids: vec![],
            processes: vec![
                process(1, vec![thread(1, 5.0), thread(2, 0.1)]),
                process(2, vec![thread(3, 0.2), thread(4, 3.0)]),
            ],
        };
        drop_lowest_threads(&mut report, 2);
        let left: Vec<u32> = report
            .processes
            .iter()
            .flat_map(|p| p.threads.iter().map(|t| t.tid))
            .collect();
        assert_eq!(left, vec![1, 4]);
        assert_eq!(report.threads_omitted, 2);
    }
}
