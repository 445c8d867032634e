//! The task against a fake client: what it asks the server for each event, and that no failure
//! stops it.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use micoff_pulse::{PulseError, PulseEvent, Snapshot, Stream, StreamKind};
use tokio::sync::broadcast;

use super::*;
use crate::sink_waker::ledger::Ledger;
use crate::sink_waker::task::{run, SinkControl};
use micoff_native::deps::BoxFuture;

/// What the fake answers, in order, and what it was asked.
#[derive(Default)]
struct Script {
    snapshots: VecDeque<Result<Snapshot, PulseError>>,
    suspends: VecDeque<Result<(), PulseError>>,
    /// `(sink, suspend)` per suspend request.
    asked: Vec<(u32, bool)>,
    listings: usize,
    /// The ledger file to look for at each suspend request, and whether it was there.
    ledger_file: Option<std::path::PathBuf>,
    noted_at_suspend: Vec<bool>,
}

#[derive(Clone, Default)]
struct Fake(Arc<Mutex<Script>>);

impl Fake {
    fn new(
        snapshots: Vec<Result<Snapshot, PulseError>>,
        suspends: Vec<Result<(), PulseError>>,
    ) -> Self {
        Self(Arc::new(Mutex::new(Script {
            snapshots: snapshots.into(),
            suspends: suspends.into(),
            ..Script::default()
        })))
    }

    fn asked(&self) -> Vec<(u32, bool)> {
        self.0.lock().unwrap().asked.clone()
    }

    fn listings(&self) -> usize {
        self.0.lock().unwrap().listings
    }
}

impl SinkControl for Fake {
    fn snapshot(&self) -> BoxFuture<Result<Snapshot, PulseError>> {
        let mut s = self.0.lock().unwrap();
        s.listings += 1;
        let answer = s.snapshots.pop_front().unwrap_or_else(|| Err(gone()));
        Box::pin(async move { answer })
    }

    fn suspend_sink(&self, index: u32, suspend: bool) -> BoxFuture<Result<(), PulseError>> {
        let mut s = self.0.lock().unwrap();
        s.asked.push((index, suspend));
        if let Some(f) = s.ledger_file.clone() {
            s.noted_at_suspend.push(f.exists());
        }
        let answer = s.suspends.pop_front().unwrap_or(Ok(()));
        Box::pin(async move { answer })
    }
}

fn gone() -> PulseError {
    PulseError::Disconnected {
        reason: "connection lost".into(),
    }
}

fn refused() -> PulseError {
    PulseError::Protocol {
        op: "suspend_sink",
        message: "suspending sink 0 failed".into(),
    }
}

fn added(stream: Stream) -> PulseEvent {
    PulseEvent::StreamAdded {
        kind: StreamKind::Record,
        stream,
    }
}

fn connected() -> PulseEvent {
    PulseEvent::Connected {
        info: server(false),
    }
}

/// Runs the task over `events` to the end of the channel, keeping no ledger.
async fn run_over(fake: &Fake, events: Vec<PulseEvent>) {
    run_with(fake, events, Ledger::none()).await;
}

async fn run_with(fake: &Fake, events: Vec<PulseEvent>, ledger: Ledger) {
    let (tx, rx) = broadcast::channel(16);
    for e in events {
        tx.send(e).unwrap();
    }
    drop(tx);
    run(fake.clone(), rx, ledger).await;
}

/// This process's pid in the ledger tests; [`LIVE_HOST`] is another running host, any other pid a
/// dead one.
const OWN_PID: u32 = 1000;
const LIVE_HOST: u32 = 1001;
const DEAD_HOST: u32 = 1002;

fn ledger_in(dir: &std::path::Path) -> Ledger {
    Ledger::with(
        Some(dir.to_owned()),
        OWN_PID,
        Box::new(|pid| pid == LIVE_HOST),
    )
}

/// An entry as a host `pid` on the test server (`server(false)`'s socket) writes it.
fn plant(dir: &std::path::Path, pid: u32, server: &str, sink: &str) -> std::path::PathBuf {
    let path = dir.join(pid.to_string());
    std::fs::write(&path, format!("{server}\n{sink}\n")).unwrap();
    path
}

const SOCKET: &str = "/tmp/rig/pulse.sock";

fn suspended_rig() -> Snapshot {
    let mut s = rig(0, vec![]);
    s.sinks[0].state = "suspended".into();
    s
}

