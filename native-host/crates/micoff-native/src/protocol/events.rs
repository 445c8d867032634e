//! What the host sends: every frame is a `result`, an `error` or an `event` (the envelope,
//! [`HostToExtension`]), and the events a subscription carries ([`HostEvent`]).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::audio::{AudioServerInfo, AudioStream, StreamKind};
use super::cpu::CpuReport;
use super::errors::{bound_message, ErrorCode};
use super::history::HistorySnapshot;
use super::request::RequestId;

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
    /// An error reply; its message held to the bounds every message keeps (at most 256
    /// characters, 64 of any one value: micoff-exit's `message`).
    pub fn error(id: Option<RequestId>, code: ErrorCode, message: impl Into<String>) -> Self {
        Self::Error {
            id,
            error: ErrorBody {
                code: code.code(),
                message: bound_message(&message.into()),
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
    /// A `history` subscription: the history as of the sample just taken (`points`: the samples
    /// since the subscription's previous event, all of them in its first) and, from the second
    /// event on, the CPU report that sample came from (held to the `cpu` event's size).
    History {
        history: HistorySnapshot,
        report: Option<CpuReport>,
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
            reason: bound_message(&reason.into()),
        }
    }

    pub fn subscription_ended(code: ErrorCode, reason: impl Into<String>) -> Self {
        Self::SubscriptionEnded {
            code: code.code(),
            reason: bound_message(&reason.into()),
        }
    }
}
