//! The bench against real audio servers started privately in a temp dir (docs: test-rig notes):
//! - PulseAudio with a debug log: `--srbchannel both` must show in the server's own log that the
//!   `on` client got srbchannel and the `off` one did not, and the bench must report a granted
//!   10 ms fragment.
//! - pipewire-pulse: the bench reports srbchannel "not applicable" and still measures.
//!
//! Each test fails with an install hint when its server binaries are not installed;
//! scripts/ensure-deps.sh installs them. Servers are stopped by the PIDs these tests started.

#![allow(clippy::unwrap_used)]

// The private audio servers of micoff-pulse's tests, reused as they are (like the host's
// pulse_host.rs does).
#[path = "../../micoff-pulse/tests/common/mod.rs"]
mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::{AudioRig, PipeWireRig, PulseRig};

const BENCH: &str = env!("CARGO_BIN_EXE_micoff-bench");

/// Runs the bench against the rig's server; panics with its stderr on failure.
fn bench(rig: &impl AudioRig, args: &[&str]) -> Output {
    let out = rig
        .command(BENCH)
        .args(args)
        .arg("--server")
        .arg(rig.server())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    eprintln!("bench stderr:\n{stderr}");
    assert!(out.status.success(), "bench failed: {stderr}");
    out
}

/// PulseAudio's debug log split by native-protocol client: (client name, its lines).
fn clients_in_log(log: &str) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(Option<u32>, String, Vec<String>)> = Vec::new();
    for line in log.lines() {
        if let Some(rest) = line.split("client.c: Created ").nth(1) {
            let idx = rest.split_whitespace().next().and_then(|n| n.parse().ok());
            out.push((idx, String::new(), Vec::new()));
        } else if let Some(rest) = line.split("client.c: Freed ").nth(1) {
            let (idx, name) = rest.split_once(' ').unwrap_or((rest, ""));
            let idx: Option<u32> = idx.parse().ok();
            if let Some(c) = out.iter_mut().rev().find(|c| c.0 == idx) {
                c.1 = name.trim_matches('"').to_string();
            }
        } else if let Some(last) = out.last_mut() {
            last.2.push(line.to_string());
        }
    }
    out.into_iter().map(|(_, n, l)| (n, l)).collect()
}

#[test]
fn log_splitting_by_client() {
    let log = "I: [pulseaudio] client.c: Created 0 \"Native client (UNIX socket client)\"\n\
               D: [pulseaudio] protocol-native.c: Enabling srbchannel...\n\
               I: [pulseaudio] client.c: Freed 0 \"micoff-bench srbchannel-on\"\n\
               I: [pulseaudio] client.c: Created 1 \"Native client (UNIX socket client)\"\n\
               D: [pulseaudio] protocol-native.c: Disabling srbchannel, reason: No SHM support\n\
               I: [pulseaudio] client.c: Freed 1 \"micoff-bench srbchannel-off\"\n";
    let c = clients_in_log(log);
    assert_eq!(c.len(), 2);
    assert_eq!(c[0].0, "micoff-bench srbchannel-on");
    assert!(c[0].1[0].contains("Enabling srbchannel"));
    assert_eq!(c[1].0, "micoff-bench srbchannel-off");
}

fn summary<'a>(report: &'a serde_json::Value, mode: &str) -> &'a serde_json::Value {
    report["summaries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["mode"] == mode)
        .unwrap_or_else(|| panic!("no {mode} summary in {report}"))
}

