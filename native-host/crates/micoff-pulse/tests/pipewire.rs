//! Against a private PipeWire + pipewire-pulse (see `micoff_testkit::PipeWireRig`).
#![allow(clippy::unwrap_used)]

use std::time::Duration;

use micoff_pulse::{query_once, PulseClient, PulseConfig, PulseEvent, StreamKind};
use micoff_testkit::{
    listed_record_stream, next_event, record_stream_added, AudioRig, PipeWireRig, MIC,
};

const LIMIT: Duration = Duration::from_secs(15);

#[tokio::test]
async fn pipewire_pulse_server_info_and_record_streams() {
    let rig = PipeWireRig::start();
    let (client, mut events) =
        PulseClient::spawn_subscribed(PulseConfig::new(Some(rig.server()), "micoff-pulse-test"))
            .unwrap();

    let info = client.server_info().await.unwrap();
    assert!(info.is_pipewire, "{info:?}");
    assert!(
        info.server_name.contains("on PipeWire"),
        "{}",
        info.server_name
    );
    assert!(info
        .pipewire_version
        .as_deref()
        .is_some_and(|v| !v.is_empty()));
    assert_eq!(info.default_source_name.as_deref(), Some(MIC));
    assert_eq!(
        info.socket_path.as_deref(),
        Some(rig.socket.to_str().unwrap())
    );

    let parec = rig.parec(MIC, 10);
    let pid = parec.pid();
    let stream = record_stream_added(&mut events, LIMIT, pid).await;
    let index = stream.index;

    // pipewire-pulse announces a new stream corked and unlinked (no source, no fragsize yet)
    // and completes it with change events.
    let ev = next_event(&mut events, LIMIT, "record stream linked to mic", |e| {
        matches!(e, PulseEvent::StreamChanged { stream, .. }
            if stream.index == index && stream.device_name.as_deref() == Some(MIC)
                && stream.fragment_size_bytes.is_some())
    })
    .await;
    assert!(matches!(
        ev,
        PulseEvent::StreamChanged {
            kind: StreamKind::Record,
            ..
        }
    ));
    let s = listed_record_stream(&client, index).await;
    assert_eq!(s.device_name.as_deref(), Some(MIC));
    assert_eq!(s.application_process_id, Some(pid));
    assert_eq!(s.application_name.as_deref(), Some("micoff-test-parec"));
    assert_eq!(s.requested_latency_us, Some(10_000), "{s:#?}");
    assert_eq!(s.fragment_latency_us, Some(10_000), "{s:#?}");

    let snap = tokio::task::spawn_blocking({
        let server = rig.server();
        move || query_once(Some(&server), LIMIT)
    })
    .await
    .unwrap()
    .unwrap();
    assert!(snap.server.is_pipewire);
    assert!(snap
        .streams
        .record
        .iter()
        .any(|s| s.application_process_id == Some(pid)));

    drop(parec);
    next_event(&mut events, LIMIT, "record stream removed", |e| {
        matches!(e, PulseEvent::StreamRemoved { kind: StreamKind::Record, index: i } if *i == index)
    })
    .await;
}
