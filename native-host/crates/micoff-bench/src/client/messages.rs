//! The JSON lines the child client sends its parent ([`ChildMessage`]: `ready`, `done`, `error`)
//! and what they carry: the granted buffer, the other clients and streams at the server, and what
//! the parent's one-shot probe learns.

use serde::{Deserialize, Serialize};

use crate::args::Direction;
use crate::client::stream_format::bytes_to_us;

/// One line from the child to the parent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ChildMessage {
    Ready(ReadyInfo),
    Done(DoneInfo),
    Error {
        message: String,
        /// The server said "no such entity" (e.g. the `--source` / `--sink` does not exist).
        #[serde(default)]
        not_found: bool,
    },
}

/// Sent once the stream is ready and the first data moved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReadyInfo {
    pub pid: u32,
    /// Device the stream ended up on.
    pub device: Option<String>,
    pub sample_rate: u32,
    pub channels: u8,
    pub buffer: GrantedBuffer,
    /// Stream latency (`pa_stream_get_latency`) right after start.
    pub latency_us: Option<u64>,
    /// Read/write callbacks so far (the `done` count minus this one covers the window).
    pub callbacks: u64,
    /// Other clients and streams at the server when the stream was ready (before the window).
    #[serde(default)]
    pub others: ServerActivity,
}

/// Buffer attributes the server granted, in bytes (`u32::MAX` = server default).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct GrantedBuffer {
    pub maxlength_bytes: u32,
    pub tlength_bytes: u32,
    pub prebuf_bytes: u32,
    pub minreq_bytes: u32,
    pub fragsize_bytes: u32,
}

impl GrantedBuffer {
    /// The granted latency that matters for `direction`: fragsize for recording, tlength for
    /// playback, in microseconds of the stream's sample spec.
    pub fn granted_us(&self, direction: Direction, sample_rate: u32, channels: u8) -> Option<u64> {
        let bytes = match direction {
            Direction::Record => self.fragsize_bytes,
            Direction::Playback => self.tlength_bytes,
        };
        bytes_to_us(bytes, sample_rate, channels)
    }
}

/// Sent after the parent asked us to stop.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DoneInfo {
    /// Bytes read (record) or written (playback) since the stream started.
    pub bytes: u64,
    /// Read or write callbacks since the stream started (each one is a wakeup of ours).
    pub callbacks: u64,
    pub overflows: u64,
    pub underflows: u64,
    pub buffer: GrantedBuffer,
    pub latency_us: Option<u64>,
    /// Other clients and streams at the server at the end (listed after the window).
    #[serde(default)]
    pub others: ServerActivity,
}

/// Other clients and streams at the server, as one connection sees them (itself left out). Their
/// work lands in the server columns too: a reader must know they were there.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerActivity {
    /// Names of the other connected clients (an idle client costs the server nothing).
    pub clients: Vec<String>,
    /// Streams of other clients, e.g. `source output "rec" of client "Chromium"`.
    pub client_streams: Vec<String>,
    /// Streams the server's own modules hold (e.g. module-remap-source's on its master): part of
    /// the server's configuration; the idle baseline shows what they cost.
    pub module_streams: Vec<String>,
}

impl ServerActivity {
    /// Adds what `other` saw that is not listed yet (keeps first-seen order).
    pub fn merge(&mut self, other: &ServerActivity) {
        fn add(into: &mut Vec<String>, from: &[String]) {
            for x in from {
                if !into.contains(x) {
                    into.push(x.clone());
                }
            }
        }
        add(&mut self.clients, &other.clients);
        add(&mut self.client_streams, &other.client_streams);
        add(&mut self.module_streams, &other.module_streams);
    }
}

/// What a one-shot connection learns about the server (the parent's probe before any window).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerProbe {
    pub server_name: String,
    pub server_version: String,
    pub protocol_version: Option<u32>,
    pub activity: ServerActivity,
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn granted_picks_fragsize_or_tlength() {
        let b = GrantedBuffer {
            maxlength_bytes: u32::MAX,
            tlength_bytes: 3528,
            prebuf_bytes: 0,
            minreq_bytes: 0,
            fragsize_bytes: 1764,
        };
        assert_eq!(b.granted_us(Direction::Record, 44_100, 2), Some(10_000));
        assert_eq!(b.granted_us(Direction::Playback, 44_100, 2), Some(20_000));
    }

    #[test]
    fn messages_round_trip() {
        let m = ChildMessage::Error {
            message: "x".into(),
            not_found: true,
        };
        let s = serde_json::to_string(&m).unwrap();
        assert_eq!(s, r#"{"type":"error","message":"x","not_found":true}"#);
        assert_eq!(serde_json::from_str::<ChildMessage>(&s).unwrap(), m);
        // An older child's line without the field still reads.
        let old: ChildMessage = serde_json::from_str(r#"{"type":"error","message":"x"}"#).unwrap();
        assert!(matches!(
            old,
            ChildMessage::Error {
                not_found: false,
                ..
            }
        ));
    }
}
