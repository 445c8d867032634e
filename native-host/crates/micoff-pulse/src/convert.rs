//! Translation from libpulse's borrowed info structs to owned data, and the pure parsing behind
//! it (props, latencies). The pure functions are unit-tested with literal samples. Where the server
//! is and whether it is PipeWire: micoff-audio-server.

use std::borrow::Cow;

use libpulse_binding as pulse;
use pulse::context::introspect;
use pulse::proplist::Proplist;
use pulse::sample;

use crate::types::{Device, DeviceKind, Props, SampleSpec, Stream, StreamKind};

/// A client as the server lists it (kept in the cache to name streams).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Client {
    pub index: u32,
    pub name: Option<String>,
    pub props: Props,
}

/// A stream as the server lists it, before joining with its client and device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RawStream {
    pub kind: StreamKind,
    pub index: u32,
    pub name: Option<String>,
    pub client_index: Option<u32>,
    pub device_index: Option<u32>,
    pub sample_spec: SampleSpec,
    pub buffer_latency_us: u64,
    pub device_latency_us: u64,
    pub corked: bool,
    pub muted: bool,
    pub driver: Option<String>,
    pub resample_method: Option<String>,
    pub owner_module: Option<u32>,
    pub props: Props,
}

/// The raw server-info fields (context-level bits are added by the worker).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct RawServerInfo {
    pub server_name: String,
    pub server_version: String,
    pub host_name: String,
    pub user_name: String,
    pub default_sink_name: Option<String>,
    pub default_source_name: Option<String>,
    pub sample_spec: SampleSpec,
}

// ---- pure helpers -------------------------------------------------------------------------

/// Parses a numeric prop like `application.process.id` = `"4242"`.
pub fn parse_u32(value: Option<&str>) -> Option<u32> {
    value?.trim().parse().ok()
}

/// PipeWire's `node.latency` = `"480/48000"` (frames/rate) as microseconds.
pub fn parse_node_latency_us(value: &str) -> Option<u64> {
    let (frames, rate) = value.trim().split_once('/')?;
    let frames: u64 = frames.trim().parse().ok()?;
    let rate: u64 = rate.trim().parse().ok()?;
    if rate == 0 {
        return None;
    }
    Some(frames * 1_000_000 / rate)
}

/// Bytes of audio at `spec` as microseconds (None for an unknown format or zero rate).
pub fn bytes_to_us(bytes: u64, spec: &SampleSpec) -> Option<u64> {
    let sample_bytes: u64 = match spec.format.as_str() {
        "u8" | "aLaw" | "uLaw" | "alaw" | "ulaw" => 1,
        "s16le" | "s16be" => 2,
        "s24le" | "s24be" => 3,
        "float32le" | "float32be" | "s32le" | "s32be" | "s24-32le" | "s24-32be" => 4,
        _ => return None,
    };
    let per_s = sample_bytes * u64::from(spec.channels) * u64::from(spec.rate_hz);
    if per_s == 0 {
        return None;
    }
    Some(bytes * 1_000_000 / per_s)
}

/// Joins a raw stream with its device and client. Application props come from the stream and,
/// where it does not carry them, from its client (PulseAudio copies them; pipewire-pulse may not).
pub(crate) fn build_stream(
    raw: &RawStream,
    device: Option<&Device>,
    client: Option<&Client>,
) -> Stream {
    let prop = |key: &str| -> Option<String> {
        raw.props
            .get(key)
            .or_else(|| client.and_then(|c| c.props.get(key)))
            .cloned()
    };
    let fragment_size_bytes = parse_u32(raw.props.get("pulse.attr.fragsize").map(String::as_str))
        .filter(|&b| b != u32::MAX && b != 0);
    let fragment_latency_us =
        fragment_size_bytes.and_then(|b| bytes_to_us(u64::from(b), &raw.sample_spec));
    let requested_latency_us = raw
        .props
        .get("node.latency")
        .and_then(|v| parse_node_latency_us(v))
        .or(fragment_latency_us);
    Stream {
        kind: raw.kind,
        index: raw.index,
        name: raw.name.clone(),
        media_name: raw
            .props
            .get("media.name")
            .cloned()
            .or_else(|| raw.name.clone()),
        client_index: raw.client_index,
        client_name: client.and_then(|c| c.name.clone()),
        application_name: prop("application.name"),
        application_process_id: parse_u32(prop("application.process.id").as_deref()),
        application_process_binary: prop("application.process.binary"),
        device_index: raw.device_index.unwrap_or(crate::types::INVALID_INDEX),
        device_name: device.map(|d| d.name.clone()),
        device_description: device.and_then(|d| d.description.clone()),
        device_bus: device.and_then(|d| d.bus.clone()),
        device_class: device.and_then(|d| d.class.clone()),
        device_props: device.map(|d| d.props.clone()).unwrap_or_default(),
        device_configured_latency_us: device.map(|d| d.configured_latency_us),
        media_role: raw.props.get("media.role").cloned(),
        sample_format: raw.sample_spec.format.clone(),
        sample_rate_hz: raw.sample_spec.rate_hz,
        channels: raw.sample_spec.channels,
        buffer_latency_us: raw.buffer_latency_us,
        device_latency_us: raw.device_latency_us,
        fragment_size_bytes,
        fragment_latency_us,
        requested_latency_us,
        corked: raw.corked,
        muted: raw.muted,
        driver: raw.driver.clone(),
        resample_method: raw.resample_method.clone(),
        owner_module: raw.owner_module,
        props: raw.props.clone(),
    }
}

