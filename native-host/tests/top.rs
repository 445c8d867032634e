//! `micoff-host top` against fake processes: what it watches, what it says when things vanish,
//! that every round takes its interval (no busy loop), and its exit codes. Paused tokio time: the
//! intervals pass virtually, and the elapsed virtual time shows that they were waited.

#![allow(clippy::unwrap_used)] // tests may unwrap (house style)

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use micoff_cli::top::{run, TopArgs, TopOutput};
use micoff_native::deps::{
    AudioServer, BoxFuture, CpuTicker, Deps, HostError, Launch, Limits, Sampler, TickOutcome,
};
use micoff_native::protocol::*;
use tokio::sync::mpsc;

fn info(pid: u32, ppid: u32, comm: &str, role: Role) -> ProcessInfo {
    ProcessInfo {
        pid,
        ppid,
        comm: comm.into(),
        role,
        family: micoff_proc::browser_family_of_name(comm),
        cmdline: comm.into(),
    }
}

/// A process using 1 % of a core in one thread (tid `pid`*10+1, 50 wakeups/s); its second thread
/// (`pid`*10+2) is idle: no CPU time, no wakeup.
fn process(pid: u32, comm: &str, role: Role) -> ProcessRates {
    let thread = |tid: u32, cpu_pct: f64, wakeups: f64| ThreadRates {
        tid,
        comm: format!("worker-{tid}"),
        rates: Rates {
            cpu_pct,
            user_pct: cpu_pct,
            wakeups_per_s: Some(wakeups),
            voluntary_ctxt_per_s: Some(wakeups),
            involuntary_ctxt_per_s: Some(0.0),
            ..Rates::default()
        },
        window_ms: None,
    };
    ProcessRates {
        rates: Rates {
            cpu_pct: 1.0,
            user_pct: 1.0,
            ..Rates::default()
        },
        thread_count: 2,
        threads: vec![
            thread(pid * 10 + 1, 1.0, 50.0),
            thread(pid * 10 + 2, 0.0, 0.0),
        ],
        ..ProcessRates::idle(pid, 1, comm, role)
    }
}

/// A machine: processes that exist (pid, comm, role, parent), running browsers, the server.
#[derive(Default)]
struct Machine {
    procs: Mutex<Vec<ProcessInfo>>,
    browsers: Vec<u32>,
    server: Vec<u32>,
    /// cpu_sample fails with this instead of reporting.
    fail: Option<HostError>,
    samples: AtomicUsize,
    sampled: Mutex<Vec<Vec<u32>>>,
}

impl Machine {
    fn get(&self, pid: u32) -> Option<ProcessInfo> {
        self.procs
            .lock()
            .unwrap()
            .iter()
            .find(|p| p.pid == pid)
            .cloned()
    }
}

struct FakeSampler(Arc<Machine>);

impl Sampler for FakeSampler {
    fn processes(&self, browser_pid: Option<u32>) -> BoxFuture<Result<Processes, HostError>> {
        let m = Arc::clone(&self.0);
        Box::pin(async move {
            let audio_server = m.server.iter().filter_map(|p| m.get(*p)).collect();
            let processes = match browser_pid {
                None => vec![],
                Some(pid) => {
                    let Some(root) = m.get(pid) else {
                        return Err(HostError::NotFound(format!("no process {pid}")));
                    };
                    let mut tree = vec![root];
                    tree.extend(
                        m.procs
                            .lock()
                            .unwrap()
                            .iter()
                            .filter(|p| p.ppid == pid)
                            .cloned(),
                    );
                    tree
                }
            };
            Ok(Processes {
                browser: None,
                processes,
                audio_server,
                processes_omitted: 0,
            })
        })
    }

    fn cpu_sample(
        &self,
        pids: Option<Vec<u32>>,
        window: Duration,
    ) -> BoxFuture<Result<CpuReport, HostError>> {
        let m = Arc::clone(&self.0);
        Box::pin(async move {
            m.samples.fetch_add(1, Ordering::SeqCst);
            let pids = pids.unwrap_or_default();
            m.sampled.lock().unwrap().push(pids.clone());
            if let Some(e) = &m.fail {
                return Err(e.clone()); // before the window, like the real sampler
            }
            let present: Vec<ProcessInfo> = pids.iter().filter_map(|p| m.get(*p)).collect();
            if present.is_empty() {
                return Err(HostError::NotFound(format!(
                    "none of the processes {pids:?} exists"
                )));
            }
            tokio::time::sleep(window).await;
            let processes: Vec<ProcessRates> = present
                .iter()
                .filter(|p| m.get(p.pid).is_some())
                .map(|p| process(p.pid, &p.comm, p.role))
                .collect();
            let gone_pids = present
                .iter()
                .filter(|p| m.get(p.pid).is_none())
                .map(|p| p.pid)
                .collect();
            Ok(CpuReport {
                window_ms: window.as_millis() as f64,
                total_cpu_pct: processes.len() as f64,
                processes,
                roles: vec![],
                gone_pids,
                threads_omitted: 0,
            })
        })
    }

