//! Owned, serde-serializable views of the audio server. Field names are snake_case with units in
//! the name (`_us`, `_hz`, `_bytes`). Nothing here borrows from libpulse.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Property list of a stream, device or client (`application.name` -> `Firefox`, ...).
pub type Props = BTreeMap<String, String>;

/// Sample format, rate and channel count. (The wire structs carry these flat, as
/// `sample_format`, `sample_rate_hz`, `channels`, as the shared protocol fixtures do.)
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct SampleSpec {
    /// libpulse's short name: `s16le`, `float32le`, ... (`invalid` when unknown).
    pub format: String,
    pub rate_hz: u32,
    pub channels: u8,
}

/// What the audio server says about itself, plus what we know about the connection.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerInfo {
    /// The server string libpulse connected to (e.g. `/run/user/1000/pulse/native`, `unix:/x`).
    pub server_string: Option<String>,
    /// The unix socket path of the connection, when it is a unix socket. The micoff-proc crate
    /// finds the process holding it.
    pub socket_path: Option<String>,
    /// `pulseaudio` for both PulseAudio and pipewire-pulse.
    pub server_name: String,
    /// `16.1`, or `15.0.0` for pipewire-pulse (whose `server_name` then says
    /// `PulseAudio (on PipeWire 0.3.65)`).
    pub server_version: String,
    #[serde(default)]
    pub is_pipewire: bool,
    /// `0.3.65` when `is_pipewire`.
    pub pipewire_version: Option<String>,
    pub host_name: Option<String>,
    pub user_name: Option<String>,
    pub default_sink_name: Option<String>,
    pub default_source_name: Option<String>,
    /// The server's default sample spec.
    #[serde(default)]
    pub sample_format: String,
    pub sample_rate_hz: u32,
    pub channels: u8,
    /// Protocol version of the server.
    pub server_protocol_version: Option<u32>,
    /// Protocol version of our libpulse.
    #[serde(default)]
    pub client_protocol_version: u32,
    /// Whether the server is on this machine.
    pub is_local: Option<bool>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum StreamKind {
    /// A source output: something records from a source (a microphone).
    #[default]
    Record,
    /// A sink input: something plays into a sink.
    Playback,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum DeviceKind {
    #[default]
    Source,
    Sink,
}

/// PA_INVALID_INDEX: "no such object" in libpulse's index fields.
pub const INVALID_INDEX: u32 = u32::MAX;

/// A source or a sink. `Default` (a source with no name, nothing set) is for test fixtures.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Device {
    pub kind: DeviceKind,
    pub index: u32,
    pub name: String,
    pub description: Option<String>,
    pub driver: Option<String>,
    /// `running`, `idle`, `suspended` or `invalid`.
    pub state: String,
    pub sample_format: String,
    pub sample_rate_hz: u32,
    pub channels: u8,
    /// Current latency of the device.
    pub latency_us: u64,
    /// The latency the device is configured to (the smallest any stream asked for).
    pub configured_latency_us: u64,
    /// `device.bus`: `pci`, `usb`, `bluetooth`, ...
    pub bus: Option<String>,
    /// `device.class`: `sound`, `monitor`, `filter`, `abstract`, ...
    pub class: Option<String>,
    /// For a source: the sink this is the monitor of. For a sink: its monitor source.
    pub monitor_index: Option<u32>,
    pub muted: bool,
    pub card_index: Option<u32>,
    pub owner_module: Option<u32>,
    #[serde(default)]
    pub props: Props,
}

/// A record stream (source output) or playback stream (sink input). `Default` (a record stream
/// with nothing set) is for building test fixtures.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Stream {
    pub kind: StreamKind,
    pub index: u32,
    /// The stream's name (`media.name` as the server reports it).
    pub name: Option<String>,
    pub media_name: Option<String>,
    pub client_index: Option<u32>,
    pub client_name: Option<String>,
    /// `application.name` (of the stream, else of its client).
    pub application_name: Option<String>,
    /// `application.process.id` (of the stream, else of its client).
    pub application_process_id: Option<u32>,
    /// `application.process.binary` (of the stream, else of its client).
    pub application_process_binary: Option<String>,
    /// Source index for a record stream, sink index for a playback stream. `4294967295`
    /// (PA_INVALID_INDEX) while the stream is not linked yet (pipewire-pulse shows new streams
    /// unlinked for a moment); `device_name` is then null.
    pub device_index: u32,
    pub device_name: Option<String>,
    pub device_description: Option<String>,
    pub device_bus: Option<String>,
    pub device_class: Option<String>,
    #[serde(default)]
    pub device_props: Props,
    /// The device's configured latency (source/sink `configured_latency`).
    pub device_configured_latency_us: Option<u64>,
    /// `media.role`: `phone`, `music`, ... (often unset).
    pub media_role: Option<String>,
    pub sample_format: String,
    pub sample_rate_hz: u32,
    pub channels: u8,
    /// Latency of the stream's own buffer (`buffer_usec`).
    pub buffer_latency_us: u64,
    /// Latency of the device it is attached to (`source_usec` / `sink_usec`).
    pub device_latency_us: u64,
    /// Fragment size the client asked for, when the server shows it in the props
    /// (pipewire-pulse: `pulse.attr.fragsize`; PulseAudio does not expose it).
    pub fragment_size_bytes: Option<u32>,
    /// `fragment_size_bytes` as time at the stream's sample spec.
    pub fragment_latency_us: Option<u64>,
    /// The latency requested from the graph when visible (pipewire-pulse `node.latency`,
    /// e.g. `480/48000` -> 10000).
    pub requested_latency_us: Option<u64>,
    pub corked: bool,
    pub muted: bool,
    pub driver: Option<String>,
    pub resample_method: Option<String>,
    pub owner_module: Option<u32>,
    #[serde(default)]
    pub props: Props,
}

impl Stream {
    /// A stream a server module opened for itself (e.g. `module-remap-source` recording from
    /// its master, loopbacks): it has an owner module and no client. Not an application's.
    pub fn is_module_stream(&self) -> bool {
        self.owner_module.is_some() && self.client_index.is_none()
    }

    pub fn sample_spec(&self) -> SampleSpec {
        SampleSpec {
            format: self.sample_format.clone(),
            rate_hz: self.sample_rate_hz,
            channels: self.channels,
        }
    }
}

/// Record and playback streams at one moment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Streams {
    pub record: Vec<Stream>,
    pub playback: Vec<Stream>,
}

/// Everything at once (for `doctor` and `top`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Snapshot {
    pub server: ServerInfo,
    pub sources: Vec<Device>,
    pub sinks: Vec<Device>,
    pub streams: Streams,
}

/// What the client pushes to subscribers. After `Connected`, a `StreamAdded` follows for every
/// stream that already exists; `Disconnected` means every stream is gone (no `StreamRemoved` is
/// sent for them).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum PulseEvent {
    Connected { info: ServerInfo },
    Disconnected { reason: String },
    StreamAdded { kind: StreamKind, stream: Stream },
    StreamChanged { kind: StreamKind, stream: Stream },
    StreamRemoved { kind: StreamKind, index: u32 },
    DeviceAdded { kind: DeviceKind, device: Device },
    DeviceChanged { kind: DeviceKind, device: Device },
    DeviceRemoved { kind: DeviceKind, index: u32 },
    ServerChanged { info: ServerInfo },
}
