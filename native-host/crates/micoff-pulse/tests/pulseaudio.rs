//! Against a private PulseAudio (see `micoff_testkit::PulseRig`).
#![allow(clippy::unwrap_used)]

use std::time::Duration;

use micoff_pulse::{query_once, PulseClient, PulseConfig, PulseError, PulseEvent, StreamKind};
use micoff_testkit::{
    listed_record_stream, next_event, record_stream_added, AudioRig, PulseRig, MIC, OUTPUT_SINK,
    SIGNAL_SINK,
};
use tokio::sync::broadcast;

const LIMIT: Duration = Duration::from_secs(10);

fn config(rig: &PulseRig) -> PulseConfig {
    PulseConfig::new(Some(rig.server()), "micoff-pulse-test")
}

fn client(rig: &PulseRig) -> PulseClient {
    PulseClient::spawn(config(rig)).unwrap()
}

/// A client whose event receiver exists before its thread starts: no race with `Connected`.
fn subscribed(rig: &PulseRig) -> (PulseClient, broadcast::Receiver<PulseEvent>) {
    PulseClient::spawn_subscribed(config(rig)).unwrap()
}

/// Whether `client`'s listing has a record stream of process `pid`.
async fn lists_record_stream_of(client: &PulseClient, pid: u32) -> bool {
    let streams = client.streams().await.unwrap();
    streams
        .record
        .iter()
        .any(|s| s.application_process_id == Some(pid))
}

#[tokio::test]
async fn server_info_of_plain_pulseaudio() {
    let rig = PulseRig::start();
    let client = client(&rig);
    let info = client.server_info().await.unwrap();
    assert_eq!(info.server_name, "pulseaudio");
    assert!(!info.is_pipewire);
    assert_eq!(info.pipewire_version, None);
    assert!(!info.server_version.is_empty());
    assert_eq!(info.default_sink_name.as_deref(), Some(OUTPUT_SINK));
    assert_eq!(info.default_source_name.as_deref(), Some(MIC));
    assert_eq!(
        info.socket_path.as_deref(),
        Some(rig.socket.to_str().unwrap())
    );
    assert!(info.server_protocol_version.unwrap_or(0) >= 30);
    assert!(info.client_protocol_version >= 30);
    assert!(info.sample_rate_hz > 0 && info.channels > 0 && !info.sample_format.is_empty());
    assert!(info.host_name.is_some_and(|h| !h.is_empty()));
    assert!(client.is_connected());

    let sources = client.sources().await.unwrap();
    let mic = sources.iter().find(|s| s.name == MIC).expect("mic source");
    assert_eq!(mic.kind, micoff_pulse::DeviceKind::Source);
    assert!(mic.props.contains_key("device.description"));
    let sinks = client.sinks().await.unwrap();
    assert!(sinks.iter().any(|s| s.name == SIGNAL_SINK));
}

