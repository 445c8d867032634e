//! The history's sampler, one per connection: a CPU ticker on the browser and the audio server,
//! every [`UNWATCHED_INTERVAL`] while a call is on and no popup watches (samples kept, NOTHING
//! sent), at the shortest subscriber's `interval_ms` while a popup watches, else not at all. The
//! ticker lives across interval changes and is dropped when sampling stops. It finds the processes
//! again every [`RESOLVE_EVERY`] and after each phase change: that walk over every process is most
//! of a tick's cost.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::sync::{mpsc, Notify};
use tokio::task::JoinHandle;
use tokio::time::Instant;

use super::audio_path::audio_path_cpu_pct;
use super::book::CpuHistory;
use crate::deps::{HostError, Sampler, TickOutcome};
use crate::protocol::{CpuReport, HistorySnapshot, Phase};

/// How often the history is sampled during a call while no popup watches: the interval the
/// background's own watcher used before the host kept the history (the chart's 5 minutes hold 60
/// samples; the "saved" figure is the same as before for the same call).
pub const UNWATCHED_INTERVAL: Duration = Duration::from_secs(5);

/// How often the history's ticker looks for its processes again when the phase does not change.
pub const RESOLVE_EVERY: Duration = Duration::from_secs(30);

/// What a subscriber gets after each sample.
#[derive(Debug, Clone, PartialEq)]
pub struct Update {
    /// The history as of the sample, with that sample as its only point.
    pub history: HistorySnapshot,
    /// The CPU report the sample came from.
    pub report: CpuReport,
}

/// Milliseconds since the epoch (the chart's time axis).
pub type Clock = Arc<dyn Fn() -> u64 + Send + Sync>;

/// The wall clock when it is made, moved on by the monotonic clock (tokio's, so tests with paused
/// time see it advance): the history's times never go backwards when the wall clock is set.
pub fn anchored_clock() -> Clock {
    let wall_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
    let start = Instant::now();
    Arc::new(move || {
        let elapsed_ms = u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX);
        wall_ms.saturating_add(elapsed_ms)
    })
}

/// Updates a subscriber may fall behind by before one is dropped (it then lacks that point).
const LISTENER_BACKLOG: usize = 8;

/// The history of one connection and its sampling task; dropping it stops the task.
pub struct HistoryWatch {
    shared: Arc<Shared>,
    task: JoinHandle<()>,
}

struct Shared {
    state: Mutex<State>,
    /// A phase change or a new subscriber: the task re-plans its next tick.
    wake: Notify,
    now_ms: Clock,
}

struct State {
    book: CpuHistory,
    listeners: Vec<Listener>,
    /// The phase changed since the last tick: look for the processes again.
    look_again: bool,
}

struct Listener {
    interval: Duration,
    tx: mpsc::Sender<Update>,
}

impl HistoryWatch {
    /// Starts the (idle) task; it samples through `sampler` once a phase other than `idle` is set
    /// or a subscriber listens. Must be called within a tokio runtime.
    pub fn start(sampler: Arc<dyn Sampler>, now_ms: Clock) -> Self {
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                book: CpuHistory::default(),
                listeners: Vec::new(),
                look_again: false,
            }),
            wake: Notify::new(),
            now_ms,
        });
        let task = tokio::spawn(run(Arc::clone(&shared), sampler));
        Self { shared, task }
    }

    /// The extension's phase changed. Returns the CPU-seconds saved so far.
    pub fn set_phase(&self, phase: Phase) -> f64 {
        let saved = {
            let mut st = self.shared.lock();
            if st.book.phase() != phase {
                st.look_again = true;
            }
            st.book.set_phase((self.shared.now_ms)(), phase);
            st.book.saved_cpu_s()
        };
        self.shared.wake.notify_one();
        saved
    }

    pub fn snapshot(&self) -> HistorySnapshot {
        self.shared.lock().book.snapshot((self.shared.now_ms)())
    }

    /// A new subscriber sampled every `interval` (or more often, for another one): the whole
    /// history now and, after each sample, an [`Update`]. It stops listening when the receiver is
    /// dropped (noticed at the next sample).
    pub fn listen(&self, interval: Duration) -> (HistorySnapshot, mpsc::Receiver<Update>) {
        let (tx, rx) = mpsc::channel(LISTENER_BACKLOG);
        let snapshot = {
            let mut st = self.shared.lock();
            st.listeners.push(Listener { interval, tx });
            st.book.snapshot((self.shared.now_ms)())
        };
        self.shared.wake.notify_one();
        (snapshot, rx)
    }
}

impl Drop for HistoryWatch {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // Nothing in the state can be left half-changed by a panic elsewhere: keep using it.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// How often to sample now; `None`: not at all.
    fn interval(&self) -> Option<Duration> {
        let mut st = self.lock();
        st.listeners.retain(|l| !l.tx.is_closed());
        let watched = st.listeners.iter().map(|l| l.interval).min();
        watched.or((st.book.phase() != Phase::Idle).then_some(UNWATCHED_INTERVAL))
    }

    /// One tick's outcome into the history (and to the subscribers).
    fn take(&self, outcome: Result<TickOutcome, HostError>) {
        let report = match outcome {
            Ok(TickOutcome {
                report: Some(report),
                ..
            }) if !report.processes.is_empty() => report,
            Ok(_) => return, // nothing found to sample: no point (the chart shows a gap)
            Err(e) => {
                tracing::debug!("history: no sample this time: {e}");
                return;
            }
        };
        let pct = audio_path_cpu_pct(&report);
        let mut st = self.lock();
        let now = (self.now_ms)();
        st.book.add_sample(now, pct, report.window_ms);
        st.listeners.retain(|l| !l.tx.is_closed());
        if st.listeners.is_empty() {
            return;
        }
        let history = st.book.snapshot_latest(now);
        for l in &st.listeners {
            let update = Update {
                history: history.clone(),
                report: report.clone(),
            };
            if l.tx.try_send(update).is_err() {
                tracing::debug!("history: a subscriber is behind; this sample is not sent to it");
            }
        }
    }
}

async fn run(shared: Arc<Shared>, sampler: Arc<dyn Sampler>) {
    loop {
        if shared.interval().is_none() {
            shared.wake.notified().await;
            continue;
        }
        // A fresh ticker: its first tick is a baseline (no report).
        let mut fresh = Arc::clone(&sampler).cpu_ticker(None);
        fresh.resolve_every(RESOLVE_EVERY);
        shared.lock().look_again = false;
        let (mut ticker, _) = fresh.tick().await;
        let mut last = Instant::now();
        while let Some(interval) = shared.interval() {
            tokio::select! {
                () = tokio::time::sleep_until(last + interval) => {}
                // Re-plan from the last tick with what changed (a popup opened: sooner).
                () = shared.wake.notified() => continue,
            }
            if std::mem::take(&mut shared.lock().look_again) {
                ticker.resolve_at_next_tick();
            }
            let (back, outcome) = ticker.tick().await;
            ticker = back;
            last = Instant::now();
            shared.take(outcome);
        }
    }
}