// ---- from libpulse ------------------------------------------------------------------------

fn owned(s: &Option<Cow<'_, str>>) -> Option<String> {
    s.as_ref().map(|c| c.to_string())
}

pub(crate) fn props_of(list: &Proplist) -> Props {
    list.iter()
        .filter_map(|key| {
            let value = match list.get_str(&key) {
                Some(v) => v,
                // Binary props (rare, e.g. icons): keep a lossy text form.
                None => String::from_utf8_lossy(list.get(&key)?)
                    .trim_end_matches('\0')
                    .to_owned(),
            };
            Some((key, value))
        })
        .collect()
}

pub(crate) fn spec_of(spec: &sample::Spec) -> SampleSpec {
    SampleSpec {
        format: spec
            .format
            .to_string()
            .map_or_else(|| "invalid".to_owned(), |s| s.into_owned()),
        rate_hz: spec.rate,
        channels: spec.channels,
    }
}

/// A [`Device`] from libpulse's `SourceInfo` or `SinkInfo`: the two structs have these fields
/// in common but no trait that spans them, so one macro reads both; only the monitor differs.
macro_rules! device_of {
    ($info:ident, $kind:expr, $monitor_index:expr) => {{
        let props = props_of(&$info.proplist);
        let spec = spec_of(&$info.sample_spec);
        Device {
            kind: $kind,
            index: $info.index,
            name: owned(&$info.name).unwrap_or_default(),
            description: owned(&$info.description),
            driver: owned(&$info.driver),
            state: format!("{:?}", $info.state).to_lowercase(),
            sample_format: spec.format,
            sample_rate_hz: spec.rate_hz,
            channels: spec.channels,
            latency_us: $info.latency.0,
            configured_latency_us: $info.configured_latency.0,
            bus: props.get("device.bus").cloned(),
            class: props.get("device.class").cloned(),
            monitor_index: $monitor_index,
            muted: $info.mute,
            card_index: $info.card,
            owner_module: $info.owner_module,
            props,
        }
    }};
}

pub(crate) fn source_device(info: &introspect::SourceInfo<'_>) -> Device {
    device_of!(info, DeviceKind::Source, info.monitor_of_sink)
}

pub(crate) fn sink_device(info: &introspect::SinkInfo<'_>) -> Device {
    device_of!(
        info,
        DeviceKind::Sink,
        Some(info.monitor_source).filter(|&i| i != u32::MAX)
    )
}

/// A [`RawStream`] from libpulse's `SourceOutputInfo` or `SinkInputInfo` (as [`device_of`]: the
/// same fields, no common trait); only the names of the device and its latency differ.
macro_rules! stream_of {
    ($info:ident, $kind:expr, $device:ident, $device_usec:ident) => {
        RawStream {
            kind: $kind,
            index: $info.index,
            name: owned(&$info.name),
            client_index: $info.client,
            device_index: Some($info.$device).filter(|&i| i != u32::MAX),
            sample_spec: spec_of(&$info.sample_spec),
            buffer_latency_us: $info.buffer_usec.0,
            device_latency_us: $info.$device_usec.0,
            corked: $info.corked,
            muted: $info.mute,
            driver: owned(&$info.driver),
            resample_method: owned(&$info.resample_method),
            owner_module: $info.owner_module,
            props: props_of(&$info.proplist),
        }
    };
}

pub(crate) fn record_stream(info: &introspect::SourceOutputInfo<'_>) -> RawStream {
    stream_of!(info, StreamKind::Record, source, source_usec)
}

pub(crate) fn playback_stream(info: &introspect::SinkInputInfo<'_>) -> RawStream {
    stream_of!(info, StreamKind::Playback, sink, sink_usec)
}

pub(crate) fn client_of(info: &introspect::ClientInfo<'_>) -> Client {
    Client {
        index: info.index,
        name: owned(&info.name),
        props: props_of(&info.proplist),
    }
}

