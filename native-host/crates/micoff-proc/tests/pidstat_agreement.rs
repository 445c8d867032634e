//! Per-thread CPU from micoff-proc agrees with `pidstat -t` over the same window.
//!
//! The test binary re-executes itself as a child (env `MICOFF_BURN_CHILD=1`) whose threads `burn30`
//! and `burn60` burn ~30 % and ~60 % of one core (busy/sleep in 10 ms periods). `pidstat -t -p <child>
//! <window> 1` runs while the sampler takes one snapshot right after pidstat starts and one right
//! after it exits, so both cover the same window. pidstat is a declared dependency (sysstat, installed
//! by scripts/ensure-deps.sh): when it is missing this test FAILS.
//!
//! The native host's own sampler is held to the same bar: a [`Sampler`] set up as the host sets it
//! up (idle processes skipped, cold threads read at their turn) ticks every 100 ms through the same
//! window, and the burners' figures between its first and last snapshot must agree with pidstat's
//! too. The child also parks [`IDLE_THREADS`] threads that never run, so most of its threads are
//! cold and are not read every tick (checked).
#![allow(clippy::print_stderr)]

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use micoff_proc::{rates, ColdThreads, CpuReport, Pid, ProcFs, Sampler};

const BURNERS: [(&str, f64); 2] = [("burn30", 0.30), ("burn60", 0.60)];
const TOLERANCE_PP: f64 = 0.5;
/// Threads of the child that never run.
const IDLE_THREADS: usize = 40;
const SAMPLER_TICK: Duration = Duration::from_millis(100);

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

fn child() {
    for (name, share) in BURNERS {
        let _ = std::thread::Builder::new()
            .name(name.to_string())
            .spawn(move || burn(share));
    }
    for _ in 0..IDLE_THREADS {
        let _ = std::thread::Builder::new()
            .stack_size(64 * 1024)
            .spawn(|| loop {
                std::thread::park();
            });
    }
    let mut sink = Vec::new();
    let _ = std::io::stdin().read_to_end(&mut sink); // until the parent closes it
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
        .spawn()
        .expect("spawn the burner child");
    let pid = burner.id();
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
    let a = fs.snapshot(&[pid]);
    sampler.tick();
    let sa = sampler.last_snapshot().cloned().expect("sampler snapshot");
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
    let b = fs.snapshot(&[pid]);
    sampler.tick();
    let sb = sampler.last_snapshot().cloned().expect("sampler snapshot");
    drop(burner.stdin.take());
    let _ = burner.wait();

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
    for (label, report) in [("snapshots", rates(&a, &b)), ("sampler", rates(&sa, &sb))] {
        agree(label, pid, &theirs, &text, &report, &mut failures);
    }
    assert!(
        failures.is_empty(),
        "disagreement above {TOLERANCE_PP} pp: {failures:?}"
    );
    // This target runs without libtest (harness = false); print libtest's summary line so test
    // runners that count `test result:` lines (scripts/test.sh) count it.
    use std::io::Write as _;
    let _ = writeln!(
        std::io::stdout(),
        "test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out"
    );
}

/// Compares `report`'s threads with pidstat's rows, adding what disagrees to `failures`.
fn agree(
    label: &str,
    pid: Pid,
    theirs: &[(Pid, String, f64, f64, f64)],
    text: &str,
    report: &CpuReport,
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
        let diff = t.cpu_pct - cpu;
        eprintln!(
            "  {tid:>7} {comm:<16} pidstat %CPU {cpu:6.2} (usr {usr:.2} sys {sys:.2})   micoff {:6.2} (usr {:.2} sys {:.2}, run_time {:.2} %, wakeups {:.0}/s)   diff {diff:+.2} pp",
            t.cpu_pct,
            t.user_pct,
            t.system_pct,
            t.run_time_pct.unwrap_or(f64::NAN),
            t.wakeups_per_s.unwrap_or(f64::NAN),
        );
        if *cpu > 1.0 {
            compared += 1;
            if diff.abs() > TOLERANCE_PP {
                failures.push(format!(
                    "{label}: {comm} ({tid}): pidstat {cpu:.2} vs micoff {:.2}",
                    t.cpu_pct
                ));
            }
        }
    }
    for (name, share) in BURNERS {
        let t = ours
            .threads
            .iter()
            .find(|t| t.comm == name)
            .expect("burner thread in report");
        // Loose: the machine may be busy; the precise check is the agreement above.
        assert!(
            t.cpu_pct > share * 100.0 * 0.3,
            "{name} burned only {:.1} %",
            t.cpu_pct
        );
    }
    assert!(
        compared >= 2,
        "expected the two burner threads above 1 % in pidstat's output:\n{text}"
    );
    eprintln!("{label}: {compared} threads compared with pidstat (tolerance {TOLERANCE_PP} pp)");
}
