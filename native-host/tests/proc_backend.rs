//! The real `ProcSampler` (micoff-proc over /proc) against this test process: one-shot samples,
//! the stateful periodic sampler behind `cpu` subscriptions, process trees, missing pids.

#![allow(clippy::unwrap_used)] // tests may unwrap (house style)

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use micoff_core::backend::ProcSampler;
use micoff_core::deps::{cpu_reports, CpuTick, HostError, Sampler};
use micoff_core::protocol::{BrowserFamily, BrowserSource, Role};

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cpu_sample_sees_a_busy_thread_of_this_process() {
    let stop = Arc::new(AtomicBool::new(false));
    let spin = burner(Arc::clone(&stop));
    let sampler = ProcSampler::system();
    let me = std::process::id();
    let report = sampler
        .cpu_sample(Some(vec![me]), Duration::from_millis(400))
        .await
        .unwrap();
    stop.store(true, Ordering::Relaxed);
    spin.join().unwrap();
    let p = report.processes.iter().find(|p| p.pid == me).unwrap();
    assert!(p.thread_count >= 2, "{p:?}");
    let busy = p.threads.iter().find(|t| t.comm == "burner").unwrap();
    assert!(busy.cpu_pct > 50.0, "a spinning thread: {busy:?}");
    assert!(
        (300.0..2000.0).contains(&report.window_ms),
        "{}",
        report.window_ms
    );
    assert_eq!(report.roles.len(), 1);
    assert_eq!(report.threads_omitted, 0);
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