#[tokio::test]
async fn a_browser_stream_on_an_idle_null_sink_suspends_then_resumes_it() {
    let fake = Fake::new(vec![Ok(rig(IDLE_AHEAD_US, vec![chromium(14, 2)]))], vec![]);
    run_over(&fake, vec![added(chromium(14, 2))]).await;
    assert_eq!(fake.asked(), [(0, true), (0, false)]);
}

#[tokio::test]
async fn other_streams_do_not_even_list_the_server() {
    let fake = Fake::default();
    let parec = record(14, 2, "micoff-test-parec", "parec");
    let playback = PulseEvent::StreamAdded {
        kind: StreamKind::Playback,
        stream: Stream {
            kind: StreamKind::Playback,
            ..chromium(3, 0)
        },
    };
    let changed = PulseEvent::StreamChanged {
        kind: StreamKind::Record,
        stream: chromium(14, 2),
    };
    run_over(&fake, vec![added(parec), playback, changed]).await;
    assert_eq!(fake.listings(), 0);
    assert!(fake.asked().is_empty());
}

#[tokio::test]
async fn a_sink_at_low_latency_is_listed_but_not_touched() {
    let fake = Fake::new(vec![Ok(rig(8_595, vec![chromium(14, 2)]))], vec![]);
    run_over(&fake, vec![added(chromium(14, 2))]).await;
    assert_eq!(fake.listings(), 1);
    assert!(fake.asked().is_empty());
}

#[tokio::test]
async fn failures_are_logged_and_the_next_stream_is_handled() {
    let snap = |i| Ok(rig(IDLE_AHEAD_US, vec![chromium(i, 2)]));
    let fake = Fake::new(
        vec![
            Err(gone()),                    // stream 14: the listing fails
            snap(15), // stream 15: the suspend is refused (the sink went away)
            Ok(rig(IDLE_AHEAD_US, vec![])), // stream 16: gone by the listing
            snap(17),
        ],
        vec![Err(refused()), Err(refused())],
    );
    let events = (14..=17).map(|i| added(chromium(i, 2))).collect();
    run_over(&fake, events).await;
    // 15's pair (both refused), then 17's.
    assert_eq!(fake.asked(), [(0, true), (0, false), (0, true), (0, false)]);
    // Nothing was left suspended: a reconnect resumes nothing.
    let fake2 = Fake::new(vec![snap(15)], vec![Err(refused()), Err(refused())]);
    run_over(&fake2, vec![added(chromium(15, 2)), connected()]).await;
    assert_eq!(fake2.listings(), 1);
}

#[tokio::test]
async fn a_resume_that_failed_is_retried_after_the_reconnect() {
    let mut suspended = rig(0, vec![]);
    suspended.sinks[0].state = "suspended".into();
    let fake = Fake::new(
        vec![Ok(rig(IDLE_AHEAD_US, vec![chromium(14, 2)])), Ok(suspended)],
        // The suspend went through, then the connection dropped.
        vec![Ok(()), Err(gone())],
    );
    run_over(&fake, vec![added(chromium(14, 2)), connected()]).await;
    assert_eq!(fake.asked(), [(0, true), (0, false), (0, false)]);
}

#[tokio::test]
async fn after_a_server_restart_a_running_sink_is_left_alone() {
    let fake = Fake::new(
        vec![
            Ok(rig(IDLE_AHEAD_US, vec![chromium(14, 2)])),
            Ok(rig(IDLE_AHEAD_US, vec![])),
        ],
        vec![Ok(()), Err(gone())],
    );
    // Twice connected: the left-over resume is tried once only.
    run_over(
        &fake,
        vec![added(chromium(14, 2)), connected(), connected()],
    )
    .await;
    assert_eq!(fake.asked(), [(0, true), (0, false)]);
    assert_eq!(fake.listings(), 2);
}

#[tokio::test]
async fn the_ledger_holds_the_sink_while_the_pair_is_in_flight_and_not_after() {
    let dir = tempfile::tempdir().unwrap();
    let own = dir.path().join(OWN_PID.to_string());
    let fake = Fake::new(vec![Ok(rig(IDLE_AHEAD_US, vec![chromium(14, 2)]))], vec![]);
    fake.0.lock().unwrap().ledger_file = Some(own.clone());
    run_with(
        &fake,
        vec![connected(), added(chromium(14, 2))],
        ledger_in(dir.path()),
    )
    .await;
    assert_eq!(fake.asked(), [(0, true), (0, false)]);
    assert_eq!(fake.0.lock().unwrap().noted_at_suspend, [true, true]);
    assert!(!own.exists(), "the entry outlived the pair");
    assert!(!dir.path().exists(), "the emptied folder stays");
}

