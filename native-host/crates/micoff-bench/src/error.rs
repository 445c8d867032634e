//! [`BenchError`]: everything that ends a bench run early, and the exit code each one maps to.
//! Below every other module of the run (conf, reference, the windows), so that all of them can
//! return it.

use std::path::PathBuf;

use micoff_exit::{EXIT_ERROR, EXIT_NOT_FOUND};

#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    #[error("no audio server reachable at {server}: {reason}")]
    NoServer { server: String, reason: String },
    #[error("not found: {0}")]
    NotFound(String),
    #[error("starting {exe}: {source}")]
    Spawn { exe: String, source: std::io::Error },
    #[error("the client failed: {0}")]
    Client(String),
    #[error("timed out waiting for {0}")]
    Timeout(String),
    #[error("{path}: {source}")]
    File {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("sampling: process {0} vanished during the window")]
    Vanished(u32),
    #[error("writing the report: {0}")]
    Io(#[from] std::io::Error),
}

impl BenchError {
    /// The exit code micoff-host documents for this failure: nothing found (no audio server, no
    /// such source/sink), or an error for everything else (usage errors never get this far: clap
    /// rejects them first).
    pub fn exit_code(&self) -> i32 {
        match self {
            BenchError::NoServer { .. } | BenchError::NotFound(_) => EXIT_NOT_FOUND,
            _ => EXIT_ERROR,
        }
    }

    /// What the user can do about it, for the error line (`micoff-host bench: <what>, <this>`).
    pub fn what_to_do(&self) -> &'static str {
        match self {
            BenchError::NoServer { .. } => {
                "start PulseAudio or PipeWire (pipewire-pulse), or give its address with --server"
            }
            BenchError::NotFound(_) => {
                "check the name with `pactl list short sources` (or `sinks`)"
            }
            BenchError::Spawn { .. } => "check that micoff-host can run from where it is",
            BenchError::Client(_) | BenchError::Timeout(_) => {
                "check that the audio server answers (`pactl info`), then run it again"
            }
            BenchError::File { .. } => "check the folder and its permissions",
            BenchError::Vanished(_) => {
                "run it again (with --server-pid if the audio server restarted)"
            }
            BenchError::Io(_) => "check where the output goes",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn not_found_and_other_errors_have_the_documented_exit_codes() {
        let e = BenchError::NoServer {
            server: "unix:/nowhere".into(),
            reason: "Connection refused".into(),
        };
        assert_eq!(e.exit_code(), 4);
        assert!(e.to_string().contains("unix:/nowhere"));
        assert_eq!(BenchError::NotFound("no source".into()).exit_code(), 4);
        assert_eq!(BenchError::Client("x".into()).exit_code(), 1);
    }
}
