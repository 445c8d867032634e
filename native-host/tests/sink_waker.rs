//! The real host's sink waker against a private PulseAudio (micoff-testkit's rig): how long a new
//! 10 ms recorder on `mic` waits for its first data, without the host and with it, named as
//! Chromium's capture client and as something else. Fails (never skips) without pulseaudio, pactl,
//! parec or pacat. Before each try `pactl` suspends and resumes the null sink, so it starts
//! rendering its full 2 s ahead: the worst case, which keeps the comparison clear when loaded.

#![allow(clippy::unwrap_used)] // tests may unwrap (house style)

use std::fs::File;
use std::io::Read;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use micoff_testkit::host::chrome_origin;
use micoff_testkit::{
    require, AudioRig, HostClient, Proc, PulseRig, MIC, OUTPUT_SINK, SIGNAL_SINK,
};
use serde_json::json;

/// Chromium's capture client name (micoff-browsers' table).
const CHROMIUM: &str = "Chromium input";
const NOT_A_BROWSER: &str = "micoff-test-parec";
const TRIES: usize = 3;
const FIRST_DATA_LIMIT: Duration = Duration::from_secs(15);
/// The waker's line in the host's log.
const WOKE: &str = "sink waker: woke null sink `spk`";
/** A capture that came while the sink was not far ahead (right after the previous wake): nothing to do. */
const NOT_AHEAD: &str = "why=NotFarAhead";

/// `pacat` playing silence into `spk` at its default latency.
fn playback(rig: &PulseRig) -> Proc {
    require("pacat", "pulseaudio-utils");
    let mut cmd = rig.command("pacat");
    cmd.args(["--raw", "-d", SIGNAL_SINK, "--client-name=micoff-test-tone"])
        .stdin(File::open("/dev/zero").unwrap())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    Proc(cmd.spawn().unwrap())
}

/// Suspends and resumes `spk`: it then renders its full block (2 s) ahead of now.
fn rewind(rig: &PulseRig) {
    rig.pactl(&["suspend-sink", SIGNAL_SINK, "1"]);
    rig.pactl(&["suspend-sink", SIGNAL_SINK, "0"]);
}

/// Starts `parec --latency-msec=10 -d mic` as `client`; the time until its first non-empty read.
fn first_data(rig: &PulseRig, client: &str) -> Duration {
    let (parec, first) = start_recorder(rig, client);
    let took = first
        .recv_timeout(FIRST_DATA_LIMIT)
        .unwrap_or_else(|_| panic!("no data from parec ({client}) within {FIRST_DATA_LIMIT:?}"));
    drop(parec); // killed by pid; its reader thread ends at EOF
    took
}

/// `spk` rewound, then `parec --latency-msec=10 -d mic` started as `client`: the process, and a
/// channel that gets the time from its start to its first non-empty read.
fn start_recorder(rig: &PulseRig, client: &str) -> (Proc, mpsc::Receiver<Duration>) {
    require("parec", "pulseaudio-utils");
    wait_no_recorders(rig);
    rewind(rig);
    let mut cmd = rig.command("parec");
    cmd.args(["--latency-msec=10", "-d", MIC])
        .arg(format!("--client-name={client}"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let started = Instant::now();
    let mut parec = Proc(cmd.spawn().unwrap());
    let mut out = parec.0.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        // A blocking read returns as soon as there is data (or at EOF, with 0).
        let mut buf = [0u8; 4096];
        if matches!(out.read(&mut buf), Ok(n) if n > 0) {
            let _ = tx.send(started.elapsed());
        }
    });
    (parec, rx)
}

/// The real host in native messaging mode on `rig`, logging to `log_path`; answered once its audio
/// client (the one the waker listens on) is connected.
fn start_host(rig: &PulseRig, log_path: &std::path::Path) -> HostClient {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_micoff-host"));
    cmd.arg(chrome_origin())
        .env("RUST_LOG", "micoff_native=debug,micoff_backend=debug")
        .env("NO_COLOR", "1")
        .stderr(File::create(log_path).unwrap());
    rig.env(&mut cmd);
    let mut host = HostClient::spawn(cmd).unwrap();
    let info = host.result(json!({"type": "audio_server_info"}));
    assert_eq!(info["kind"], "pulseaudio", "{info}");
    host
}

fn wait_no_recorders(rig: &PulseRig) {
    micoff_testkit::wait_for("no client record streams", Duration::from_secs(10), || {
        rig.client_record_streams() == 0
    });
}

fn median_ms(mut tries: Vec<Duration>) -> f64 {
    tries.sort();
    tries[tries.len() / 2].as_secs_f64() * 1e3
}

