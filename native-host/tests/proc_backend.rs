//! The real `ProcSampler` (micoff-proc over /proc) against this test process: one-shot samples,
//! the stateful periodic sampler behind `cpu` subscriptions, process trees, missing pids.

#![allow(clippy::unwrap_used)] // tests may unwrap (house style)

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use micoff_backend::ProcSampler;
use micoff_native::deps::{cpu_reports, CpuTick, HostError, Sampler};
use micoff_native::protocol::{BrowserFamily, BrowserSource, Role};

/// A thread named `burner` that spins until the flag drops.
fn burner(stop: Arc<AtomicBool>) -> std::thread::JoinHandle<()> {
    std::thread::Builder::new()
        .name("burner".into())
        .spawn(move || {
            let mut x = 0u64;
            while !stop.load(Ordering::Relaxed) {
                x = std::hint::black_box(x.wrapping_add(1));
            }
        })
        .unwrap()
}

/// Drops the flag when it goes (a failed assertion must not leave the burner spinning next to the
/// other tests).
struct StopOnDrop(Arc<AtomicBool>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// A thread's own CPU clock (`pthread_getcpuclockid`), read from another thread of this process:
/// the kernel's runtime of that thread, brought up to date at the read, with no /proc in between.
struct ThreadClock(libc::clockid_t);

impl ThreadClock {
    fn of(thread: &std::thread::JoinHandle<()>) -> Self {
        use std::os::unix::thread::JoinHandleExt;
        let mut clock: libc::clockid_t = 0;
        // SAFETY: the thread is alive (joined later); `clock` is a valid out pointer.
        let rc = unsafe { libc::pthread_getcpuclockid(thread.as_pthread_t(), &mut clock) };
        assert_eq!(rc, 0, "pthread_getcpuclockid");
        Self(clock)
    }

    fn ms(&self) -> f64 {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: a valid clock id and out pointer.
        assert_eq!(unsafe { libc::clock_gettime(self.0, &mut ts) }, 0);
        ts.tv_sec as f64 * 1e3 + ts.tv_nsec as f64 / 1e6
    }
}

/// What the sampler may report as a thread's CPU time over its window, from the thread's own clock
/// read before and after the sample: at most what it used over that longer span, at least that less
/// the wall time outside the window (one thread uses at most one core), give or take the kernel's
/// accounting granularity (clock ticks of 10 ms at each end for `stat`, a scheduler tick for
/// `schedstat`). Independent of how much CPU the machine gave the thread.
#[derive(Debug)]
struct Bracket {
    lo_ms: f64,
    hi_ms: f64,
}

/// `stat`'s utime + stime are whole clock ticks (USER_HZ 100), cut at both ends of the window;
/// `schedstat` lags by at most a scheduler tick at each end.
const GRANULARITY_MS: f64 = 25.0;

impl Bracket {
    fn new(outer_cpu_ms: f64, outer_wall_ms: f64, window_ms: f64) -> Self {
        let outside_ms = (outer_wall_ms - window_ms).max(0.0);
        Self {
            lo_ms: outer_cpu_ms - outside_ms - GRANULARITY_MS,
            hi_ms: outer_cpu_ms + GRANULARITY_MS,
        }
    }

    /// Whether the bracket tells a right figure from 0 and from twice the truth.
    fn discriminates(&self) -> bool {
        self.lo_ms > 0.0 && 2.0 * self.lo_ms > self.hi_ms
    }

    fn holds(&self, ms: f64) -> bool {
        (self.lo_ms..=self.hi_ms).contains(&ms)
    }
}

/// The sampler's figures for a spinning thread of this process agree with the thread's own CPU
/// clock over the same window, however much CPU a loaded machine gives it. A window the machine
/// starved too much to tell right from wrong (0, or double) is measured again, longer; the test
/// fails if none could be.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cpu_sample_sees_a_busy_thread_of_this_process() {
    let stop = Arc::new(AtomicBool::new(false));
    let spin = burner(Arc::clone(&stop));
    let stop_on_exit = StopOnDrop(Arc::clone(&stop));
    let clock = ThreadClock::of(&spin);
    let sampler = ProcSampler::system();
    let me = std::process::id();
    let mut tried = Vec::new();
    for window in [1000, 2000, 4000].map(Duration::from_millis) {
        let (wall0, cpu0_ms) = (std::time::Instant::now(), clock.ms());
        let report = sampler.cpu_sample(Some(vec![me]), window).await.unwrap();
        let (cpu1_ms, outer_wall_ms) = (clock.ms(), wall0.elapsed().as_secs_f64() * 1e3);
        let p = report.processes.iter().find(|p| p.pid == me).unwrap();
        assert!(p.thread_count >= 2, "{p:?}");
        assert_eq!(report.roles.len(), 1);
        assert_eq!(report.threads_omitted, 0);
        // The window the sampler reports is the one it measured: no shorter than asked, no longer
        // than the call.
        assert!(
            report.window_ms >= window.as_secs_f64() * 1e3 - 1.0
                && report.window_ms <= outer_wall_ms + 1.0,
            "window {} ms for {window:?}, the call took {outer_wall_ms} ms",
            report.window_ms
        );
        let busy = p.threads.iter().find(|t| t.comm == "burner").unwrap();
        assert_eq!(busy.window_ms, None, "read with its process: {busy:?}");
        let bracket = Bracket::new(cpu1_ms - cpu0_ms, outer_wall_ms, report.window_ms);
        if !bracket.discriminates() {
            tried.push(format!("{window:?}: {bracket:?}"));
            continue;
        }
        let stat_ms = busy.rates.cpu_pct / 100.0 * report.window_ms;
        let run_ms = busy.rates.run_time_ns.map(|ns| ns as f64 / 1e6);
        eprintln!(
            "burner over {:.0} ms: stat {stat_ms:.1} ms, schedstat {run_ms:?} ms, its clock \
             {bracket:?}",
            report.window_ms
        );
        assert!(
            bracket.holds(stat_ms),
            "stat: {stat_ms:.1} ms of CPU reported, the thread's clock says {bracket:?}: {busy:?}"
        );
        if let Some(run_ms) = run_ms {
            assert!(
                bracket.holds(run_ms),
                "schedstat: {run_ms:.1} ms reported, the thread's clock says {bracket:?}: {busy:?}"
            );
        }
        drop(stop_on_exit);
        spin.join().unwrap();
        return;
    }
    panic!("the burner got too little CPU to check the sampler against its clock: {tried:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_pids_are_not_found() {
    let sampler = ProcSampler::system();
    let err = sampler
        .cpu_sample(Some(vec![i32::MAX as u32]), Duration::from_millis(100))
        .await
        .unwrap_err();
    assert!(matches!(err, HostError::NotFound(_)), "{err:?}");
    let err = sampler.processes(Some(i32::MAX as u32)).await.unwrap_err();
    assert!(matches!(err, HostError::NotFound(_)), "{err:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn processes_walks_an_explicit_tree() {
    let sampler = ProcSampler::system();
    let me = std::process::id();
    let mut child = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .unwrap();
    let tree = sampler.processes(Some(me)).await;
    let _ = child.kill();
    let _ = child.wait();
    let tree = tree.unwrap();
    let browser = tree.browser.unwrap();
    assert_eq!((browser.pid, browser.source), (me, BrowserSource::Explicit));
    assert_eq!(tree.processes[0].pid, me);
    let sleep = tree.processes.iter().find(|p| p.pid == child.id()).unwrap();
    assert_eq!((sleep.ppid, sleep.comm.as_str()), (me, "sleep"));
    assert_eq!(sleep.role, Role::Other);
    assert!(sleep.cmdline.starts_with("sleep 30"), "{sleep:?}");
    // No browser runs here (or one does): either way a list of main processes, never an error.
    for b in sampler
        .browsers(Some(BrowserFamily::Chromium))
        .await
        .unwrap()
    {
        assert_eq!(
            (b.role, b.family),
            (Role::Browser, Some(BrowserFamily::Chromium))
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cpu_reports_tick_with_the_stateful_sampler() {
    let sampler = Arc::new(ProcSampler::system());
    let me = std::process::id();
    let interval = Duration::from_millis(250);
    let mut rx = cpu_reports(
        Arc::clone(&sampler).cpu_ticker(Some(vec![me])),
        Some(vec![me]),
        interval,
    );
    for _ in 0..2 {
        let tick = tokio::time::timeout(Duration::from_secs(5), rx.recv())
            .await
            .unwrap()
            .unwrap();
        let CpuTick::Report(report) = tick else {
            panic!("{tick:?}")
        };
        assert!(
            (150.0..1500.0).contains(&report.window_ms),
            "{}",
            report.window_ms
        );
        assert_eq!(report.processes[0].pid, me);
    }
    drop(rx); // the producer stops on its own
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cpu_subscription_ends_when_its_processes_are_gone() {
    let sampler = Arc::new(ProcSampler::system());
    let mut child = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .unwrap();
    let pids = Some(vec![child.id()]);
    let mut rx = cpu_reports(
        Arc::clone(&sampler).cpu_ticker(pids.clone()),
        pids,
        Duration::from_millis(250),
    );
    async fn next(rx: &mut tokio::sync::mpsc::Receiver<CpuTick>) -> Option<CpuTick> {
        tokio::time::timeout(Duration::from_secs(5), rx.recv())
            .await
            .unwrap()
    }
    assert!(matches!(next(&mut rx).await, Some(CpuTick::Report(_))));
    child.kill().unwrap();
    child.wait().unwrap();
    // Maybe one more report (with the pid in gone_pids), then the end, then nothing.
    let mut tick = next(&mut rx).await.unwrap();
    if let CpuTick::Report(r) = &tick {
        assert_eq!(r.gone_pids, vec![child.id()]);
        tick = next(&mut rx).await.unwrap();
    }
    assert!(
        matches!(&tick, CpuTick::Ended(HostError::NotFound(_))),
        "{tick:?}"
    );
    assert!(next(&mut rx).await.is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_default_cpu_subscription_without_targets_is_unavailable_not_empty() {
    // Started from this test process (no browser above it), with a socket nobody listens on.
    let env = [(
        "PULSE_SERVER".to_string(),
        "unix:/nonexistent/micoff-test/native".to_string(),
    )]
    .into();
    let sampler = Arc::new(ProcSampler::new(
        micoff_proc::ProcFs::system(),
        std::process::id(),
        env,
    ));
    let mut rx = cpu_reports(
        Arc::clone(&sampler).cpu_ticker(None),
        None,
        Duration::from_millis(250),
    );
    for _ in 0..2 {
        let tick = tokio::time::timeout(Duration::from_secs(5), rx.recv())
            .await
            .unwrap()
            .unwrap();
        assert!(
            matches!(&tick, CpuTick::Unavailable(HostError::NotFound(_))),
            "{tick:?}"
        );
    }
    let err = sampler
        .cpu_sample(None, Duration::from_millis(100))
        .await
        .unwrap_err();
    assert!(matches!(err, HostError::NotFound(_)), "{err:?}");
}
