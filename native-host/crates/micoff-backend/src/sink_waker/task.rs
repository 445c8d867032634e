//! The waker's task: micoff-pulse events in, at most a listing and a suspend/resume pair out per
//! new browser stream. It only ever awaits the event channel: no timer, no polling.

use std::time::Instant;

use micoff_pulse::{PulseError, PulseEvent, ServerInfo, Snapshot, StreamKind};
use tokio::sync::broadcast;

use super::decide::{decide, may_wake, Verdict, Wake};
use super::ledger::{Entry, Ledger};
use micoff_native::deps::BoxFuture;

/// What the waker needs from the audio client: the real `PulseClient`, a fake in tests.
pub(super) trait SinkControl: Send + Sync + 'static {
    fn snapshot(&self) -> BoxFuture<Result<Snapshot, PulseError>>;
    fn suspend_sink(&self, index: u32, suspend: bool) -> BoxFuture<Result<(), PulseError>>;
}

/// A sink whose resume did not go through: resumed (by name: indices do not survive a server
/// restart) when the connection is back, if it is still suspended.
type Unresumed = Option<String>;

/// Runs until the event channel closes (the client is gone). `ledger` keeps, while a suspend may
/// stand, what the next host needs to undo it should this one die (ledger.rs).
pub(super) async fn run<C: SinkControl>(
    client: C,
    mut events: broadcast::Receiver<PulseEvent>,
    ledger: Ledger,
) {
    let mut unresumed: Unresumed = None;
    // The server the client is connected to: the ledger's entries are per server.
    let mut server = String::new();
    loop {
        match events.recv().await {
            Ok(PulseEvent::StreamAdded { kind, stream }) if may_wake(kind, &stream) => {
                let woke = on_browser_stream(&client, kind, stream.index, &ledger, &server).await;
                if let Some(sink) = woke {
                    unresumed = Some(sink);
                }
            }
            Ok(PulseEvent::Connected { info }) => {
                server = server_of(&info);
                if let Some(sink) = unresumed.take() {
                    if resume_left_over(&client, &sink).await {
                        ledger.clear();
                    }
                }
                for left in ledger.left_by_dead(&server) {
                    tracing::info!(
                        "sink waker: a micoff-host that ended may have left `{}` suspended ({})",
                        left.entry.sink,
                        left.path.display()
                    );
                    if resume_left_over(&client, &left.entry.sink).await {
                        ledger.forget(&left);
                    }
                }
            }
            Ok(_) => {}
            Err(broadcast::error::RecvError::Lagged(n)) => {
                // Streams added meanwhile are missed: their first words come late, nothing worse.
                tracing::debug!(missed = n, "sink waker: audio events lagged");
            }
            Err(broadcast::error::RecvError::Closed) => return,
        }
    }
}

/// The ledger's name for the server `info` describes: its socket, else the server string.
fn server_of(info: &ServerInfo) -> String {
    info.socket_path
        .clone()
        .or_else(|| info.server_string.clone())
        .unwrap_or_default()
}

/// Lists the server, decides, and wakes the null sink if that is the verdict. Returns the sink's
/// name if it was suspended and could not be resumed.
async fn on_browser_stream<C: SinkControl>(
    client: &C,
    kind: StreamKind,
    stream: u32,
    ledger: &Ledger,
    server: &str,
) -> Option<String> {
    let seen = Instant::now();
    let snapshot = match client.snapshot().await {
        Ok(s) => s,
        Err(e) => {
            tracing::info!(stream, "sink waker: cannot list the audio server: {e}");
            return None;
        }
    };
    match decide(&snapshot, kind, stream) {
        Verdict::Leave(why) => {
            tracing::debug!(stream, ?why, "sink waker: nothing to wake");
            None
        }
        Verdict::Wake(wake) => {
            ledger.note(&Entry {
                server: server.to_owned(),
                sink: wake.sink_name.clone(),
            });
            let unresumed = suspend_and_resume(client, &wake, seen).await;
            if unresumed.is_none() {
                ledger.clear();
            }
            unresumed
        }
    }
}

async fn suspend_and_resume<C: SinkControl>(client: &C, w: &Wake, seen: Instant) -> Option<String> {
    let started = Instant::now();
    // Both requests leave together: the server runs them in order, so the sink is suspended for
    // as short a time as possible and never left suspended by a gap between two round trips.
    let (suspended, resumed) = tokio::join!(
        client.suspend_sink(w.sink_index, true),
        client.suspend_sink(w.sink_index, false),
    );
    let took_ms = started.elapsed().as_secs_f64() * 1e3;
    let after_stream_ms = seen.elapsed().as_secs_f64() * 1e3;
    let (sink, stream, browser) = (&w.sink_name, w.stream_index, w.browser.name());
    let chain = w.chain.join(" <- ");
    let (ahead_ms, asked_ms) = (w.ahead_us / 1000, w.asked_us / 1000);
    match (suspended, resumed) {
        (Ok(()), Ok(())) => {
            let (what, asks) = match w.stream_kind {
                StreamKind::Record => ("capture", "the source asks"),
                StreamKind::Playback => ("playback", "its streams ask"),
            };
            tracing::info!(
                "sink waker: woke null sink `{sink}` for {browser}'s new {what} stream {stream} \
                 on {chain}: it was {ahead_ms} ms ahead, {asks} {asked_ms} ms; \
                 suspend+resume took {took_ms:.1} ms, {after_stream_ms:.1} ms after the stream \
                 was seen"
            );
            None
        }
        (Err(e), Ok(())) | (Err(e @ PulseError::Protocol { .. }), Err(_)) => {
            // Gone meanwhile or refused: the sink was not suspended by us (a resume of a running
            // sink changes nothing).
            tracing::info!("sink waker: could not suspend `{sink}` for stream {stream}: {e}");
            None
        }
        (_, Err(e)) => {
            // The suspend may have reached the server (the connection dropped, a timeout).
            tracing::warn!(
                "sink waker: `{sink}` may be left suspended, its resume failed ({e}); resuming \
                 it when the connection is back"
            );
            Some(sink.clone())
        }
    }
}

/// Resumes `sink` after a reconnect if it is still suspended (a server that restarted has a
/// fresh, running sink and nothing is done). Whether it is known not to be left suspended by us now
/// (a resume only lifts a client's suspend: a sink suspended as idle stays so, as it should).
async fn resume_left_over<C: SinkControl>(client: &C, sink: &str) -> bool {
    let suspended = match client.snapshot().await {
        Ok(s) => s
            .sinks
            .into_iter()
            .find(|d| d.name == sink && d.state == "suspended"),
        Err(e) => {
            tracing::warn!("sink waker: cannot list the server to resume `{sink}`: {e}");
            return false;
        }
    };
    let Some(device) = suspended else {
        return true;
    };
    match client.suspend_sink(device.index, false).await {
        Ok(()) => {
            tracing::info!("sink waker: resumed `{sink}`, left suspended");
            true
        }
        Err(e) => {
            tracing::warn!("sink waker: could not resume `{sink}`: {e}");
            false
        }
    }
}
