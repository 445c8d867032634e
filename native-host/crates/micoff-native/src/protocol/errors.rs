//! Stable numeric error codes (PROTOCOL.md, "Error codes") and why a request frame was refused,
//! with the bounds on an error message and on what it may quote of the caller's request (their
//! one home is micoff-exit's `message`, shared with the command line's error lines).

use super::request::RequestId;

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

/// Why a request frame was rejected: what goes into the error reply.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct RequestError {
    pub id: Option<RequestId>,
    pub code: ErrorCode,
    pub message: String,
}

impl RequestError {
    pub(super) fn new(id: Option<RequestId>, code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            id,
            code,
            message: bound_message(&message.into()),
        }
    }
}

/// Longest error message the host sends: a rejection quotes a bit of the caller's request (a
/// serde message quotes a mistyped string value), never the request back whole.
pub const MAX_ERROR_MESSAGE_CHARS: usize = micoff_exit::MAX_MESSAGE_CHARS;
/// Longest piece of a caller's value (an `id`, a `type`) quoted in a message.
pub(super) const QUOTED_CHARS: usize = micoff_exit::MAX_QUOTED_CHARS;

pub use micoff_exit::{bound_message, bounded};
