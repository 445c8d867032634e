//! The audio server as capture latency sees it: which server it is, its version, the mechanism
//! `latency set` picks there, and [`ServerView`], what the caller asked it (the host's
//! `AudioServer`: `deps::latency_view`) handed in as data.

use crate::protocol::{
    AudioServerInfo, AudioServerKind, AudioStream, LatencyServer, Mechanism, ServerKind,
};

/// pipewire-pulse's first version with per-client `pulse.min.frag` (commit 4f57f3cda).
pub const PIPEWIRE_MIN_RULES: (u32, u32, u32) = (0, 3, 44);

/// What the audio server answered: its info, or why it could not be asked, and its streams (none
/// when it could not be asked, or did not list them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerView {
    pub info: Result<AudioServerInfo, Unreachable>,
    pub streams: Vec<AudioStream>,
}

/// Why the audio server could not be asked, in the two wordings the results use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unreachable {
    /// The whole error as the host words it (`audio server unavailable: …`): a status note.
    pub error: String,
    /// Just why (`connection refused`): what a refused `set` says first.
    pub reason: String,
}

/// `0.3.65` -> (0, 3, 65).
pub fn parse_version(v: &str) -> Option<(u32, u32, u32)> {
    let mut parts = v
        .trim()
        .split(|c: char| !c.is_ascii_digit())
        .filter(|p| !p.is_empty());
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
    let micro = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
    Some((major, minor, micro))
}

pub fn server_of(info: Option<&AudioServerInfo>) -> LatencyServer {
    let Some(info) = info else {
        return LatencyServer {
            kind: ServerKind::Unknown,
            version: None,
            mechanism: Mechanism::LaunchEnvironment,
        };
    };
    match info.kind {
        AudioServerKind::Pipewire => {
            let version = info.server.pipewire_version.clone();
            let rules = version
                .as_deref()
                .and_then(parse_version)
                .is_some_and(|v| v >= PIPEWIRE_MIN_RULES);
            LatencyServer {
                kind: ServerKind::PipewirePulse,
                version,
                mechanism: if rules {
                    Mechanism::PipewirePulseRule
                } else {
                    Mechanism::LaunchEnvironment
                },
            }
        }
        AudioServerKind::Pulseaudio => LatencyServer {
            kind: ServerKind::Pulseaudio,
            version: Some(info.server.server_version.clone()),
            mechanism: Mechanism::LaunchEnvironment,
        },
        AudioServerKind::Unknown => LatencyServer {
            kind: ServerKind::Unknown,
            version: Some(info.server.server_version.clone()),
            mechanism: Mechanism::LaunchEnvironment,
        },
    }
}