    fn browsers(
        &self,
        family: Option<BrowserFamily>,
    ) -> BoxFuture<Result<Vec<ProcessInfo>, HostError>> {
        let m = Arc::clone(&self.0);
        Box::pin(async move {
            Ok(m.browsers
                .iter()
                .filter_map(|p| m.get(*p))
                .filter(|p| family.is_none() || p.family == family)
                .collect())
        })
    }

    fn cpu_ticker(self: Arc<Self>, pids: Option<Vec<u32>>) -> Box<dyn CpuTicker> {
        Box::new(MachineTicker {
            m: Arc::clone(&self.0),
            pids: pids.unwrap_or_default(),
            last: None,
            at: tokio::time::Instant::now(),
        })
    }
}

/// The machine's stateful sampler: each tick reports the processes present at both ends (the
/// ones present before and missing now in `gone_pids`); the first tick is a baseline.
struct MachineTicker {
    m: Arc<Machine>,
    pids: Vec<u32>,
    last: Option<Vec<u32>>,
    at: tokio::time::Instant,
}

impl CpuTicker for MachineTicker {
    fn tick(
        mut self: Box<Self>,
    ) -> BoxFuture<(Box<dyn CpuTicker>, Result<TickOutcome, HostError>)> {
        Box::pin(async move {
            let m = Arc::clone(&self.m);
            m.samples.fetch_add(1, Ordering::SeqCst);
            m.sampled.lock().unwrap().push(self.pids.clone());
            if let Some(e) = &m.fail {
                return (self as Box<dyn CpuTicker>, Err(e.clone()));
            }
            let present: Vec<ProcessInfo> = self.pids.iter().filter_map(|p| m.get(*p)).collect();
            let window_ms = self.at.elapsed().as_millis() as f64;
            self.at = tokio::time::Instant::now();
            let report = self.last.as_ref().map(|before| {
                let processes: Vec<ProcessRates> = present
                    .iter()
                    .filter(|p| before.contains(&p.pid))
                    .map(|p| process(p.pid, &p.comm, p.role))
                    .collect();
                CpuReport {
                    window_ms,
                    total_cpu_pct: processes.len() as f64,
                    processes,
                    roles: vec![],
                    gone_pids: before
                        .iter()
                        .copied()
                        .filter(|pid| m.get(*pid).is_none())
                        .collect(),
                    threads_omitted: 0,
                }
            });
            self.last = Some(present.iter().map(|p| p.pid).collect());
            let found = present.len();
            (
                self as Box<dyn CpuTicker>,
                Ok(TickOutcome { report, found }),
            )
        })
    }

    fn set_pids(&mut self, pids: Vec<u32>) {
        self.pids = pids;
    }
}

struct NoAudio;

impl AudioServer for NoAudio {
    fn server_info(&self) -> BoxFuture<Result<AudioServerInfo, HostError>> {
        Box::pin(async { Err(HostError::AudioServerUnavailable("none".into())) })
    }
    fn streams(&self) -> BoxFuture<Result<Vec<AudioStream>, HostError>> {
        Box::pin(async { Ok(vec![]) })
    }
    fn subscribe(&self) -> Result<mpsc::Receiver<HostEvent>, HostError> {
        Err(HostError::AudioServerUnavailable("none".into()))
    }
}

fn deps(m: &Arc<Machine>) -> Deps {
    Deps {
        sampler: Arc::new(FakeSampler(Arc::clone(m))),
        audio: Arc::new(NoAudio),
        doctor: None,
        latency_paths: Err("`top` reads no latency files".into()),
        power_roots: micoff_native::power::Roots::system(),
        launch: Launch::default(),
        limits: Limits::default(),
    }
}

