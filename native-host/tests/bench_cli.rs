//! `micoff-host bench` through the real host binary: the host re-runs itself (`micoff-host bench
//! <direction> --child ...`) as the measured client, against a private PulseAudio (micoff-testkit's
//! rig); and its documented exit codes (2 usage error, 4 no audio
//! server / no such device). Fails (never skips) when pulseaudio or pactl/parec are missing.

#![allow(clippy::unwrap_used)] // tests may unwrap (house style)

use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use micoff_testkit::{bench_summary as summary, AudioRig, PulseRig};
use serde_json::Value;

const HOST: &str = env!("CARGO_BIN_EXE_micoff-host");

/// `micoff-host bench <args>` in the rig's environment.
fn host_bench(rig: &PulseRig, args: &[&str]) -> Output {
    rig.command(HOST)
        .arg("bench")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// `micoff-host bench <args>` with no audio server around at all.
fn host_bench_alone(args: &[&str]) -> Output {
    let dir = tempfile::tempdir().unwrap();
    Command::new(HOST)
        .arg("bench")
        .args(args)
        .env("XDG_RUNTIME_DIR", dir.path())
        .env("PULSE_RUNTIME_PATH", dir.path())
        .env("HOME", dir.path())
        .env_remove("PULSE_SERVER")
        .env_remove("PULSE_CLIENTCONFIG")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// The `application.process.binary` of the first client called `name` in `pactl list clients`.
fn client_binary(rig: &PulseRig, name: &str) -> Option<String> {
    let out = rig
        .command("pactl")
        .args(["list", "clients"])
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.split("Client #")
        .find(|c| c.contains(&format!("application.name = \"{name}\"")))?
        .lines()
        .find_map(|l| {
            l.trim()
                .strip_prefix("application.process.binary = \"")
                .map(|v| v.trim_end_matches('"').to_string())
        })
}

#[test]
fn host_bench_measures_both_modes_with_itself_as_the_client() {
    let rig = PulseRig::start();
    // While the bench runs, look at the `on` client from the server's side: which program is it?
    let done = AtomicBool::new(false);
    let (out, binary) = std::thread::scope(|s| {
        let watcher = s.spawn(|| {
            while !done.load(Ordering::SeqCst) {
                if let Some(b) = client_binary(&rig, "micoff-bench srbchannel-on") {
                    return Some(b);
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            None
        });
        let out = host_bench(
            &rig,
            &[
                "record",
                "--latency-ms",
                "10",
                "--duration",
                "1",
                "--warmup-ms",
                "200",
                "--baseline",
                "0.5",
                "--srbchannel",
                "both",
                "--json",
                "--server",
                &rig.server(),
            ],
        );
        done.store(true, Ordering::SeqCst);
        (out, watcher.join().unwrap())
    });
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "micoff-host bench failed:\n{stderr}");

    // The measured client was micoff-host itself, re-run as `micoff-host bench record --child`.
    assert_eq!(
        binary.as_deref(),
        Some("micoff-host"),
        "the on client, as the server saw it"
    );
    assert_eq!(
        client_binary(&rig, "micoff-bench srbchannel-on"),
        None,
        "it is gone"
    );

    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["server"]["srbchannel"], "available", "{report}");
    assert_eq!(summary(&report, "srbchannel_on")["srbchannel"], "active");
    assert_eq!(summary(&report, "srbchannel_off")["srbchannel"], "inactive");
    for mode in ["srbchannel_on", "srbchannel_off"] {
        let granted = summary(&report, mode)["granted_us"].as_u64().unwrap();
        assert!((9_000..=11_000).contains(&granted), "{mode}: {granted} us");
    }
    assert_eq!(
        report["server"]["pid"].as_u64(),
        rig.server_pid().map(u64::from)
    );
    assert!(report["baseline"].is_object());
    // Progress on stderr, JSON alone on stdout.
    for line in [
        "[1/3] server alone (idle baseline), 0.5 s: server ",
        "[2/3] record 10 ms, srbchannel on: total ",
        "[3/3] record 10 ms, srbchannel off: total ",
    ] {
        assert!(stderr.contains(line), "no {line:?} in:\n{stderr}");
    }
}

#[test]
fn host_bench_exit_codes_are_the_documented_ones() {
    // Usage errors: 2, from the argument parser, before anything runs.
    for bad in [
        &["record", "--duration", "0"][..],
        &["record", "--duration", "-1"],
        &["record", "--duration", "abc"],
        &["record", "--baseline", "-2"],
        &["sideways"],
    ] {
        let out = host_bench_alone(bad);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{bad:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // No audio server: 4, with the server named.
    let out = host_bench_alone(&[
        "record",
        "--duration",
        "1",
        "--server",
        "unix:/nonexistent/micoff/pulse.sock",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    assert!(
        stderr.contains("no audio server reachable at unix:/nonexistent/micoff/pulse.sock"),
        "{stderr}"
    );
}

#[test]
fn host_bench_without_such_a_source_is_not_found() {
    let rig = PulseRig::start();
    let out = host_bench(
        &rig,
        &[
            "record",
            "--duration",
            "1",
            "--baseline",
            "0",
            "--srbchannel",
            "on",
            "--source",
            "no-such-source",
            "--server",
            &rig.server(),
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    assert!(stderr.contains("not found"), "{stderr}");
}
