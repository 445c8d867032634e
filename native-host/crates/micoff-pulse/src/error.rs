//! Typed errors of the client.

/// Why a request to the audio server did not give an answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PulseError {
    /// No server answered at that address (no socket, connection refused, ...).
    #[error("no audio server running at {server}: {message}")]
    NotRunning { server: String, message: String },
    /// The request did not complete within its time limit.
    #[error("{what} timed out after {timeout_ms} ms")]
    Timeout { what: &'static str, timeout_ms: u64 },
    /// The connection was lost (or had been lost) while the request was pending.
    #[error("disconnected from the audio server: {reason}")]
    Disconnected { reason: String },
    /// The server refused or failed an operation.
    #[error("audio server error in {op}: {message}")]
    Protocol { op: &'static str, message: String },
    /// The configuration cannot be used (e.g. a server string with a NUL byte).
    #[error("invalid configuration: {0}")]
    Config(String),
    /// The client's thread could not be started or has stopped.
    #[error("the pulse client thread is not running: {0}")]
    Thread(String),
}

pub type Result<T, E = PulseError> = std::result::Result<T, E>;
