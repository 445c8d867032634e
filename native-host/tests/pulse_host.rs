//! The real host binary against a private PulseAudio (micoff-testkit's rig): native messaging over
//! stdin/stdout frames with `PULSE_SERVER` set, and `sample --audio-server --json`. Fails (never
//! skips) when pulseaudio or pactl/parec are missing.

#![allow(clippy::unwrap_used)] // tests may unwrap (house style)

use std::process::Command;

use micoff_testkit::host::chrome_origin;
use micoff_testkit::{AudioRig, HostClient, PulseRig, MIC};
use serde_json::{json, Value};

fn rig_env(rig: &PulseRig, cmd: &mut Command) {
    rig.env(cmd);
    cmd.env(
        "RUST_LOG",
        "micoff_native=debug,micoff_backend=debug,micoff_pulse=debug",
    );
}

/// The host in native messaging mode, launched the way Chromium launches it, in the rig's
/// environment.
fn start_host(rig: &PulseRig) -> HostClient {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_micoff-host"));
    cmd.arg(chrome_origin());
    rig_env(rig, &mut cmd);
    HostClient::spawn(cmd).unwrap()
}

fn parec_stream(streams: &Value, pid: u32) -> Option<Value> {
    streams["streams"]
        .as_array()?
        .iter()
        .find(|s| s["kind"] == "record" && s["application_process_id"] == json!(pid))
        .cloned()
}

#[test]
fn native_messaging_against_a_private_pulseaudio() {
    let mut rig = PulseRig::start();
    let parec = rig.parec(MIC, 10);
    let mut host = start_host(&rig);

    let version = host.result(json!({"type": "version"}));
    assert_eq!(version["protocol_version"], 1);

    // The doctor answers over native messaging, with the server's facts from the host's client.
    let doctor = host.result(json!({"type": "doctor"}));
    let findings = doctor["findings"].as_array().unwrap();
    let server_finding = findings.iter().find(|f| f["id"] == "audio_server");
    assert_eq!(
        server_finding.map(|f| f["status"].clone()),
        Some(json!("ok")),
        "{doctor}"
    );

    let info = host.result(json!({"type": "audio_server_info"}));
    assert_eq!(info["kind"], "pulseaudio", "{info}");
    assert_eq!(info["default_source_name"], MIC);
    let server_pid = rig.server_pid().unwrap();
    assert_eq!(info["pids"], json!([server_pid]), "{info}");

    // parec's record stream, with its latency and its source's properties.
    let streams = host.poll(
        "parec's record stream",
        json!({"type": "audio_streams"}),
        |r| parec_stream(r, parec.pid()).is_some(),
    );
    let s = parec_stream(&streams, parec.pid()).unwrap();
    assert_eq!(s["device_name"], MIC, "{s}");
    assert!(s["device_props"].is_object(), "{s}");
    assert!(s.get("device_bus").is_some(), "{s}");
    assert!(s["sample_rate_hz"].as_u64().unwrap() > 0, "{s}");
    // PulseAudio hands recorded data over at once (buffer latency ~0); parec's 10 ms request shows
    // as the source's configured latency (the smallest any reader asked for).
    assert!(
        s["buffer_latency_us"].is_u64() && s["device_latency_us"].is_u64(),
        "{s}"
    );
    let configured = s["device_configured_latency_us"].as_u64().unwrap();
    assert!(
        (1..=20_000).contains(&configured),
        "10 ms asked, source configured to {configured} us: {s}"
    );
    assert_eq!(s["corked"], false);

    // The audio server's threads in a CPU sample.
    let report = host.result(json!({"type": "cpu_sample", "window_ms": 200, "pids": [server_pid]}));
    let server = &report["processes"][0];
    assert_eq!(server["pid"], json!(server_pid), "{report}");
    assert_eq!(server["role"], "audio_server");
    assert!(
        !server["threads"].as_array().unwrap().is_empty(),
        "{report}"
    );
    assert_eq!(report["roles"][0]["role"], "audio_server");

    // Subscription: the current state first, then parec going away.
    let sub = host.result(json!({"type": "subscribe", "topic": "audio"}))["subscription"].clone();
    host.event(&sub, "audio_connected", |e| {
        e["server"]["pids"] == json!([server_pid])
    });
    let added = host.event(&sub, "stream_added", |e| {
        e["stream"]["application_process_id"] == json!(parec.pid())
    });
    let index = added["stream"]["index"].clone();
    drop(parec); // killed by pid
    host.event(&sub, "stream_removed", |e| {
        e["kind"] == "record" && e["index"] == index
    });

    // The server restarts on the same socket: the host notices, reconnects, and answers again.
    rig.kill_server();
    host.event(&sub, "audio_disconnected", |_| true);
    rig.start_server();
    let new_pid = rig.server_pid().unwrap();
    host.event(&sub, "audio_connected", |e| {
        e["server"]["pids"] == json!([new_pid])
    });
    let parec = rig.parec(MIC, 10);
    host.event(&sub, "stream_added", |e| {
        e["stream"]["application_process_id"] == json!(parec.pid())
    });
    host.poll(
        "parec's stream after the restart",
        json!({"type": "audio_streams"}),
        |r| parec_stream(r, parec.pid()).is_some(),
    );
    let unsub = host.result(json!({"type": "unsubscribe", "subscription": sub}));
    assert_eq!(unsub["subscription"], sub);
    host.finish();
}

#[test]
fn sample_audio_server_json_includes_the_server_threads() {
    let rig = PulseRig::start();
    let _parec = rig.parec(MIC, 10);
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_micoff-host"));
    // --all: every thread of the server, also one idle over the window.
    cmd.args([
        "sample",
        "--audio-server",
        "--window",
        "0.3",
        "--json",
        "--all",
    ]);
    rig_env(&rig, &mut cmd);
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "sample failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let server_pid = rig.server_pid().unwrap();
    let server = report["processes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["pid"] == json!(server_pid))
        .unwrap_or_else(|| panic!("no server process in {report}"));
    assert_eq!(server["role"], "audio_server");
    let threads = server["threads"].as_array().unwrap();
    assert!(
        threads.len() >= 2,
        "pulseaudio has a main and an I/O thread: {server}"
    );
    assert!(threads.iter().all(|t| t["comm"].is_string()));
    assert!(server["thread_count"].as_u64().unwrap() >= 2);
}