#[tokio::test]
async fn record_stream_appears_with_latency_and_pid_then_goes_away() {
    let rig = PulseRig::start();
    let (client, mut events) = subscribed(&rig);
    next_event(&mut events, LIMIT, "connected", |e| {
        matches!(e, PulseEvent::Connected { .. })
    })
    .await;

    let parec = rig.parec(MIC, 10);
    let pid = parec.pid();
    let stream = record_stream_added(&mut events, LIMIT, pid).await;
    assert_eq!(stream.device_name.as_deref(), Some(MIC));
    // parec is a link to pacat.
    let binary = stream
        .application_process_binary
        .clone()
        .unwrap_or_default();
    assert!(binary == "parec" || binary == "pacat", "{binary}");
    assert_eq!(stream.client_name.as_deref(), Some("micoff-test-parec"));
    assert_eq!(stream.sample_rate_hz, 44_100);
    assert!(stream.props.contains_key("media.name"));

    // Latency: a fresh listing reports the device's configured latency, which parec's 10 ms
    // request drives down.
    let index = stream.index;
    let mut configured = None;
    for _ in 0..100 {
        let s = listed_record_stream(&client, index).await;
        assert_eq!(s.application_process_id, Some(pid));
        if let Some(c) = s.device_configured_latency_us.filter(|&c| c > 0) {
            configured = Some((c, s.clone()));
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let (configured_us, listed) = configured.expect("configured latency never reported");
    assert!(
        configured_us <= 10_000,
        "configured latency {configured_us} us for a 10 ms reader"
    );
    let json = serde_json::to_value(&listed).unwrap();
    assert!(json.get("buffer_latency_us").is_some() && json.get("device_latency_us").is_some());

    drop(parec);
    let ev = next_event(&mut events, LIMIT, "record stream removed", |e| {
        matches!(e, PulseEvent::StreamRemoved { kind: StreamKind::Record, index: i } if *i == index)
    })
    .await;
    assert!(matches!(ev, PulseEvent::StreamRemoved { .. }));
    let streams = client.streams().await.unwrap();
    assert!(streams.record.iter().all(|s| s.index != index));
}

#[tokio::test]
async fn bluetooth_source_is_reported_by_device_bus() {
    let rig = PulseRig::start();
    rig.pactl(&[
        "load-module",
        "module-remap-source",
        "source_name=btmic",
        &format!("master={SIGNAL_SINK}.monitor"),
        "source_properties=device.bus=bluetooth",
    ]);
    let client = client(&rig);
    let _parec = rig.parec("btmic", 20);
    let mut found = None;
    for _ in 0..250 {
        let streams = client.streams().await.unwrap();
        if let Some(s) = streams
            .record
            .into_iter()
            .find(|s| s.device_name.as_deref() == Some("btmic"))
        {
            found = Some(s);
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let stream = found.expect("record stream on btmic");
    assert_eq!(stream.device_bus.as_deref(), Some("bluetooth"));
    assert_eq!(
        stream.device_props.get("device.bus").map(String::as_str),
        Some("bluetooth")
    );
    let sources = client.sources().await.unwrap();
    let bt = sources.iter().find(|s| s.name == "btmic").unwrap();
    assert_eq!(bt.bus.as_deref(), Some("bluetooth"));
    let mic = sources.iter().find(|s| s.name == MIC).unwrap();
    assert_ne!(mic.bus.as_deref(), Some("bluetooth"));
}

#[tokio::test]
async fn server_restart_disconnects_then_reconnects() {
    let mut rig = PulseRig::start();
    let (client, mut events) = subscribed(&rig);
    next_event(&mut events, LIMIT, "connected", |e| {
        matches!(e, PulseEvent::Connected { .. })
    })
    .await;

    rig.kill_server();
    next_event(&mut events, LIMIT, "disconnected", |e| {
        matches!(e, PulseEvent::Disconnected { .. })
    })
    .await;
    assert!(!client.is_connected());
    // While down, a request fails at once instead of hanging.
    let err = tokio::time::timeout(Duration::from_secs(2), client.streams())
        .await
        .expect("request hung while disconnected")
        .unwrap_err();
    assert!(matches!(err, PulseError::Disconnected { .. }), "{err:?}");

    rig.start_server();
    let ev = next_event(&mut events, LIMIT, "reconnected", |e| {
        matches!(e, PulseEvent::Connected { .. })
    })
    .await;
    let PulseEvent::Connected { info } = ev else {
        unreachable!()
    };
    assert_eq!(info.server_name, "pulseaudio");
    assert!(client.is_connected());

    let parec = rig.parec(MIC, 10);
    let pid = parec.pid();
    next_event(&mut events, LIMIT, "stream after reconnect", |e| {
        matches!(e, PulseEvent::StreamAdded { stream, .. } if stream.application_process_id == Some(pid))
    })
    .await;
    assert!(lists_record_stream_of(&client, pid).await);
}

#[tokio::test]
async fn existing_streams_are_announced_after_connected() {
    let rig = PulseRig::start();
    let parec = rig.parec(MIC, 10);
    let pid = parec.pid();
    rig.wait_for_client_record_streams("parec's stream", 1);
    // Connected, then StreamAdded for the stream that was already there.
    let (client, mut events) = subscribed(&rig);
    next_event(&mut events, LIMIT, "connected", |e| {
        matches!(e, PulseEvent::Connected { .. })
    })
    .await;
    next_event(&mut events, LIMIT, "existing stream announced", |e| {
        matches!(e, PulseEvent::StreamAdded { stream, .. } if stream.application_process_id == Some(pid))
    })
    .await;
    assert!(lists_record_stream_of(&client, pid).await);
    drop(parec);
    next_event(&mut events, LIMIT, "removed", |e| {
        matches!(e, PulseEvent::StreamRemoved { .. })
    })
    .await;
}

#[tokio::test]
async fn load_and_unload_module() {
    let rig = PulseRig::start();
    let (client, mut events) = subscribed(&rig);
    let index = client
        .load_module("module-null-sink", "sink_name=extra")
        .await
        .unwrap();
    let added = next_event(
        &mut events,
        LIMIT,
        "sink added",
        |e| matches!(e, PulseEvent::DeviceAdded { device, .. } if device.name == "extra"),
    )
    .await;
    let PulseEvent::DeviceAdded { device: sink, .. } = added else {
        unreachable!()
    };
    assert!(client
        .sinks()
        .await
        .unwrap()
        .iter()
        .any(|s| s.name == "extra"));
    client.unload_module(index).await.unwrap();
    // The server answers the unload before the module is gone (PulseAudio unloads it on a deferred
    // event): the sink is gone once its removal is announced.
    next_event(
        &mut events,
        LIMIT,
        "sink removed",
        |e| matches!(e, PulseEvent::DeviceRemoved { index, .. } if *index == sink.index),
    )
    .await;
    assert!(client
        .sinks()
        .await
        .unwrap()
        .iter()
        .all(|s| s.name != "extra"));
    let err = client
        .load_module("module-does-not-exist", "")
        .await
        .unwrap_err();
    assert!(matches!(err, PulseError::Protocol { .. }), "{err:?}");
}

#[tokio::test]
async fn suspend_and_resume_a_sink() {
    let rig = PulseRig::start();
    let client = client(&rig);
    let state = |sinks: Vec<micoff_pulse::Device>| {
        let spk = sinks.into_iter().find(|s| s.name == SIGNAL_SINK).unwrap();
        (spk.index, spk.state)
    };
    let (index, before) = state(client.sinks().await.unwrap());
    assert_ne!(before, "suspended");
    client.suspend_sink(index, true).await.unwrap();
    assert_eq!(state(client.sinks().await.unwrap()).1, "suspended");
    // Its monitor follows the sink.
    let monitor = format!("{SIGNAL_SINK}.monitor");
    let sources = client.sources().await.unwrap();
    let m = sources.iter().find(|s| s.name == monitor).unwrap();
    assert_eq!(m.state, "suspended");
    client.suspend_sink(index, false).await.unwrap();
    assert_ne!(state(client.sinks().await.unwrap()).1, "suspended");
    // A sink that does not exist: the server refuses, the client stays up.
    let err = client.suspend_sink(9_999, true).await.unwrap_err();
    assert!(matches!(err, PulseError::Protocol { .. }), "{err:?}");
    // PA_INVALID_INDEX would mean every sink: never sent.
    let err = client
        .suspend_sink(micoff_pulse::INVALID_INDEX, true)
        .await
        .unwrap_err();
    assert!(matches!(err, PulseError::Config(_)), "{err:?}");
    let sinks = client.sinks().await.unwrap();
    assert!(sinks.iter().all(|s| s.state != "suspended"), "{sinks:?}");
}

#[test]
fn query_once_lists_everything() {
    let rig = PulseRig::start();
    let _parec = rig.parec(MIC, 10);
    rig.wait_for_client_record_streams("parec's stream", 1);
    let snap = query_once(Some(&rig.server()), LIMIT).unwrap();
    assert_eq!(snap.server.server_name, "pulseaudio");
    assert!(snap.sources.iter().any(|s| s.name == MIC));
    assert!(snap.sinks.iter().any(|s| s.name == SIGNAL_SINK));
    // module-remap-source records from spk.monitor itself: a module-owned stream, no client.
    let on_mic: Vec<_> = snap
        .streams
        .record
        .iter()
        .filter(|s| s.device_name.as_deref() == Some(MIC))
        .collect();
    assert_eq!(on_mic.len(), 1, "{:#?}", snap.streams.record);
    assert!(on_mic[0].client_index.is_some());
    let remap = snap
        .streams
        .record
        .iter()
        .find(|s| s.device_name.as_deref() == Some(format!("{SIGNAL_SINK}.monitor").as_str()));
    assert!(remap.is_some_and(|s| s.is_module_stream()));
    assert!(!on_mic[0].is_module_stream());
}

#[test]
fn query_once_without_a_server_is_not_running() {
    let dir = tempfile::tempdir().unwrap();
    let server = format!("unix:{}/nothing.sock", dir.path().display());
    let start = std::time::Instant::now();
    let err = query_once(Some(&server), LIMIT).unwrap_err();
    assert!(matches!(err, PulseError::NotRunning { .. }), "{err:?}");
    // libpulse's reason, not pa_context_connect's -1 read as an error code ("Access denied").
    assert!(err.to_string().ends_with(": Connection refused"), "{err}");
    assert!(
        start.elapsed() < Duration::from_secs(3),
        "took {:?}",
        start.elapsed()
    );
}

#[tokio::test]
async fn client_without_a_server_answers_not_running_and_drops_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let server = format!("unix:{}/nothing.sock", dir.path().display());
    let client = PulseClient::spawn(PulseConfig::new(Some(server), "t")).unwrap();
    let err = tokio::time::timeout(Duration::from_secs(3), client.server_info())
        .await
        .expect("hung")
        .unwrap_err();
    assert!(matches!(err, PulseError::NotRunning { .. }), "{err:?}");
    drop(client);
}

fn signal(pid: u32, sig: &str) {
    let ok = std::process::Command::new("kill")
        .args([sig, &pid.to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok, "kill {sig} {pid}");
}

#[tokio::test]
async fn a_stuck_server_gives_timeout_and_a_dying_one_fails_pending_requests() {
    let mut rig = PulseRig::start();
    let mut cfg = config(&rig);
    cfg.request_timeout = Duration::from_millis(300);
    let (client, mut events) = PulseClient::spawn_subscribed(cfg).unwrap();
    next_event(&mut events, LIMIT, "connected", |e| {
        matches!(e, PulseEvent::Connected { .. })
    })
    .await;
    let pid = rig.server_pid().unwrap();

    // A stopped server does not answer: the request times out.
    signal(pid, "-STOP");
    let err = client.streams().await.unwrap_err();
    assert!(
        matches!(
            err,
            PulseError::Timeout {
                what: "streams",
                ..
            }
        ),
        "{err:?}"
    );
    signal(pid, "-CONT");
    client.streams().await.unwrap();
    drop(client);

    // A request pending when the server dies gets Disconnected, not a hang or a timeout.
    let mut cfg = config(&rig);
    cfg.request_timeout = Duration::from_secs(30);
    let (client, mut events) = PulseClient::spawn_subscribed(cfg).unwrap();
    next_event(&mut events, LIMIT, "connected", |e| {
        matches!(e, PulseEvent::Connected { .. })
    })
    .await;
    signal(pid, "-STOP");
    let pending = client.server_info();
    let killer = async {
        tokio::time::sleep(Duration::from_millis(50)).await;
        rig.kill_server();
    };
    let (result, ()) = tokio::time::timeout(Duration::from_secs(5), async {
        tokio::join!(pending, killer)
    })
    .await
    .expect("pending request hung after the server died");
    let err = result.unwrap_err();
    assert!(matches!(err, PulseError::Disconnected { .. }), "{err:?}");
}

#[tokio::test]
async fn default_source_change_is_a_server_changed_event() {
    let rig = PulseRig::start();
    rig.pactl(&[
        "load-module",
        "module-remap-source",
        "source_name=other",
        &format!("master={SIGNAL_SINK}.monitor"),
    ]);
    let (client, mut events) = subscribed(&rig);
    next_event(&mut events, LIMIT, "connected", |e| {
        matches!(e, PulseEvent::Connected { .. })
    })
    .await;
    rig.pactl(&["set-default-source", "other"]);
    next_event(&mut events, LIMIT, "server changed", |e| {
        matches!(e, PulseEvent::ServerChanged { info }
            if info.default_source_name.as_deref() == Some("other"))
    })
    .await;
    let info = client.server_info().await.unwrap();
    assert_eq!(info.default_source_name.as_deref(), Some("other"));
}
