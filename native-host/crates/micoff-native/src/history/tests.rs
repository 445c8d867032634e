//! The watch's cadence in paused time, on a fake sampler: when it samples, how often, what a
//! subscriber gets, and that it stops (and lets its ticker go) when nothing needs it.

#![allow(clippy::unwrap_used)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::audio_path::audio_path_cpu_pct;
use super::watch::{anchored_clock, HistoryWatch, RESOLVE_EVERY, UNWATCHED_INTERVAL};
use crate::deps::{BoxFuture, CpuTicker, HostError, Sampler, TickOutcome};
use crate::protocol::{
    BrowserFamily, CpuReport, Phase, PointPhase, ProcessInfo, ProcessRates, Processes, Rates, Role,
    ThreadRates,
};

fn rates(cpu_pct: f64) -> Rates {
    let mut r = ProcessRates::idle(1, 0, "x", Role::Other).rates;
    r.cpu_pct = cpu_pct;
    r
}

fn thread(comm: &str, cpu_pct: f64) -> ThreadRates {
    let mut t = ThreadRates::idle(7, comm);
    t.rates = rates(cpu_pct);
    t
}

fn process(role: Role, cpu_pct: f64, threads: Vec<ThreadRates>) -> ProcessRates {
    let mut p = ProcessRates::idle(10, 1, "chromium", role);
    p.rates = rates(cpu_pct);
    p.thread_count = threads.len();
    p.threads = threads;
    p
}

/// A call: the audio server at 2 %, the audio service at 3 %, a renderer at 20 % of which its
/// WebRTC thread is `audio_pct` and its compositor 5 %.
fn call_report(window_ms: f64, audio_pct: f64) -> CpuReport {
    CpuReport {
        window_ms,
        total_cpu_pct: 0.0,
        processes: vec![
            process(Role::AudioServer, 2.0, vec![thread("pulseaudio", 2.0)]),
            process(Role::AudioService, 3.0, vec![thread("chromium", 1.0)]),
            process(
                Role::Renderer,
                20.0,
                vec![
                    thread("WebRTC_W_and_N", audio_pct),
                    thread("Compositor", 5.0),
                    thread("AUDIOinputDevic", 0.5),
                ],
            ),
        ],
        roles: vec![],
        gone_pids: vec![],
        threads_omitted: 0,
    }
}

#[test]
fn the_audio_path_is_the_audio_processes_whole_and_other_processes_audio_threads() {
    assert_eq!(
        audio_path_cpu_pct(&call_report(1000.0, 4.0)),
        2.0 + 3.0 + 4.0 + 0.5
    );
}

/// Counts ticks and live tickers; each tick reports the call at the current `audio_pct`.
#[derive(Default)]
struct FakeSampler {
    ticks: AtomicUsize,
    live_tickers: Arc<AtomicUsize>,
    audio_pct: Mutex<f64>,
    /// What the watch set with `resolve_every`, and the ticks it asked to look again before.
    resolve_every: Mutex<Option<Duration>>,
    looked_again_at_tick: Mutex<Vec<usize>>,
}

impl Sampler for FakeSampler {
    fn processes(&self, _: Option<u32>) -> BoxFuture<Result<Processes, HostError>> {
        unreachable!("not used by the history")
    }
    fn cpu_sample(
        &self,
        _: Option<Vec<u32>>,
        _: Duration,
    ) -> BoxFuture<Result<CpuReport, HostError>> {
        unreachable!("not used by the history")
    }
    fn browsers(&self, _: Option<BrowserFamily>) -> BoxFuture<Result<Vec<ProcessInfo>, HostError>> {
        unreachable!("not used by the history")
    }
    fn cpu_ticker(self: Arc<Self>, pids: Option<Vec<u32>>) -> Box<dyn CpuTicker> {
        assert_eq!(pids, None, "the history samples the default processes");
        self.live_tickers.fetch_add(1, Ordering::SeqCst);
        Box::new(FakeTicker {
            sampler: self,
            last: None,
        })
    }
}

struct FakeTicker {
    sampler: Arc<FakeSampler>,
    last: Option<tokio::time::Instant>,
}

impl Drop for FakeTicker {
    fn drop(&mut self) {
        self.sampler.live_tickers.fetch_sub(1, Ordering::SeqCst);
    }
}

impl CpuTicker for FakeTicker {
    fn tick(
        mut self: Box<Self>,
    ) -> BoxFuture<(Box<dyn CpuTicker>, Result<TickOutcome, HostError>)> {
        Box::pin(async move {
            self.sampler.ticks.fetch_add(1, Ordering::SeqCst);
            let now = tokio::time::Instant::now();
            let report = self.last.map(|last| {
                let window_ms = (now - last).as_secs_f64() * 1000.0;
                call_report(window_ms, *self.sampler.audio_pct.lock().unwrap())
            });
            self.last = Some(now);
            (
                self as Box<dyn CpuTicker>,
                Ok(TickOutcome { report, found: 3 }),
            )
        })
    }
    fn set_pids(&mut self, _: Vec<u32>) {}
    fn resolve_every(&mut self, every: Duration) {
        *self.sampler.resolve_every.lock().unwrap() = Some(every);
    }
    fn resolve_at_next_tick(&mut self) {
        let next = self.sampler.ticks.load(Ordering::SeqCst) + 1;
        self.sampler.looked_again_at_tick.lock().unwrap().push(next);
    }
}

