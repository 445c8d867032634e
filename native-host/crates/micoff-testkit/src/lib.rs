//! Test support for micoff's Rust tests and examples (never shipped; docs/test-rig.md). [`rig`]:
//! private audio servers ([`PulseRig`], [`PipeWireRig`]) with the e2e rig's devices
//! ([`SIGNAL_SINK`], [`OUTPUT_SINK`], [`MIC`]), stopped by PID on drop; [`host`]: [`HostClient`], a
//! native messaging client for the real `micoff-host`, on the host's own
//! [`micoff_native::framing::FrameCodec`]; [`wait_for`], [`next_event`], [`require`], [`Proc`]:
//! waiting without fixed sleeps; [`bench_summary`]; [`host_beside_example`]. Panics are how it
//! reports failure (`unwrap` allowed).
#![allow(clippy::unwrap_used)]

pub mod host;
pub mod rig;

use std::path::PathBuf;
use std::process::Child;
use std::time::{Duration, Instant};

use micoff_pulse::PulseEvent;
use serde_json::Value;
use tokio::sync::broadcast;

pub use host::{decode_frames, encode_frame, HostClient};
pub use rig::{spawn_parec, AudioRig, PipeWireRig, PulseRig, MIC, OUTPUT_SINK, SIGNAL_SINK};

/// Polls `cond` every 20 ms until it is true; panics with `what` after `limit`.
pub fn wait_for(what: &str, limit: Duration, mut cond: impl FnMut() -> bool) {
    let start = Instant::now();
    while !cond() {
        assert!(
            start.elapsed() < limit,
            "timed out after {limit:?} waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Whether `tool` is an executable file in `$PATH`.
pub fn which(tool: &str) -> bool {
    std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| d.join(tool).is_file()))
        .unwrap_or(false)
}

/// Fails (never skips) when a tool the rig needs is missing.
pub fn require(tool: &str, package: &str) {
    assert!(
        which(tool),
        "`{tool}` is not installed; these tests need a real audio server: apt-get install {package} \
         (bash scripts/ensure-deps.sh installs them)"
    );
}

/// Kills a child we started, by its PID, and reaps it.
pub fn kill_child(child: &mut Child) {
    let _ = child.kill();
    let _ = child.wait();
}

/// A process we started that is killed on drop (e.g. `parec`).
pub struct Proc(pub Child);

impl Proc {
    pub fn pid(&self) -> u32 {
        self.0.id()
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        kill_child(&mut self.0);
    }
}

/// Waits for the first micoff-pulse event matching `pred` (other events are skipped).
pub async fn next_event(
    rx: &mut broadcast::Receiver<PulseEvent>,
    limit: Duration,
    what: &str,
    mut pred: impl FnMut(&PulseEvent) -> bool,
) -> PulseEvent {
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        match tokio::time::timeout_at(deadline, rx.recv()).await {
            Err(_) => panic!("timed out after {limit:?} waiting for event: {what}"),
            Ok(Err(broadcast::error::RecvError::Lagged(n))) => eprintln!("lagged {n} events"),
            Ok(Err(e)) => panic!("event channel closed while waiting for {what}: {e}"),
            Ok(Ok(ev)) if pred(&ev) => return ev,
            Ok(Ok(_)) => {}
        }
    }
}

/// Waits for process `pid`'s record stream to be announced, and returns it.
pub async fn record_stream_added(
    rx: &mut broadcast::Receiver<PulseEvent>,
    limit: Duration,
    pid: u32,
) -> micoff_pulse::Stream {
    let ev = next_event(rx, limit, "the process's record stream", |e| {
        matches!(e, PulseEvent::StreamAdded { kind: micoff_pulse::StreamKind::Record, stream }
            if stream.application_process_id == Some(pid))
    })
    .await;
    match ev {
        PulseEvent::StreamAdded { stream, .. } => stream,
        _ => unreachable!("next_event returned an event its predicate refused"),
    }
}

/// Record stream `index` as `client` lists it now; panics when it is not listed.
pub async fn listed_record_stream(
    client: &micoff_pulse::PulseClient,
    index: u32,
) -> micoff_pulse::Stream {
    let streams = client.streams().await.unwrap();
    streams
        .record
        .into_iter()
        .find(|s| s.index == index)
        .expect("listed")
}

/// The summary row of `mode` (as spelled in the JSON, e.g. `srbchannel_on`) in the bench's
/// `--json` report; panics with the report when there is none. Tests assert on the JSON as
/// written (its spellings, its nulls), so they read it as a `serde_json::Value`.
pub fn bench_summary<'a>(report: &'a Value, mode: &str) -> &'a Value {
    report["summaries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["mode"] == mode)
        .unwrap_or_else(|| panic!("no {mode} summary in {report}"))
}

/// `target/<profile>/micoff-host`, beside the running example (`target/<profile>/examples/<name>`):
/// what the cost examples measure unless given `--host`.
pub fn host_beside_example() -> std::io::Result<PathBuf> {
    let exe = std::env::current_exe()?;
    exe.parent()
        .and_then(std::path::Path::parent)
        .map(|dir| dir.join("micoff-host"))
        .ok_or_else(|| {
            std::io::Error::other(format!(
                "cannot place the host binary beside {}",
                exe.display()
            ))
        })
}