fn top_args(pids: &[u32], count: u64, json: bool) -> TopArgs {
    TopArgs {
        pids: pids.to_vec(),
        browser: None,
        interval: 0.25,
        count: Some(count),
        threads: None,
        full: false,
        lines: micoff_cli::top::LINES_DEFAULT,
        json,
        all: false,
    }
}

struct Outcome {
    code: i32,
    out: String,
    err: String,
    elapsed: Duration,
}

async fn top(m: &Arc<Machine>, args: TopArgs) -> Outcome {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let started = tokio::time::Instant::now();
    let code = run(
        &args,
        &deps(m),
        TopOutput {
            out: &mut out,
            err: &mut err,
            clear: false,
        },
    )
    .await;
    Outcome {
        code,
        out: String::from_utf8(out).unwrap(),
        err: String::from_utf8(err).unwrap(),
        elapsed: started.elapsed(),
    }
}

fn chromium_and_server() -> Machine {
    Machine {
        procs: Mutex::new(vec![
            info(100, 1, "chromium", Role::Browser),
            info(101, 100, "chromium", Role::Renderer),
            info(102, 100, "chromium", Role::AudioService),
            info(200, 1, "pulseaudio", Role::AudioServer),
            info(300, 1, "firefox-esr", Role::Browser),
        ]),
        browsers: vec![100, 300],
        server: vec![200],
        ..Machine::default()
    }
}

#[tokio::test(start_paused = true)]
async fn a_missing_pid_ends_at_once_with_exit_4() {
    let m = Arc::new(Machine::default());
    let o = top(&m, top_args(&[999_999], 2, false)).await;
    assert_eq!(o.code, 4, "{}", o.err);
    assert!(o.err.contains("no process 999999"), "{}", o.err);
    assert_eq!(m.samples.load(Ordering::SeqCst), 0);
}

#[tokio::test(start_paused = true)]
async fn a_watched_process_that_exits_is_named_and_ends_it() {
    let m = Arc::new(chromium_and_server());
    // pid 101 exits during the second round.
    let m2 = Arc::clone(&m);
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(400)).await;
        m2.procs.lock().unwrap().retain(|p| p.pid != 101);
    });
    let o = top(&m, top_args(&[101], 10, true)).await;
    assert_eq!(o.code, 4, "{}", o.err);
    assert!(
        o.err
            .contains("watching chromium (pid 101), the audio server pulseaudio (pid 200)"),
        "{}",
        o.err
    );
    assert!(
        o.err.contains("process 101 (chromium) is gone"),
        "{}",
        o.err
    );
    assert!(o.err.contains("nothing left to watch"), "{}", o.err);
    // Two rounds shown (the second with the pid in gone_pids), each a full interval.
    let lines: Vec<serde_json::Value> = o
        .out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2, "{}", o.out);
    assert_eq!(lines[1]["report"]["gone_pids"], serde_json::json!([101]));
    assert!(o.elapsed >= Duration::from_millis(500), "{:?}", o.elapsed);
}

#[tokio::test(start_paused = true)]
async fn a_failing_sample_waits_its_interval_and_counts_the_round() {
    // The old busy loop: a sample failing before its window made `top` spin forever.
    let m = Arc::new(Machine {
        fail: Some(HostError::NotFound("the processes vanished".into())),
        ..chromium_and_server()
    });
    let o = top(&m, top_args(&[], 3, false)).await;
    // The baseline, then one tick per round.
    assert_eq!(m.samples.load(Ordering::SeqCst), 1 + 3);
    assert!(o.elapsed >= Duration::from_millis(750), "{:?}", o.elapsed);
    // Nothing could be shown: exit 4, and the reason was said once.
    assert_eq!(o.code, 4, "{}", o.err);
    assert_eq!(
        o.err.matches("the processes vanished").count(),
        1,
        "{}",
        o.err
    );
}

#[tokio::test(start_paused = true)]
async fn by_default_it_watches_every_browser_tree_and_the_server() {
    let m = Arc::new(chromium_and_server());
    let o = top(&m, top_args(&[], 1, false)).await;
    assert_eq!(o.code, 0, "{}", o.err);
    assert_eq!(m.sampled.lock().unwrap()[0], vec![100, 101, 102, 200, 300]);
    assert!(
        o.out.contains(
            "watching chromium (pid 100, 3 processes), firefox-esr (pid 300, 1 processes), \
             the audio server pulseaudio (pid 200)"
        ),
        "{}",
        o.out
    );
    // Firefox's main process reads `parent` in the table; Chromium's stays `browser`.
    let row = |pid: &str| {
        o.out
            .lines()
            .find(|l| l.trim_start().starts_with(pid))
            .unwrap()
            .to_owned()
    };
    assert!(row("300").contains("parent"), "{}", o.out);
    assert!(row("100").contains("browser"), "{}", o.out);
}