async fn pass(d: Duration) {
    tokio::time::sleep(d).await;
}

fn start(sampler: &Arc<FakeSampler>) -> HistoryWatch {
    let s: Arc<dyn Sampler> = Arc::clone(sampler) as Arc<dyn Sampler>;
    HistoryWatch::start(s, anchored_clock())
}

#[tokio::test(start_paused = true)]
async fn nothing_is_sampled_before_a_call_and_a_call_is_sampled_every_5_s() {
    let sampler = Arc::new(FakeSampler::default());
    let watch = start(&sampler);
    pass(Duration::from_secs(60)).await;
    assert_eq!(sampler.ticks.load(Ordering::SeqCst), 0);
    assert_eq!(sampler.live_tickers.load(Ordering::SeqCst), 0);

    *sampler.audio_pct.lock().unwrap() = 4.0;
    assert_eq!(watch.set_phase(Phase::Capturing), 0.0);
    pass(UNWATCHED_INTERVAL * 4 + Duration::from_millis(100)).await;
    let h = watch.snapshot();
    assert_eq!(h.points.len(), 4); // a baseline tick, then one sample every 5 s
    for p in &h.points {
        assert_eq!(p.window_ms, 5000.0);
        assert_eq!(p.phase, PointPhase::Capturing);
        assert_eq!(p.pct, 9.5);
    }
    let t: Vec<u64> = h.points.iter().map(|p| p.t_ms).collect();
    assert!(t.windows(2).all(|w| w[1] - w[0] == 5000), "{t:?}");

    // Released: the audio path drops to the audio server's idle and the saving adds up.
    *sampler.audio_pct.lock().unwrap() = 0.0;
    watch.set_phase(Phase::Released);
    pass(UNWATCHED_INTERVAL * 3).await;
    let h = watch.snapshot();
    let released = h.released.last().unwrap();
    assert_eq!(released.baseline_pct, Some(9.5));
    // The first window after the release saw it (a transition); the two after it count.
    let saved = 2.0 * (4.0 / 100.0) * 5.0;
    assert!((h.saved_cpu_s - saved).abs() < 1e-9, "{}", h.saved_cpu_s);
    assert!((watch.set_phase(Phase::Capturing) - saved).abs() < 1e-9);

    // The processes are looked for again every 30 s, and at the tick after each phase change (a
    // release, an unmute: 4th and 7th ticks after the baseline and three samples).
    assert_eq!(*sampler.resolve_every.lock().unwrap(), Some(RESOLVE_EVERY));
    assert_eq!(RESOLVE_EVERY, Duration::from_secs(30));
    pass(UNWATCHED_INTERVAL).await;
    assert_eq!(*sampler.looked_again_at_tick.lock().unwrap(), [6, 9]);

    // The call ends: the ticker goes, no more ticks.
    watch.set_phase(Phase::Idle);
    pass(Duration::from_millis(10)).await;
    assert_eq!(sampler.live_tickers.load(Ordering::SeqCst), 0);
    let ticks = sampler.ticks.load(Ordering::SeqCst);
    pass(Duration::from_secs(60)).await;
    assert_eq!(sampler.ticks.load(Ordering::SeqCst), ticks);
}

#[tokio::test(start_paused = true)]
async fn a_subscriber_gets_the_history_then_every_sample_at_its_interval() {
    let sampler = Arc::new(FakeSampler::default());
    let watch = start(&sampler);
    watch.set_phase(Phase::Capturing);
    pass(Duration::from_millis(10_500)).await;

    let (first, mut updates) = watch.listen(Duration::from_secs(1));
    assert_eq!(first.points.len(), 2);
    // The ticker goes on (no new baseline): the first sample comes 1 s after the last one.
    let u = tokio::time::timeout(Duration::from_millis(600), updates.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(u.history.points.len(), 1);
    assert_eq!(u.history.points[0].window_ms, 1000.0);
    assert_eq!(u.report.processes.len(), 3);
    for _ in 0..5 {
        let u = tokio::time::timeout(Duration::from_millis(1100), updates.recv())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(u.history.points[0].window_ms, 1000.0);
    }
    assert_eq!(watch.snapshot().points.len(), 2 + 6);

    // Gone: back to every 5 s (after the one sample that notices).
    drop(updates);
    pass(Duration::from_millis(1000 + 5000 * 2 + 100)).await;
    let h = watch.snapshot();
    let windows: Vec<f64> = h.points.iter().map(|p| p.window_ms).collect();
    assert_eq!(windows[8..], [1000.0, 5000.0, 5000.0], "{windows:?}");

    // A subscriber while no call is on: sampled for it alone, stopped when it goes.
    watch.set_phase(Phase::Idle);
    let (_, updates) = watch.listen(Duration::from_secs(1));
    pass(Duration::from_millis(3500)).await;
    assert_eq!(sampler.live_tickers.load(Ordering::SeqCst), 1);
    drop(updates);
    pass(Duration::from_millis(1100)).await;
    assert_eq!(sampler.live_tickers.load(Ordering::SeqCst), 0);
}