fn ms(tries: &[Duration]) -> Vec<u128> {
    tries.iter().map(Duration::as_millis).collect()
}

#[test]
fn a_browsers_new_capture_gets_data_promptly_and_other_recorders_are_left_alone() {
    let rig = PulseRig::start();
    let _tone = playback(&rig);

    let without: Vec<Duration> = (0..TRIES).map(|_| first_data(&rig, CHROMIUM)).collect();

    let log_path = rig.path().join("host.log");
    let host = start_host(&rig, &log_path);
    let log = || std::fs::read_to_string(&log_path).unwrap();

    let with: Vec<Duration> = (0..TRIES).map(|_| first_data(&rig, CHROMIUM)).collect();
    let wakes = log().matches(WOKE).count();
    let not_ahead = log().matches(NOT_AHEAD).count();
    let other = first_data(&rig, NOT_A_BROWSER);
    let wakes_after_other = log().matches(WOKE).count();
    host.finish();

    let (without_ms, with_ms) = (median_ms(without.clone()), median_ms(with.clone()));
    let summary = format!(
        "first data, ms: without the waker {:?} (median {without_ms:.0}), with it {:?} (median \
         {with_ms:.0}), a recorder that is not a browser's with it {}; host log:\n{}",
        ms(&without),
        ms(&with),
        other.as_millis(),
        log()
    );
    eprintln!("{summary}");
    // The rig shows the delay at all (else the comparison says nothing).
    assert!(without_ms > 1000.0, "{summary}");
    // The waker: a clear gap, with margin for a loaded machine.
    assert!(with_ms * 4.0 < without_ms, "{summary}");
    // Each browser capture woke the sink, or found it not far ahead (a capture that comes right after
    // a wake, before the sink has run ahead again).
    assert!(wakes >= 1, "{summary}");
    assert_eq!(
        wakes + not_ahead,
        TRIES,
        "one wake or one not-far-ahead per browser capture: {summary}"
    );
    // Not a browser's: no wake, and it waited for the sink as before.
    assert_eq!(wakes_after_other, wakes, "{summary}");
    assert!(other.as_secs_f64() * 1e3 > without_ms / 2.0, "{summary}");
}

/// A host that starts while a browser's capture already waits on the sink (the capture opened as the
/// previous host died): its waker's events begin with the client's start, so the capture is handled
/// as a new one and the sink woken.
#[test]
fn a_host_that_starts_after_the_capture_wakes_the_sink_for_it() {
    let rig = PulseRig::start();
    let _tone = playback(&rig);
    let without = first_data(&rig, CHROMIUM);

    let log_path = rig.path().join("host.log");
    let (parec, first) = start_recorder(&rig, CHROMIUM);
    micoff_testkit::wait_for("the capture at the server", Duration::from_secs(10), || {
        rig.client_record_streams() == 1
    });
    let host = start_host(&rig, &log_path);
    let with = first
        .recv_timeout(FIRST_DATA_LIMIT)
        .unwrap_or_else(|_| panic!("no data from parec within {FIRST_DATA_LIMIT:?}"));
    drop(parec);
    let log = std::fs::read_to_string(&log_path).unwrap();
    host.finish();
    let summary = format!(
        "first data without a host {} ms, with a host started after the capture {} ms; host \
         log:\n{log}",
        without.as_millis(),
        with.as_millis()
    );
    eprintln!("{summary}");
    assert!(without.as_secs_f64() > 1.0, "{summary}");
    assert_eq!(log.matches(WOKE).count(), 1, "{summary}");
    assert!(with * 2 < without, "{summary}");
}

/// The state `pactl list short sinks` gives `sink` (`RUNNING`, `IDLE`, `SUSPENDED`).
fn sink_state(rig: &PulseRig, sink: &str) -> String {
    rig.pactl(&["list", "short", "sinks"])
        .lines()
        .find_map(|l| {
            let cols: Vec<&str> = l.split('\t').collect();
            (cols.get(1) == Some(&sink)).then(|| cols.last().unwrap_or(&"").to_string())
        })
        .unwrap_or_else(|| panic!("no sink {sink}"))
}

