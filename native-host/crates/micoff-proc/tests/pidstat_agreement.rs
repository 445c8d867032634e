//! Per-thread CPU from micoff-proc agrees with `pidstat -t` over the same window. The test binary
//! re-executes itself as a child (`MICOFF_BURN_CHILD=1`) whose threads `burn30` and `burn60` burn
//! ~30 % and ~60 % of a core; snapshots right after pidstat starts and exits cover its window.
//! pidstat (sysstat, scripts/ensure-deps.sh) missing FAILS the test. The host's own [`Sampler`]
//! (idle processes skipped, cold threads read at their turn, [`IDLE_THREADS`] parked threads)
//! ticking every 100 ms must agree too. Both are held to the burners' own CPU clocks
//! (`pthread_getcpuclockid`), read before and after each end's snapshots, which bracket the
//! window's CPU time however little a loaded machine gives the burners.
#![allow(clippy::print_stderr)]

use std::io::{BufRead, BufReader, Write};
use std::process::{ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use micoff_proc::{rates, ColdThreads, CpuReport, Pid, ProcFs, Sampler};

const BURNERS: [(&str, f64); 2] = [("burn30", 0.30), ("burn60", 0.60)];
const TOLERANCE_PP: f64 = 0.5;
/// Threads of the child that never run.
const IDLE_THREADS: usize = 40;
const SAMPLER_TICK: Duration = Duration::from_millis(100);
/// `stat`'s utime + stime are whole clock ticks (USER_HZ 100), cut at both ends of the window;
/// `schedstat` lags by at most a scheduler tick at each end.
const GRANULARITY_MS: f64 = 25.0;

fn burn(share: f64) {
    let period = Duration::from_millis(10);
    let busy = period.mul_f64(share);
    let mut start = Instant::now();
    loop {
        while start.elapsed() < busy {
            std::hint::spin_loop();
        }
        let next = start + period;
        std::thread::sleep(next.saturating_duration_since(Instant::now()));
        start = next.max(Instant::now() - period); // do not try to catch up after a long stall
    }
}

/// A thread's CPU time so far, in ms, from its own clock.
fn thread_cpu_ms(thread: &std::thread::JoinHandle<()>) -> f64 {
    use std::os::unix::thread::JoinHandleExt;
    let mut clock: libc::clockid_t = 0;
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: the thread runs for the child's whole life; the out pointers are valid.
    let ok = unsafe {
        libc::pthread_getcpuclockid(thread.as_pthread_t(), &mut clock) == 0
            && libc::clock_gettime(clock, &mut ts) == 0
    };
    if ok {
        ts.tv_sec as f64 * 1e3 + ts.tv_nsec as f64 / 1e6
    } else {
        f64::NAN
    }
}

/// The burning child: answers each line on stdin with its burners' CPU times (ms, in [`BURNERS`]
/// order), until the parent closes stdin.
fn child() {
    let burners: Vec<_> = BURNERS
        .iter()
        .map(|&(name, share)| {
            std::thread::Builder::new()
                .name(name.to_string())
                .spawn(move || burn(share))
                .expect("spawn a burner")
        })
        .collect();
    for _ in 0..IDLE_THREADS {
        let _ = std::thread::Builder::new()
            .stack_size(64 * 1024)
            .spawn(|| loop {
                std::thread::park();
            });
    }
    let mut out = std::io::stdout().lock();
    for _ in std::io::stdin().lock().lines() {
        let times: Vec<String> = burners
            .iter()
            .map(|b| thread_cpu_ms(b).to_string())
            .collect();
        if writeln!(out, "{}", times.join(" "))
            .and_then(|()| out.flush())
            .is_err()
        {
            return;
        }
    }
}

/// The child's burners' CPU clocks, asked over its stdin.
struct Clocks {
    ask: ChildStdin,
    answers: BufReader<ChildStdout>,
}

impl Clocks {
    fn read(&mut self) -> [f64; BURNERS.len()] {
        writeln!(self.ask).expect("ask the child");
        self.ask.flush().expect("ask the child");
        let mut line = String::new();
        self.answers
            .read_line(&mut line)
            .expect("the child's answer");
        let ms: Vec<f64> = line
            .split_whitespace()
            .map(|v| v.parse().unwrap_or(f64::NAN))
            .collect();
        ms.try_into().expect("one time per burner")
    }
}

/// Each burner's CPU time over a window that starts between the clock readings `start` and ends
/// between `end` (ms): at least `end.0 - start.1`, at most `end.1 - start.0`, give or take the
/// kernel's accounting granularity.
#[derive(Debug, Clone, Copy)]
struct Bracket {
    lo_ms: f64,
    hi_ms: f64,
}

impl Bracket {
    fn new(start: (f64, f64), end: (f64, f64)) -> Self {
        Self {
            lo_ms: end.0 - start.1 - GRANULARITY_MS,
            hi_ms: end.1 - start.0 + GRANULARITY_MS,
        }
    }

    /// Whether it tells a right figure from 0 and from twice the truth.
    fn discriminates(&self) -> bool {
        self.lo_ms > 0.0 && 2.0 * self.lo_ms > self.hi_ms
    }

    fn holds(&self, ms: f64) -> bool {
        (self.lo_ms..=self.hi_ms).contains(&ms)
    }
}

/// `tid -> (comm, %usr, %system, %CPU)` from `pidstat -t -u` output (LC_ALL=C, S_TIME_FORMAT=ISO).
fn parse_pidstat(out: &str) -> Vec<(Pid, String, f64, f64, f64)> {
    let mut cols: Option<Vec<&str>> = None;
    let mut rows = Vec::new();
    for line in out.lines() {
        let toks: Vec<&str> = line.split_whitespace().collect();
        if toks.first().is_some_and(|t| t.starts_with("Average")) {
            break;
        }
        if toks.contains(&"%CPU") && toks.contains(&"TID") {
            cols = Some(toks);
            continue;
        }
        let Some(c) = &cols else { continue };
        if toks.len() != c.len() {
            continue;
        }
        let idx = |name: &str| c.iter().position(|x| *x == name);
        let (Some(tid), Some(usr), Some(sys), Some(cpu), Some(cmd)) = (
            idx("TID"),
            idx("%usr"),
            idx("%system"),
            idx("%CPU"),
            idx("Command"),
        ) else {
            continue;
        };
        let Ok(tid) = toks[tid].parse::<Pid>() else {
            continue;
        };
        let num = |i: usize| toks[i].parse::<f64>().unwrap_or(f64::NAN);
        let comm = toks[cmd].trim_start_matches("|__").to_string();
        rows.push((tid, comm, num(usr), num(sys), num(cpu)));
    }
    rows
}

fn main() {
    if std::env::var_os("MICOFF_BURN_CHILD").is_some() {
        child();
        return;
    }
    // libtest-style arguments (e.g. a name filter or --list) are accepted and ignored.
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let window_s: u64 = std::env::var("MICOFF_PIDSTAT_WINDOW_S")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10);
    eprintln!("test pidstat_agreement ({window_s} s window) ...");

    match Command::new("pidstat").arg("-V").output() {
        Ok(_) => {}
        Err(e) => panic!(
            "pidstat not found ({e}): it is a declared test dependency (Debian package `sysstat`, \
             installed by scripts/ensure-deps.sh). Install it: apt-get install -y sysstat"
        ),
    }

    let exe = std::env::current_exe().expect("current_exe");
    let mut burner = Command::new(exe)
        .env("MICOFF_BURN_CHILD", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn the burner child");
    let pid = burner.id();
    let mut clocks = Clocks {
        ask: burner.stdin.take().expect("the child's stdin"),
        answers: BufReader::new(burner.stdout.take().expect("the child's stdout")),
    };
    let fs = ProcFs::system();

    // Wait (condition, bounded) until both named threads exist and have run.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let s = fs.snapshot(&[pid]);
        let ready = BURNERS.iter().all(|(name, _)| {
            s.processes
                .iter()
                .flat_map(|p| &p.threads)
                .any(|t| t.comm == *name && t.run_time_ns.unwrap_or(1) > 0)
        });
        if ready {
            break;
        }
        assert!(Instant::now() < deadline, "burner threads did not start");
        std::thread::sleep(Duration::from_millis(20));
    }

    // The host's sampler, ticked until the idle threads have gone cold (it then reads fewer
    // threads than the process has).
    let mut sampler = Sampler::new(fs.clone(), vec![pid])
        .skip_idle_processes(true)
        .cold_threads(Some(ColdThreads::DEFAULT));
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        sampler.tick();
        if sampler.last_thread_reads() > 0 && sampler.last_thread_reads() < IDLE_THREADS {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the idle threads never went cold"
        );
        std::thread::sleep(SAMPLER_TICK);
    }

    let pidstat = Command::new("pidstat")
        .args([
            "-t",
            "-u",
            "-p",
            &pid.to_string(),
            &window_s.to_string(),
            "1",
        ])
        .env("LC_ALL", "C")
        .env("S_TIME_FORMAT", "ISO")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn pidstat");
    let start_before = clocks.read();
    let a = fs.snapshot(&[pid]);
    sampler.tick();
    let sa = sampler.last_snapshot().cloned().expect("sampler snapshot");
    let start_after = clocks.read();
    let (done_tx, done) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = done_tx.send(pidstat.wait_with_output());
    });
    let (mut ticks, mut fewest_reads) = (0, usize::MAX);
    let out = loop {
        match done.recv_timeout(SAMPLER_TICK) {
            Ok(out) => break out.expect("pidstat output"),
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                sampler.tick();
                ticks += 1;
                fewest_reads = fewest_reads.min(sampler.last_thread_reads());
            }
            Err(e) => panic!("pidstat waiter: {e}"),
        }
    };
    let end_before = clocks.read();
    let b = fs.snapshot(&[pid]);
    sampler.tick();
    let sb = sampler.last_snapshot().cloned().expect("sampler snapshot");
    let end_after = clocks.read();
    drop(clocks);
    let _ = burner.wait();
    let brackets: Vec<Bracket> = (0..BURNERS.len())
        .map(|i| {
            Bracket::new(
                (start_before[i], start_after[i]),
                (end_before[i], end_after[i]),
            )
        })
        .collect();

    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "pidstat failed: {}\n{}",
        text,
        String::from_utf8_lossy(&out.stderr)
    );
    let theirs = parse_pidstat(&text);
    eprintln!("pidstat output:\n{text}");
    eprintln!(
        "sampler: {ticks} ticks, at least {fewest_reads} of {} threads read per tick",
        IDLE_THREADS + BURNERS.len() + 1
    );
    assert!(
        fewest_reads < IDLE_THREADS,
        "the sampler read every thread every tick: the cold path was not exercised"
    );
    let mut failures = Vec::new();
    let snapshots = rates(&a, &b);
    let pidstat_window_ms = snapshots.window_ms;
    for (label, report) in [("snapshots", snapshots), ("sampler", rates(&sa, &sb))] {
        agree(
            label,
            pid,
            &theirs,
            &text,
            &report,
            pidstat_window_ms,
            &mut failures,
        );
        agree_with_clocks(label, pid, &report, &brackets, &mut failures);
    }
    assert!(
        failures.is_empty(),
        "disagreement (pidstat: above {TOLERANCE_PP} pp; clocks: outside their bracket): \
         {failures:?}"
    );
    // This target runs without libtest (harness = false); print libtest's summary line so test
    // runners that count `test result:` lines (scripts/test.sh) count it.
    use std::io::Write as _;
    let _ = writeln!(
        std::io::stdout(),
        "test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out"
    );
}