#[tokio::test]
async fn a_resume_owed_stays_in_the_ledger_until_it_is_done() {
    let dir = tempfile::tempdir().unwrap();
    let own = dir.path().join(OWN_PID.to_string());
    let fake = Fake::new(
        vec![Ok(rig(IDLE_AHEAD_US, vec![chromium(14, 2)]))],
        vec![Ok(()), Err(gone())],
    );
    run_with(
        &fake,
        vec![connected(), added(chromium(14, 2))],
        ledger_in(dir.path()),
    )
    .await;
    // The host ends here (its channel closed) owing the resume: the entry is the next host's.
    assert_eq!(
        std::fs::read_to_string(&own).unwrap(),
        format!("{SOCKET}\nspk\n")
    );
    let next = Fake::new(vec![Ok(suspended_rig())], vec![]);
    let next_ledger = Ledger::with(Some(dir.path().to_owned()), 2000, Box::new(|_| false));
    run_with(&next, vec![connected()], next_ledger).await;
    assert_eq!(next.asked(), [(0, false)]);
    assert!(!own.exists());
}

#[tokio::test]
async fn a_dead_hosts_suspend_is_resumed_and_nothing_else_is_touched() {
    let dir = tempfile::tempdir().unwrap();
    let dead = plant(dir.path(), DEAD_HOST, SOCKET, "spk");
    let live = plant(dir.path(), LIVE_HOST, SOCKET, "spk");
    let elsewhere = plant(dir.path(), 1003, "/run/user/9/pulse/native", "spk");
    let fake = Fake::new(vec![Ok(suspended_rig())], vec![]);
    run_with(&fake, vec![connected()], ledger_in(dir.path())).await;
    assert_eq!(fake.asked(), [(0, false)], "the dead host's sink, once");
    assert!(!dead.exists());
    assert!(live.exists(), "a running host's entry is its own");
    assert!(
        elsewhere.exists(),
        "another server's entry is not this server's"
    );
}

#[tokio::test]
async fn a_suspended_sink_with_no_entry_is_the_users_and_stays_suspended() {
    let dir = tempfile::tempdir().unwrap();
    let fake = Fake::new(vec![Ok(suspended_rig())], vec![]);
    run_with(&fake, vec![connected()], ledger_in(dir.path())).await;
    assert_eq!(fake.listings(), 0);
    assert!(fake.asked().is_empty());
}

#[tokio::test]
async fn a_dead_hosts_entry_for_a_running_sink_is_dropped_without_a_request() {
    let dir = tempfile::tempdir().unwrap();
    let dead = plant(dir.path(), DEAD_HOST, SOCKET, "spk");
    let torn = dir.path().join("1004");
    std::fs::write(&torn, format!("{SOCKET}\n")).unwrap();
    let fake = Fake::new(vec![Ok(rig(IDLE_AHEAD_US, vec![]))], vec![]);
    run_with(&fake, vec![connected()], ledger_in(dir.path())).await;
    assert!(fake.asked().is_empty());
    assert!(!dead.exists());
    assert!(!torn.exists(), "an entry cut short names nothing to resume");
}

#[tokio::test]
async fn a_dead_hosts_entry_waits_while_the_server_cannot_be_listed() {
    let dir = tempfile::tempdir().unwrap();
    let dead = plant(dir.path(), DEAD_HOST, SOCKET, "spk");
    let fake = Fake::new(vec![Err(gone()), Ok(suspended_rig())], vec![]);
    run_with(&fake, vec![connected()], ledger_in(dir.path())).await;
    assert!(dead.exists(), "kept for the next connection");
    run_with(&fake, vec![connected()], ledger_in(dir.path())).await;
    assert_eq!(fake.asked(), [(0, false)]);
    assert!(!dead.exists());
}

#[tokio::test]
async fn a_firefox_playback_stream_on_a_far_ahead_null_sink_wakes_it_and_chromiums_is_not_even_listed(
) {
    let fake = Fake::new(
        vec![Ok(rig_playing(OUT_AHEAD_US, vec![firefox_playing(0)]))],
        vec![],
    );
    let played = |stream: Stream| PulseEvent::StreamAdded {
        kind: StreamKind::Playback,
        stream,
    };
    run_over(
        &fake,
        vec![
            played(playback(5, 1, "Chromium", "chromium")),
            played(firefox_playing(0)),
        ],
    )
    .await;
    assert_eq!(fake.listings(), 1);
    assert_eq!(fake.asked(), [(1, true), (1, false)]);
}