#[test]
fn pulseaudio_srbchannel_modes_differ_in_the_server_log() {
    let rig = PulseRig::start_with_debug_log();
    let out = bench(
        &rig,
        &[
            "record",
            "--latency-ms",
            "10",
            "--duration",
            "2",
            "--warmup-ms",
            "300",
            "--srbchannel",
            "both",
            "--json",
        ],
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    std::fs::create_dir_all(artifacts()).ok();
    std::fs::write(artifacts().join("bench-rig-pulseaudio.json"), &out.stdout).ok();

    // The bench's own view: granted 10 ms fragment, srbchannel seen in the client's eventfds.
    for mode in ["srbchannel_on", "srbchannel_off"] {
        let s = summary(&report, mode);
        let granted = s["granted_us"].as_u64().unwrap();
        assert!(
            (9_000..=11_000).contains(&granted),
            "{mode}: granted {granted} us, want 10 ms"
        );
        assert!(s["columns"]["total"]["cpu_pct"].as_f64().unwrap() > 0.0);
        assert!(
            s["columns"]["server_main"]["wakeups_per_s"]
                .as_f64()
                .unwrap()
                > 0.0
        );
    }
    assert_eq!(summary(&report, "srbchannel_on")["srbchannel"], "active");
    assert_eq!(summary(&report, "srbchannel_off")["srbchannel"], "inactive");
    assert_eq!(
        report["server"]["pid"].as_u64(),
        rig.server_pid().map(u64::from)
    );

    // The server's own view: its debug log per client.
    let log = std::fs::read_to_string(rig.path().join("pulse.log")).unwrap();
    std::fs::write(artifacts().join("bench-rig-pulse.log"), &log).ok();
    let clients = clients_in_log(&log);
    let lines_of = |name: &str| -> Vec<String> {
        clients
            .iter()
            .filter(|(n, _)| n == name)
            .flat_map(|(_, l)| l.clone())
            .collect()
    };
    let on = lines_of("micoff-bench srbchannel-on");
    let off = lines_of("micoff-bench srbchannel-off");
    assert!(!on.is_empty() && !off.is_empty(), "clients not in the log");
    assert!(
        on.iter().any(|l| l.contains("Enabling srbchannel")),
        "on: {on:#?}"
    );
    assert!(on.iter().any(|l| l.contains("Client enabled srbchannel")));
    assert!(
        off.iter()
            .any(|l| l.contains("Disabling srbchannel, reason: No SHM support")),
        "off: {off:#?}"
    );
    assert!(!off.iter().any(|l| l.contains("Enabling srbchannel")));
    drop(rig);
}

#[test]
fn pulseaudio_playback_and_sweep_chart() {
    let rig = PulseRig::start();
    let chart = rig.path().join("chart.svg");
    let out = bench(
        &rig,
        &[
            "playback",
            "--latency-ms",
            "10,50",
            "--duration",
            "1",
            "--warmup-ms",
            "200",
            "--srbchannel",
            "on",
            "--chart",
            chart.to_str().unwrap(),
        ],
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("== CPU against requested latency =="),
        "{text}"
    );
    // Every window saw the stream running (a stalled start would show 0 wakeups).
    for line in text
        .lines()
        .filter(|l| l.starts_with("| ") && l.contains(" ms |"))
    {
        let last = line.trim_end_matches('|').rsplit('|').next().unwrap();
        let wakeups: f64 = last.trim().parse().unwrap();
        assert!(wakeups > 0.0, "stalled window: {line}");
    }
    assert!(text.contains("| 50 ms | srbchannel on |"), "{text}");
    let svg = std::fs::read_to_string(&chart).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("srbchannel on"));
    drop(rig);
}

fn artifacts() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../e2e/artifacts")
}

#[test]
fn pipewire_pulse_reports_not_applicable() {
    let rig = PipeWireRig::start();
    let out = bench(
        &rig,
        &[
            "record",
            "--duration",
            "1",
            "--warmup-ms",
            "200",
            "--srbchannel",
            "both",
            "--json",
        ],
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["server"]["pipewire"], true);
    assert_eq!(report["server"]["srbchannel"], "not applicable");
    let s = summary(&report, "socket");
    assert_eq!(s["srbchannel"], "not_applicable");
    assert_eq!(report["summaries"].as_array().unwrap().len(), 1);
    assert!(s["columns"]["client"]["cpu_pct"].as_f64().unwrap() > 0.0);
}
