//! Why capture latency could not do what it was asked. The host turns it into its own error
//! reply (`HostError`, in deps.rs): the two kinds map to `audio_server_unavailable` and
//! `internal`.

/// A failed `latency set` / `reset` / `restart-audio-service`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LatencyError {
    /// What to do depends on the audio server, and it could not be asked (or is not local).
    #[error("{0}")]
    ServerUnavailable(String),
    /// Anything else: a refused request, a write that failed (and what was put back), a process
    /// that could not be ended.
    #[error("{0}")]
    Failed(String),
}