/// Compares `report`'s threads with pidstat's rows, adding what disagrees to `failures`. A thread's
/// CPU time is held to pidstat's over the window pidstat ran in (`pidstat_window_ms`, the snapshots
/// taken as it started and ended): the sampler's ticks come a moment after those snapshots, later
/// still on a loaded machine, and a rate over that longer span would count the burner's share of a
/// stretch pidstat never saw. The span itself is the sampler's own clock, held to the burners'
/// clocks by `agree_with_clocks`.
fn agree(
    label: &str,
    pid: Pid,
    theirs: &[(Pid, String, f64, f64, f64)],
    text: &str,
    report: &CpuReport,
    pidstat_window_ms: f64,
    failures: &mut Vec<String>,
) {
    eprintln!("micoff-proc ({label}) window {:.1} ms", report.window_ms);
    let ours = report
        .processes
        .iter()
        .find(|p| p.pid == pid)
        .expect("child in report");

    let mut compared = 0;
    for (tid, comm, usr, sys, cpu) in theirs {
        let Some(t) = ours.threads.iter().find(|t| t.tid == *tid) else {
            continue;
        };
        let span_ms = t.window_ms.unwrap_or(report.window_ms);
        let over_pidstat_window = t.rates.cpu_pct * span_ms / pidstat_window_ms;
        let diff = over_pidstat_window - cpu;
        eprintln!(
            "  {tid:>7} {comm:<16} pidstat %CPU {cpu:6.2} (usr {usr:.2} sys {sys:.2})   micoff {:6.2} over {span_ms:.1} ms, {over_pidstat_window:.2} over pidstat's {pidstat_window_ms:.1} ms (usr {:.2} sys {:.2}, run_time {:.2} %, wakeups {:.0}/s)   diff {diff:+.2} pp",
            t.rates.cpu_pct,
            t.rates.user_pct,
            t.rates.system_pct,
            t.rates.run_time_pct.unwrap_or(f64::NAN),
            t.rates.wakeups_per_s.unwrap_or(f64::NAN),
        );
        if *cpu > 1.0 {
            compared += 1;
            if diff.abs() > TOLERANCE_PP {
                failures.push(format!(
                    "{label}: {comm} ({tid}): pidstat {cpu:.2} vs micoff {over_pidstat_window:.2} \
                     ({:.2} over its {span_ms:.1} ms)",
                    t.rates.cpu_pct
                ));
            }
        }
    }
    assert!(
        compared >= 2,
        "expected the two burner threads above 1 % in pidstat's output:\n{text}"
    );
    eprintln!("{label}: {compared} threads compared with pidstat (tolerance {TOLERANCE_PP} pp)");
}

