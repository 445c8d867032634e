//! The bench against real audio servers started privately (micoff-testkit's rigs,
//! docs/test-rig.md): PulseAudio's own debug log shows the `on` client got srbchannel and the `off`
//! one did not (a recording compare and a playback sweep with another client recording); a server
//! without srbchannel gives it to nobody and the report says the saving means nothing;
//! pipewire-pulse reports srbchannel "not_applicable" and still measures. A test fails with an
//! install hint when its server binaries are missing (scripts/ensure-deps.sh installs them).

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::Output;

use micoff_testkit::{bench_summary as summary, AudioRig, PipeWireRig, PulseRig, MIC};

const BENCH: &str = env!("CARGO_BIN_EXE_micoff-bench");

/// Runs the bench against the rig's server; panics with its stderr on failure.
fn bench(rig: &impl AudioRig, args: &[&str]) -> Output {
    bench_at(rig, &rig.server(), args)
}

/// A short sweep's windows: one second each after a 200 ms warmup, half a second of baseline,
/// both srbchannel modes.
fn short_sweep() -> Vec<&'static str> {
    "--duration 1 --warmup-ms 200 --baseline 0.5 --srbchannel both"
        .split(' ')
        .collect()
}

/// Runs the bench against `server` in the rig's environment; panics with its stderr on failure.
fn bench_at(rig: &impl AudioRig, server: &str, args: &[&str]) -> Output {
    let out = rig
        .command(BENCH)
        .args(args)
        .arg("--server")
        .arg(server)
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

/// The lines of the clients called `name` in the server's log.
fn lines_of(clients: &[(String, Vec<String>)], name: &str) -> Vec<String> {
    clients
        .iter()
        .filter(|(n, _)| n == name)
        .flat_map(|(_, l)| l.clone())
        .collect()
}

/// The server log shows srbchannel enabled for every `on` client and refused (no shared memory)
/// for every `off` one; `windows` of each. Returns the log split by client.
fn assert_log_shows_modes(log: &str, windows: usize) -> Vec<(String, Vec<String>)> {
    let clients = clients_in_log(log);
    let count = |name: &str| clients.iter().filter(|(n, _)| n == name).count();
    assert_eq!(count("micoff-bench srbchannel-on"), windows, "on clients");
    assert_eq!(count("micoff-bench srbchannel-off"), windows, "off clients");
    for (name, lines) in &clients {
        let enabled = lines
            .iter()
            .any(|l| l.contains("Client enabled srbchannel"));
        let refused = lines
            .iter()
            .any(|l| l.contains("Disabling srbchannel, reason: No SHM support"));
        match name.as_str() {
            "micoff-bench srbchannel-on" => {
                assert!(enabled && !refused, "on client: {lines:#?}")
            }
            "micoff-bench srbchannel-off" => {
                assert!(refused && !enabled, "off client: {lines:#?}")
            }
            _ => {}
        }
    }
    clients
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
            "--baseline",
            "1",
            "--srbchannel",
            "both",
            "--compare",
            "parec",
            "--json",
        ],
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    std::fs::create_dir_all(artifacts()).ok();
    std::fs::write(artifacts().join("bench-rig-pulseaudio.json"), &out.stdout).ok();

    // The bench's own view: granted 10 ms fragment for every row (parec's through its -v run),
    // srbchannel seen in the clients' eventfds.
    for mode in ["srbchannel_on", "srbchannel_off", "reference"] {
        let s = summary(&report, mode);
        let granted = s["granted_us"].as_u64().unwrap_or(0);
        assert!(
            (9_000..=11_000).contains(&granted),
            "{mode}: granted {granted} us, want 10 ms"
        );
        assert!(
            s["columns"]["client"]["cpu_pct"].as_f64().unwrap() > 0.0,
            "{mode}"
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
    // parec keeps the user's client.conf (shared memory on): it gets srbchannel too.
    assert_eq!(summary(&report, "reference")["srbchannel"], "active");
    assert!(summary(&report, "srbchannel_on")["saving_note"].is_null());
    assert_eq!(report["server"]["srbchannel"], "available");
    assert_eq!(
        report["server"]["pid"].as_u64(),
        rig.server_pid().map(u64::from)
    );
    // Nobody else at the server; its own remap source's stream is named as such.
    assert_eq!(report["warnings"], serde_json::json!([]), "{report}");
    assert_eq!(report["server"]["other_streams"], serde_json::json!([]));
    assert!(report["server"]["module_streams"]
        .to_string()
        .contains("module-remap-source"));
    assert!(report["baseline"]["window_s"].as_f64().unwrap() > 0.5);

    // What it did, on stderr: one progress line per window, the count known from the start.
    let stderr = String::from_utf8_lossy(&out.stderr);
    for line in [
        "[1/4] server alone (idle baseline)",
        "[2/4] record 10 ms, srbchannel on: total ",
        "[3/4] record 10 ms, srbchannel off: total ",
        "[4/4] record 10 ms, parec/pacat: total ",
    ] {
        assert!(stderr.contains(line), "no {line:?} in:\n{stderr}");
    }

    // The server's own view: its debug log per client.
    let log = std::fs::read_to_string(rig.path().join("pulse.log")).unwrap();
    std::fs::write(artifacts().join("bench-rig-pulse.log"), &log).ok();
    let clients = assert_log_shows_modes(&log, 1);
    assert!(!lines_of(&clients, "micoff-bench reference").is_empty());
    drop(rig);
}

#[test]
fn pulseaudio_playback_sweep_mixing_on_and_off() {
    let rig = PulseRig::start_with_debug_log();
    // Another client recording meanwhile: its work lands in the server columns, so the bench
    // must name it.
    let other = rig.parec(MIC, 50);
    rig.wait_for_client_record_streams("the other client's stream", 1);
    let chart = rig.path().join("chart.svg");
    let args = [
        &["playback", "--latency-ms", "10,50"][..],
        &short_sweep(),
        &["--chart", chart.to_str().unwrap()],
    ];
    let out = bench(&rig, &args.concat());
    drop(other);
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
    for row in [
        "| 10 ms | srbchannel on |",
        "| 10 ms | srbchannel off |",
        "| 50 ms | srbchannel on |",
        "| 50 ms | srbchannel off |",
        "| - | server alone (idle) |",
    ] {
        assert!(text.contains(row), "no {row:?} in {text}");
    }
    assert!(
        text.contains("WARNING: other clients' streams were at the server"),
        "{text}"
    );
    assert!(text.contains("micoff-test-parec"), "{text}");
    assert!(!text.contains("NOT granted"), "{text}");
    let svg = std::fs::read_to_string(&chart).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("srbchannel on"));

    let log = std::fs::read_to_string(rig.path().join("pulse.log")).unwrap();
    assert_log_shows_modes(&log, 2);
    drop(rig);
}

#[test]
fn pulseaudio_without_srbchannel_voids_the_saving() {
    let rig = PulseRig::start();
    // A second socket on the same server that never offers srbchannel (shared memory still on):
    // the seeds' "iochannel" client, and what a server with srbchannel=false gives everyone.
    let sock = rig.path().join("no-srb.sock");
    rig.pactl(&[
        "load-module",
        "module-native-protocol-unix",
        "auth-anonymous=1",
        &format!("socket={}", sock.display()),
        "srbchannel=false",
    ]);
    let out = bench_at(
        &rig,
        &format!("unix:{}", sock.display()),
        &[
            "record",
            "--duration",
            "1",
            "--warmup-ms",
            "200",
            "--baseline",
            "0",
            "--srbchannel",
            "both",
            "--json",
        ],
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["server"]["srbchannel"], "not_granted", "{report}");
    assert!(report["server"]["srbchannel_detail"]
        .as_str()
        .unwrap()
        .contains("srbchannel=false"));
    let on = summary(&report, "srbchannel_on");
    assert_eq!(on["srbchannel"], "inactive");
    assert!(on["cpu_saving_pct"].is_null(), "{on}");
    assert!(on["saving_note"]
        .as_str()
        .unwrap()
        .contains("on and off are the same client here"));
    assert!(report["warnings"][0]
        .as_str()
        .unwrap()
        .contains("NOT granted"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("WARNING: srbchannel was NOT granted"),
        "{stderr}"
    );
}

fn artifacts() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../e2e/artifacts")
}

#[test]
fn pipewire_pulse_reports_not_applicable() {
    let rig = PipeWireRig::start();
    // A sweep writes a chart: into the rig's folder, not the working directory.
    let chart = rig.path().join("chart.svg");
    let args = [
        &[
            "record",
            "--chart",
            chart.to_str().unwrap(),
            "--latency-ms",
            "10,20",
        ][..],
        &short_sweep(),
        &["--json"],
    ];
    let out = bench(&rig, &args.concat());
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["server"]["pipewire"], true);
    assert_eq!(report["server"]["srbchannel"], "not_applicable");
    let s = summary(&report, "socket");
    assert_eq!(s["srbchannel"], "not_applicable");
    assert_eq!(report["summaries"].as_array().unwrap().len(), 2);
    assert!(s["columns"]["client"]["cpu_pct"].as_f64().unwrap() > 0.0);
    // One spelling for the value in the whole report (prose in notes may say it in words).
    assert!(!String::from_utf8_lossy(&out.stdout).contains("\"not applicable\""));
    std::fs::create_dir_all(artifacts()).ok();
    std::fs::write(artifacts().join("bench-rig-pipewire.json"), &out.stdout).ok();
    // The window count is known before the first window: baseline + one socket window per
    // latency (not on and off each, of which only one would run).
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("[3/3] record 20 ms, socket only: total "),
        "{stderr}"
    );
    assert!(!stderr.contains("/4]"), "{stderr}");
}