#[tokio::test(start_paused = true)]
async fn with_nothing_running_it_waits_and_picks_things_up_when_they_start() {
    let m = Arc::new(Machine {
        browsers: vec![100],
        server: vec![200],
        ..Machine::default()
    });
    let m2 = Arc::clone(&m);
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(600)).await;
        m2.procs
            .lock()
            .unwrap()
            .push(info(200, 1, "pulseaudio", Role::AudioServer));
    });
    let o = top(&m, top_args(&[], 4, true)).await;
    assert_eq!(o.code, 0, "{}", o.err);
    assert_eq!(
        o.err
            .matches("waiting: no Chromium-family or Firefox browser")
            .count(),
        1,
        "{}",
        o.err
    );
    assert!(
        o.err
            .contains("watching the audio server pulseaudio (pid 200); no browser running"),
        "{}",
        o.err
    );
    assert_eq!(o.out.lines().count(), 1, "{}", o.out);
    assert!(o.elapsed >= Duration::from_millis(1000), "{:?}", o.elapsed);

    // Nothing ever: every round waits, then exit 4.
    let empty = Arc::new(Machine::default());
    let o = top(&empty, top_args(&[], 2, false)).await;
    assert_eq!(o.code, 4, "{}", o.err);
    assert!(o.elapsed >= Duration::from_millis(500), "{:?}", o.elapsed);
    assert_eq!(o.out.matches("waiting:").count(), 2, "{}", o.out);
}

#[tokio::test(start_paused = true)]
async fn a_browser_family_that_exits_ends_it() {
    let m = Arc::new(chromium_and_server());
    let m2 = Arc::clone(&m);
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        m2.procs
            .lock()
            .unwrap()
            .retain(|p| p.comm != "chromium" && p.comm != "firefox-esr");
    });
    let mut args = top_args(&[], 10, true);
    args.browser = Some(micoff_cli::top::BrowserArg::Chromium);
    let o = top(&m, args).await;
    assert_eq!(o.code, 4, "{}", o.err);
    assert!(
        o.err
            .contains("chromium (pid 100) exited: nothing left to watch"),
        "{}",
        o.err
    );
}

/// `true` for `YYYY-MM-DDThh:mm:ss.mmm+01:00` (RFC 3339, milliseconds, an offset).
fn is_rfc3339(t: &str) -> bool {
    let b = t.as_bytes();
    t.len() == 29
        && b[4] == b'-'
        && b[7] == b'-'
        && b[10] == b'T'
        && b[13] == b':'
        && b[19] == b'.'
        && matches!(b[23], b'+' | b'-')
        && b[26] == b':'
        && t.bytes().filter(u8::is_ascii_digit).count() == 21
}