/// Checks each burner's CPU time in `report` (from `stat` and from `schedstat`) against what its
/// own clock brackets, adding what disagrees to `failures`.
fn agree_with_clocks(
    label: &str,
    pid: Pid,
    report: &CpuReport,
    brackets: &[Bracket],
    failures: &mut Vec<String>,
) {
    let ours = report
        .processes
        .iter()
        .find(|p| p.pid == pid)
        .expect("child in report");
    for ((name, _), bracket) in BURNERS.iter().zip(brackets) {
        let t = ours
            .threads
            .iter()
            .find(|t| t.comm == *name)
            .expect("burner thread in report");
        // The span the thread's figures cover: from its read at one end to its read at the other
        // (a sampler's report says it when it is not exactly the process's), both between the
        // clock readings of that end.
        let span_ms = t.window_ms.unwrap_or(report.window_ms);
        let stat_ms = t.rates.cpu_pct / 100.0 * span_ms;
        let run_ms = t.rates.run_time_ns.map(|ns| ns as f64 / 1e6);
        eprintln!(
            "  {label}: {name} stat {stat_ms:.1} ms, schedstat {run_ms:?} ms, its clock {bracket:?}"
        );
        assert!(
            bracket.discriminates(),
            "{name}'s clock readings are too far apart to check anything: {bracket:?}"
        );
        for (what, ms) in [("stat", Some(stat_ms)), ("schedstat", run_ms)] {
            if let Some(ms) = ms.filter(|ms| !bracket.holds(*ms)) {
                failures.push(format!(
                    "{label}: {name} {what} {ms:.1} ms of CPU, its clock says {bracket:?}"
                ));
            }
        }
    }
}