/// A host killed between its waker's suspend and its resume leaves the null sink suspended (the
/// server keeps a client's suspend after the client is gone) and its ledger entry; the next host on
/// that server resumes the sink. The window itself (two requests written back to back) is not hit
/// by a kill on purpose: the test makes the state such a kill leaves, with a pid that is dead. A
/// sink the user suspended (no entry) stays suspended.
#[test]
fn a_sink_a_killed_host_left_suspended_is_resumed_by_the_next_host() {
    let rig = PulseRig::start();
    let _tone = playback(&rig);
    let mut gone = Command::new("true").spawn().unwrap();
    let dead_pid = gone.id();
    gone.wait().unwrap();
    let ledger = rig
        .path()
        .join("runtime")
        .join(micoff_backend::sink_waker::ledger::LEDGER_DIR);
    std::fs::create_dir_all(&ledger).unwrap();
    let entry = ledger.join(dead_pid.to_string());
    std::fs::write(&entry, format!("{}\n{SIGNAL_SINK}\n", rig.socket.display())).unwrap();
    rig.pactl(&["suspend-sink", SIGNAL_SINK, "1"]);
    rig.pactl(&["load-module", "module-null-sink", "sink_name=users"]);
    rig.pactl(&["suspend-sink", "users", "1"]);
    // pactl has exited: both suspends outlive the client that asked for them.
    assert_eq!(sink_state(&rig, SIGNAL_SINK), "SUSPENDED");
    assert_eq!(sink_state(&rig, "users"), "SUSPENDED");

    let log_path = rig.path().join("host.log");
    let host = start_host(&rig, &log_path);
    micoff_testkit::wait_for(
        "the dead host's sink resumed",
        Duration::from_secs(10),
        || sink_state(&rig, SIGNAL_SINK) != "SUSPENDED",
    );
    let log = std::fs::read_to_string(&log_path).unwrap();
    assert!(
        !entry.exists(),
        "the entry outlived its resume; host log:\n{log}"
    );
    assert!(
        !rig.path().join("runtime/micoff").exists(),
        "the emptied folders stay"
    );
    assert_eq!(sink_state(&rig, "users"), "SUSPENDED", "host log:\n{log}");
    // The virtual microphone delivers again.
    let took = first_data(&rig, NOT_A_BROWSER);
    assert!(took < FIRST_DATA_LIMIT, "host log:\n{log}");
    host.finish();
}

/// `pactl list sinks`' current latency of `sink`, in µs.
fn sink_latency_us(rig: &PulseRig, sink: &str) -> u64 {
    let listing = rig.pactl(&["list", "sinks"]);
    let block = listing
        .split("Sink #")
        .find(|b| b.contains(&format!("Name: {sink}\n")))
        .unwrap_or_else(|| panic!("no sink {sink}"));
    let line = block
        .lines()
        .find(|l| l.trim_start().starts_with("Latency:"))
        .unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// A player on the idle null output sink, named as Firefox's (whose capture waits for its output:
/// docs/design/release-on-mute.md) or as something else: the host wakes the sink for Firefox's only.
#[test]
fn a_firefox_player_on_an_idle_null_sink_wakes_it_and_another_player_does_not() {
    require("pacat", "pulseaudio-utils");
    let rig = PulseRig::start();
    let log_path = rig.path().join("host.log");
    let host = start_host(&rig, &log_path);
    let log = || std::fs::read_to_string(&log_path).unwrap();
    let woke_out = "sink waker: woke null sink `out` for firefox's new playback stream";
    let player = |binary: &str| {
        rig.pactl(&["suspend-sink", OUTPUT_SINK, "1"]);
        rig.pactl(&["suspend-sink", OUTPUT_SINK, "0"]);
        let mut cmd = rig.command("pacat");
        cmd.args(["--raw", "--latency-msec=20", "-d", OUTPUT_SINK])
            .env(
                "PULSE_PROP",
                format!("application.name={binary} application.process.binary={binary}"),
            )
            .stdin(File::open("/dev/zero").unwrap())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        Proc(cmd.spawn().unwrap())
    };
    let other = player("mpv");
    std::thread::sleep(Duration::from_millis(300));
    let other_ahead = sink_latency_us(&rig, OUTPUT_SINK);
    drop(other);
    let firefox = player("firefox-esr");
    micoff_testkit::wait_for("the waker's line", Duration::from_secs(10), || {
        log().contains(woke_out)
    });
    std::thread::sleep(Duration::from_millis(300));
    let firefox_ahead = sink_latency_us(&rig, OUTPUT_SINK);
    drop(firefox);
    let summary = format!(
        "`out` ahead 300 ms after a player started: another program's {other_ahead} µs, \
         Firefox's {firefox_ahead} µs; host log:\n{}",
        log()
    );
    eprintln!("{summary}");
    assert_eq!(log().matches(woke_out).count(), 1, "{summary}");
    // Left alone, the sink still drains what it rendered ahead; woken, it runs at the player's pace.
    assert!(other_ahead > 500_000, "{summary}");
    assert!(firefox_ahead < 200_000, "{summary}");
    host.finish();
}
