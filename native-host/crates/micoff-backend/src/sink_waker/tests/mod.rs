//! The waker's tests: [`decide`](super::decide) on literal listings (`decide`), the task against a
//! fake client (`task`). The listings here are as PulseAudio 16.1 lists them (`pactl list
//! sinks/sources/source-outputs` on the test rig; an ALSA card's sink as `module-alsa-card.c`
//! shows it).

mod decide;
mod task;

use micoff_pulse::{Device, DeviceKind, ServerInfo, Snapshot, Stream, StreamKind, Streams};

use super::decide::{Leave, Verdict, Wake, NULL_SINK_DRIVER};

const REMAP_DRIVER: &str = "module-remap-source.c";
const ALSA_DRIVER: &str = "module-alsa-card.c";
/// What `pactl list sinks` showed for the rig's idle `spk` a moment after a 10 ms recorder
/// appeared on `mic`: "Latency: 496252 usec, configured 10000 usec".
const IDLE_AHEAD_US: u64 = 496_252;
const ASKED_US: u64 = 10_000;

fn server(is_pipewire: bool) -> ServerInfo {
    ServerInfo {
        server_string: Some("unix:/tmp/rig/pulse.sock".into()),
        socket_path: Some("/tmp/rig/pulse.sock".into()),
        server_name: "pulseaudio".into(),
        server_version: if is_pipewire { "15.0.0" } else { "16.1" }.into(),
        is_pipewire,
        pipewire_version: is_pipewire.then(|| "0.3.65".into()),
        host_name: None,
        user_name: None,
        default_sink_name: Some("out".into()),
        default_source_name: Some("mic".into()),
        sample_format: "s16le".into(),
        sample_rate_hz: 44_100,
        channels: 2,
        server_protocol_version: Some(35),
        client_protocol_version: 35,
        is_local: Some(true),
    }
}

fn device(kind: DeviceKind, index: u32, name: &str, driver: &str) -> Device {
    Device {
        kind,
        index,
        name: name.into(),
        driver: Some(driver.into()),
        state: "idle".into(),
        sample_format: "s16le".into(),
        sample_rate_hz: 44_100,
        channels: 2,
        configured_latency_us: 2_000_000,
        ..Default::default()
    }
}

/// A sink `ahead_us` ahead.
fn sink(index: u32, name: &str, driver: &str, ahead_us: u64) -> Device {
    Device {
        latency_us: ahead_us,
        configured_latency_us: ASKED_US,
        ..device(DeviceKind::Sink, index, name, driver)
    }
}

/// The monitor source of `sink`.
fn monitor(index: u32, sink: &Device) -> Device {
    let mut d = device(
        DeviceKind::Source,
        index,
        &format!("{}.monitor", sink.name),
        sink.driver.as_deref().unwrap_or_default(),
    );
    d.monitor_index = Some(sink.index);
    d.class = Some("monitor".into());
    d.configured_latency_us = ASKED_US;
    d
}

/// A filter source (`module-remap-source` and the like) over `master`.
fn filter(index: u32, name: &str, master: &str) -> Device {
    let mut d = device(DeviceKind::Source, index, name, REMAP_DRIVER);
    d.class = Some("filter".into());
    d.configured_latency_us = ASKED_US;
    d.props
        .insert("device.master_device".into(), master.to_owned());
    d
}

/// A record stream on `source` by a client named `client` running `binary`.
fn record(index: u32, source: u32, client: &str, binary: &str) -> Stream {
    Stream {
        kind: StreamKind::Record,
        index,
        name: Some("RecordStream".into()),
        media_name: Some("RecordStream".into()),
        client_index: Some(9),
        client_name: Some(client.into()),
        application_name: Some(client.into()),
        application_process_id: Some(4242),
        application_process_binary: Some(binary.into()),
        device_index: source,
        device_configured_latency_us: Some(ASKED_US),
        sample_format: "float32le".into(),
        sample_rate_hz: 48_000,
        channels: 1,
        driver: Some("protocol-native.c".into()),
        ..Default::default()
    }
}

/// The rig: null sinks `spk` (0) and `out` (1), monitors 0 and 1, `mic` (2) remapping
/// `spk.monitor`; `spk` `ahead_us` ahead; `streams` recording.
fn rig(ahead_us: u64, streams: Vec<Stream>) -> Snapshot {
    let spk = sink(0, "spk", NULL_SINK_DRIVER, ahead_us);
    let out = sink(1, "out", NULL_SINK_DRIVER, 1_453_818);
    Snapshot {
        server: server(false),
        sources: vec![
            monitor(0, &spk),
            monitor(1, &out),
            filter(2, "mic", "spk.monitor"),
        ],
        sinks: vec![spk, out],
        streams: Streams {
            record: streams,
            playback: Vec::new(),
        },
    }
}

fn chromium(index: u32, source: u32) -> Stream {
    record(index, source, "Chromium input", "chromium")
}

fn woken(v: Verdict) -> Wake {
    match v {
        Verdict::Wake(w) => w,
        Verdict::Leave(l) => panic!("left alone: {l:?}"),
    }
}

fn left(v: Verdict) -> Leave {
    match v {
        Verdict::Leave(l) => l,
        Verdict::Wake(w) => panic!("woken: {w:?}"),
    }
}

/// A playback stream on `sink` by a client named `client` running `binary`.
fn playback(index: u32, sink: u32, client: &str, binary: &str) -> Stream {
    Stream {
        kind: StreamKind::Playback,
        name: Some("AudioStream".into()),
        media_name: Some("AudioStream".into()),
        device_configured_latency_us: Some(PLAYER_ASKED_US),
        sample_format: "float32le".into(),
        sample_rate_hz: 44_100,
        channels: 2,
        ..record(index, sink, client, binary)
    }
}

/// What `pactl list sinks` showed for the rig's `out` 20 ms after PulseAudio was killed and started
/// again under a Firefox call: "Latency: 1736495 usec, configured 18753 usec", Firefox's two playback
/// streams on it ("Sink Latency: 1728426 usec").
const OUT_AHEAD_US: u64 = 1_736_495;
const PLAYER_ASKED_US: u64 = 18_753;

/// The rig with `out` far ahead and `players` on it.
fn rig_playing(out_ahead_us: u64, players: Vec<Stream>) -> Snapshot {
    let mut snap = rig(8_595, Vec::new());
    snap.sinks[1].latency_us = out_ahead_us;
    snap.sinks[1].configured_latency_us = PLAYER_ASKED_US;
    snap.streams.playback = players;
    snap
}

fn firefox_playing(index: u32) -> Stream {
    playback(index, 1, "Firefox", "firefox-esr")
}
