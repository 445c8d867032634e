//! `audio_server_info`, `audio_streams` (and the `audio` subscription's payloads): micoff-pulse's
//! own types, with what the host adds.

use serde::{Deserialize, Serialize};

/// Audio streams are micoff-pulse's `Stream`, carried as it is: the device's properties
/// (`device_bus`, `device_description`, `device_props`), the sample spec, requested and current
/// latencies, corked state.
pub use micoff_pulse::{Stream as AudioStream, StreamKind};

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
pub struct AudioStreams {
    pub streams: Vec<AudioStream>,
}