/// Fit for scripts and people: each refresh stamped with its local time (text: a header line;
/// JSON: `time`), pidstat's column names, idle threads left out (and counted) unless `--all`.
#[tokio::test(start_paused = true)]
async fn each_refresh_is_stamped_and_idle_threads_are_hidden_unless_all() {
    let m = Arc::new(chromium_and_server());
    let o = top(&m, top_args(&[101], 1, true)).await;
    assert_eq!(o.code, 0, "{}", o.err);
    let line: serde_json::Value = serde_json::from_str(o.out.trim()).unwrap();
    assert!(is_rfc3339(line["time"].as_str().unwrap()), "{line}");
    let processes = line["report"]["processes"].as_array().unwrap();
    assert_eq!(line["idle_threads_hidden"], processes.len());
    for p in processes {
        let tids: Vec<u64> = p["threads"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["tid"].as_u64().unwrap())
            .collect();
        assert_eq!(tids, vec![p["pid"].as_u64().unwrap() * 10 + 1], "{p}");
        assert_eq!(p["thread_count"], 2, "the process's own count stays");
    }

    let o = top(&m, top_args(&[101], 1, false)).await;
    let header = o.out.lines().find(|l| l.contains("window ")).unwrap();
    assert!(
        is_rfc3339(&format!("{}.000{}", &header[..19], &header[19..25])),
        "{header}"
    );
    assert!(o.out.contains("%CPU"), "{}", o.out);
    let columns = o.out.lines().find(|l| l.contains("TID")).unwrap();
    for name in [
        "Command",
        "%usr",
        "%system",
        "%CPU",
        "cswch/s",
        "nvcswch/s",
        "rdcalls/s",
    ] {
        assert!(columns.contains(name), "{name}: {columns}");
    }
    assert!(o.out.contains("1011"), "{}", o.out);
    assert!(!o.out.contains("1012"), "{}", o.out);
    assert!(o.out.contains("idle threads not shown"), "{}", o.out);

    let o = top(
        &m,
        TopArgs {
            all: true,
            ..top_args(&[101], 1, false)
        },
    )
    .await;
    assert!(o.out.contains("1012"), "{}", o.out);
    assert!(!o.out.contains("idle threads not shown"), "{}", o.out);

    // `sample` the same way.
    let sample = |json: bool, all: bool| {
        let m = Arc::clone(&m);
        async move {
            let args = micoff_cli::sample::SampleArgs {
                pids: vec![101],
                browser_pid: None,
                audio_server: false,
                window: 0.25,
                json,
                all,
            };
            let (mut out, mut err) = (Vec::new(), Vec::new());
            let code = micoff_cli::sample::run(&args, &deps(&m), &mut out, &mut err).await;
            assert_eq!(code, 0, "{}", String::from_utf8_lossy(&err));
            String::from_utf8(out).unwrap()
        }
    };
    let json: serde_json::Value = serde_json::from_str(sample(true, false).await.trim()).unwrap();
    assert!(is_rfc3339(json["time"].as_str().unwrap()), "{json}");
    assert_eq!(json["idle_threads_hidden"], 1);
    assert_eq!(json["processes"][0]["threads"].as_array().unwrap().len(), 1);
    assert_eq!(
        json["window_ms"], 250.0,
        "the report's own fields stay where they were"
    );
    let json: serde_json::Value = serde_json::from_str(sample(true, true).await.trim()).unwrap();
    assert_eq!(json["idle_threads_hidden"], 0);
    assert_eq!(json["processes"][0]["threads"].as_array().unwrap().len(), 2);
    let text = sample(false, false).await;
    assert!(
        is_rfc3339(&format!("{}.000{}", &text[..19], &text[19..25])),
        "{text}"
    );
}

/// `--pid P` watches P and its descendants: one browser's tree from its main process.
#[tokio::test(start_paused = true)]
async fn a_pid_is_watched_with_its_descendants() {
    let m = Arc::new(chromium_and_server());
    let o = top(&m, top_args(&[100], 1, false)).await;
    assert_eq!(o.code, 0, "{}", o.err);
    assert_eq!(m.sampled.lock().unwrap()[0], vec![100, 101, 102, 200]);
    assert!(
        o.out
            .contains("watching chromium (pid 100, 3 processes), the audio server pulseaudio"),
        "{}",
        o.out
    );
    assert!(!o.out.contains("firefox"), "{}", o.out);
}

/// By default a refresh fits in `--lines` lines however many processes run; `--full` shows each.
#[tokio::test(start_paused = true)]
async fn the_default_view_fits_its_lines_and_full_shows_every_process() {
    let m = Arc::new(chromium_and_server());
    m.procs
        .lock()
        .unwrap()
        .extend((400..440).map(|pid| info(pid, 100, "chromium", Role::Renderer)));
    for lines in [micoff_cli::top::LINES_DEFAULT, 30] {
        let o = top(
            &m,
            TopArgs {
                lines,
                ..top_args(&[], 1, false)
            },
        )
        .await;
        assert_eq!(o.code, 0, "{}", o.err);
        // Without a terminal, each refresh starts with a blank line instead of clearing.
        let shown = o.out.trim_start_matches('\n').lines().count();
        assert!(
            shown <= lines && shown >= lines - 2,
            "{shown} lines:\n{}",
            o.out
        );
        assert!(o.out.contains("more processes"), "{}", o.out);
    }
    let o = top(
        &m,
        TopArgs {
            full: true,
            ..top_args(&[], 1, false)
        },
    )
    .await;
    assert!(o.out.lines().count() > 100, "{}", o.out);
    for pid in 400..440 {
        assert!(
            o.out.contains(&format!("\n    {pid}  ")),
            "{pid}: {}",
            o.out
        );
    }
}