pub(crate) fn server_of(info: &introspect::ServerInfo<'_>) -> RawServerInfo {
    RawServerInfo {
        server_name: owned(&info.server_name).unwrap_or_default(),
        server_version: owned(&info.server_version).unwrap_or_default(),
        host_name: owned(&info.host_name).unwrap_or_default(),
        user_name: owned(&info.user_name).unwrap_or_default(),
        default_sink_name: owned(&info.default_sink_name),
        default_source_name: owned(&info.default_source_name),
        sample_spec: spec_of(&info.sample_spec),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn numeric_props() {
        assert_eq!(parse_u32(Some("4242")), Some(4242));
        assert_eq!(parse_u32(Some(" 7 ")), Some(7));
        assert_eq!(parse_u32(Some("-1")), None);
        assert_eq!(parse_u32(Some("abc")), None);
        assert_eq!(parse_u32(None), None);
    }

    #[test]
    fn node_latency() {
        assert_eq!(parse_node_latency_us("480/48000"), Some(10_000));
        assert_eq!(parse_node_latency_us("1024/44100"), Some(23_219));
        assert_eq!(parse_node_latency_us("480/0"), None);
        assert_eq!(parse_node_latency_us("480"), None);
        assert_eq!(parse_node_latency_us("x/48000"), None);
    }

    #[test]
    fn bytes_as_time() {
        let spec = SampleSpec {
            format: "s16le".into(),
            rate_hz: 44_100,
            channels: 2,
        };
        assert_eq!(bytes_to_us(1764, &spec), Some(10_000));
        let f32 = SampleSpec {
            format: "float32le".into(),
            rate_hz: 48_000,
            channels: 1,
        };
        assert_eq!(bytes_to_us(1920, &f32), Some(10_000));
        let bad = SampleSpec {
            format: "invalid".into(),
            ..spec
        };
        assert_eq!(bytes_to_us(1, &bad), None);
    }

    fn raw(props: &[(&str, &str)]) -> RawStream {
        RawStream {
            kind: StreamKind::Record,
            index: 3,
            name: Some("Recording".into()),
            client_index: Some(9),
            device_index: Some(1),
            sample_spec: SampleSpec {
                format: "s16le".into(),
                rate_hz: 48_000,
                channels: 2,
            },
            buffer_latency_us: 0,
            device_latency_us: 1234,
            corked: false,
            muted: false,
            driver: Some("protocol-native.c".into()),
            resample_method: None,
            owner_module: None,
            props: props
                .iter()
                .map(|(k, v)| ((*k).into(), (*v).into()))
                .collect(),
        }
    }

    #[test]
    fn stream_joins_device_and_client() {
        let device = Device {
            kind: DeviceKind::Source,
            index: 1,
            name: "mic".into(),
            description: Some("Mic".into()),
            driver: None,
            state: "running".into(),
            sample_format: "s16le".into(),
            sample_rate_hz: 48_000,
            channels: 1,
            latency_us: 0,
            configured_latency_us: 10_000,
            bus: Some("bluetooth".into()),
            class: Some("filter".into()),
            monitor_index: None,
            muted: false,
            card_index: None,
            owner_module: None,
            props: [("device.bus".to_owned(), "bluetooth".to_owned())].into(),
        };
        let client = Client {
            index: 9,
            name: Some("parec".into()),
            props: [
                ("application.process.id".to_owned(), "77".to_owned()),
                ("application.process.binary".to_owned(), "parec".to_owned()),
            ]
            .into(),
        };
        let r = raw(&[
            ("application.name", "parec"),
            ("media.name", "rec"),
            ("pulse.attr.fragsize", "1920"),
        ]);
        let s = build_stream(&r, Some(&device), Some(&client));
        assert_eq!(s.application_name.as_deref(), Some("parec"));
        assert_eq!(
            s.application_process_id,
            Some(77),
            "falls back to the client's props"
        );
        assert_eq!(s.application_process_binary.as_deref(), Some("parec"));
        assert_eq!(s.client_name.as_deref(), Some("parec"));
        assert_eq!(s.media_name.as_deref(), Some("rec"));
        assert_eq!(s.device_name.as_deref(), Some("mic"));
        assert_eq!(s.device_bus.as_deref(), Some("bluetooth"));
        assert_eq!(s.device_configured_latency_us, Some(10_000));
        assert_eq!(s.fragment_size_bytes, Some(1920));
        assert_eq!(s.fragment_latency_us, Some(10_000));
        assert_eq!(s.requested_latency_us, Some(10_000));
        assert_eq!(s.device_latency_us, 1234);
    }

    #[test]
    fn stream_without_device_or_client() {
        let r = raw(&[
            ("node.latency", "960/48000"),
            ("pulse.attr.fragsize", "4294967295"),
        ]);
        let s = build_stream(&r, None, None);
        assert_eq!(s.device_name, None);
        assert_eq!(s.device_index, 1);
        assert_eq!(s.client_name, None);
        assert_eq!(s.fragment_size_bytes, None, "-1 means server default");
        assert_eq!(s.requested_latency_us, Some(20_000));
        assert_eq!(s.media_name.as_deref(), Some("Recording"));
    }

    #[test]
    fn serializes_snake_case_with_units() {
        let s = build_stream(&raw(&[]), None, None);
        let json = serde_json::to_value(&s).unwrap();
        assert_eq!(json["kind"], "record");
        assert_eq!(json["device_latency_us"], 1234);
        assert!(json.get("buffer_latency_us").is_some());
        let ev = crate::PulseEvent::StreamRemoved {
            kind: StreamKind::Playback,
            index: 4,
        };
        assert_eq!(
            serde_json::to_value(&ev).unwrap(),
            serde_json::json!({"type": "stream_removed", "kind": "playback", "index": 4})
        );
    }
}
