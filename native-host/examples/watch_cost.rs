//! What watching one process costs, side by side: `micoff-host top --pid P --interval 1 --json`, a
//! native messaging `cpu` subscription on `pids: [P]` (1 s), `pidstat -t -p P 1`, and with
//! `--compare PATH` the subscription on another host binary (`--watchers` picks which run). The
//! watched process is this program again (`--as-target`: `--threads` parked threads, `--busy`
//! waking every 10 ms). Each of `--rounds` runs the watchers fresh in a rotated order: 3 s to
//! settle, then each one's CPU over `--seconds` from its `/proc/<pid>/stat` and its bytes written
//! per second; the medians come last. `cargo build --release -p micoff-host --examples`; not run by
//! `npm test`; figures: docs/design/host-cost.md.
#![allow(clippy::print_stderr)]

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use micoff_proc::parse::parse_stat;
use micoff_proc::ProcFs;

type Error = Box<dyn std::error::Error>;

const WATCHERS: [&str; 4] = ["top", "subscription", "pidstat", "compare"];

fn main() -> Result<(), Error> {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("--as-target") {
        return target(&args[2..]);
    }
    let (mut threads, mut busy, mut seconds, mut rounds) = (300usize, 0usize, 30u64, 3usize);
    let mut host = micoff_testkit::host_beside_example()?;
    let mut compare: Option<PathBuf> = None;
    let mut chosen: Option<Vec<String>> = None;
    let mut i = 1;
    while i < args.len() {
        let val = args.get(i + 1).cloned().unwrap_or_default();
        match args[i].as_str() {
            "--threads" => threads = val.parse()?,
            "--busy" => busy = val.parse()?,
            "--seconds" => seconds = val.parse()?,
            "--rounds" => rounds = val.parse::<usize>()?.max(1),
            "--host" => host = PathBuf::from(val),
            "--compare" => compare = Some(PathBuf::from(val)),
            "--watchers" => chosen = Some(val.split(',').map(str::to_owned).collect()),
            other => return Err(format!("unknown argument {other}").into()),
        }
        i += 2;
    }
    for h in std::iter::once(&host).chain(&compare) {
        if !h.is_file() {
            return Err(format!(
                "{} not found: cargo build --release -p micoff-host",
                h.display()
            )
            .into());
        }
    }
    let watchers: Vec<&str> = WATCHERS
        .into_iter()
        .filter(|w| *w != "compare" || compare.is_some())
        .filter(|w| chosen.as_ref().is_none_or(|c| c.iter().any(|x| x == w)))
        .collect();
    if watchers.is_empty() {
        return Err(
            "no watcher to run (--watchers names: top,subscription,pidstat,compare)".into(),
        );
    }
    let mut target = Command::new(std::env::current_exe()?)
        .args(["--as-target", &threads.to_string(), &busy.to_string()])
        .stdin(Stdio::null())
        .spawn()?;
    let pid = target.id();
    micoff_testkit::wait_for(
        "the watched process's threads",
        Duration::from_secs(30),
        || {
            std::fs::read_dir(format!("/proc/{pid}/task"))
                .is_ok_and(|tasks| tasks.count() > threads)
        },
    );
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "watched process {pid}: {threads} threads ({busy} waking every 10 ms); {seconds} s windows, \
         {rounds} rounds, order rotated; host {}{}",
        host.display(),
        compare
            .as_ref()
            .map_or(String::new(), |c| format!("; compare {}", c.display()))
    )?;
    writeln!(out, "load average at start: {}", loadavg())?;
    let mut results: Vec<Vec<(f64, f64)>> = vec![Vec::new(); watchers.len()];
    for round in 0..rounds {
        for k in 0..watchers.len() {
            let w = (round + k) % watchers.len();
            let bin = match (watchers[w], &compare) {
                ("compare", Some(c)) => c,
                _ => &host,
            };
            let (cpu, bytes) = measure(watchers[w], bin, pid, seconds)?;
            writeln!(
                out,
                "round {}: {:<12} {:>6.3} % of one core, {:>8.0} bytes/s",
                round + 1,
                watchers[w],
                cpu,
                bytes
            )?;
            out.flush()?;
            results[w].push((cpu, bytes));
        }
    }
    writeln!(
        out,
        "median of {rounds} rounds ({threads} threads, {busy} busy); load average at end: {}",
        loadavg()
    )?;
    for (w, r) in results.iter().enumerate() {
        writeln!(
            out,
            "  {:<12} {:>6.3} % of one core, {:>8.0} bytes/s",
            watchers[w],
            median(r.iter().map(|x| x.0).collect()),
            median(r.iter().map(|x| x.1).collect())
        )?;
    }
    let _ = target.kill();
    let _ = target.wait();
    Ok(())
}

/// The machine's 1/5/15-minute load averages (the figures are read against them).
fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg").map_or_else(
        |_| "unknown".to_owned(),
        |s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "),
    )
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Starts one watcher, lets it settle, and measures its CPU (% of one core) and output (bytes/s).
fn measure(watcher: &str, host: &Path, pid: u32, seconds: u64) -> Result<(f64, f64), Error> {
    let p = pid.to_string();
    let mut cmd = match watcher {
        "top" => {
            let mut c = Command::new(host);
            c.args(["top", "--pid", &p, "--interval", "1", "--json"]);
            c
        }
        "subscription" | "compare" => {
            let mut c = Command::new(host);
            c.arg(format!(
                "chrome-extension://{}/",
                micoff_native::CHROME_EXTENSION_ID
            ));
            c
        }
        _ => {
            let mut c = Command::new("pidstat");
            c.args(["-t", "-p", &p, "1"]).env("LC_ALL", "C");
            c
        }
    };
    let mut child: Child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?;
    let mut stdin = child.stdin.take().ok_or("stdin")?;
    if watcher != "top" && watcher != "pidstat" {
        let body = format!(
            r#"{{"id":1,"type":"subscribe","topic":"cpu","interval_ms":1000,"pids":[{pid}]}}"#
        );
        stdin.write_all(&micoff_testkit::encode_frame(body.as_bytes()))?;
        stdin.flush()?;
    }
    // Drain its output, counting bytes (a reader thread: the watcher must never block on it).
    let bytes = Arc::new(AtomicU64::new(0));
    let counted = Arc::clone(&bytes);
    let mut stdout = child.stdout.take().ok_or("stdout")?;
    let reader = std::thread::spawn(move || {
        let mut buf = vec![0u8; 1 << 16];
        while let Ok(n) = stdout.read(&mut buf) {
            if n == 0 {
                break;
            }
            counted.fetch_add(n as u64, Ordering::Relaxed);
        }
    });
    std::thread::sleep(Duration::from_secs(3));
    let (t0, b0, at0) = (
        stat_ticks(child.id())?,
        bytes.load(Ordering::Relaxed),
        Instant::now(),
    );
    std::thread::sleep(Duration::from_secs(seconds));
    let (t1, b1, elapsed) = (
        stat_ticks(child.id())?,
        bytes.load(Ordering::Relaxed),
        at0.elapsed(),
    );
    drop(stdin); // the host ends at end of input
    let _ = child.kill();
    let _ = child.wait();
    let _ = reader.join();
    let clk_tck = ProcFs::system().clk_tck() as f64;
    let secs = elapsed.as_secs_f64();
    Ok((
        (t1 - t0) as f64 / clk_tck * 100.0 / secs,
        (b1 - b0) as f64 / secs,
    ))
}

/// utime + stime of the whole process (all threads, exited ones included), in clock ticks.
fn stat_ticks(pid: u32) -> Result<u64, Error> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    let st = parse_stat(&text).ok_or("unparsable stat")?;
    Ok(st.utime + st.stime)
}

/// The watched process: `threads` threads, `busy` of them waking every 10 ms; runs until killed.
fn target(args: &[String]) -> Result<(), Error> {
    let threads: usize = args.first().ok_or("threads")?.parse()?;
    let busy: usize = args.get(1).map_or(Ok(0), |s| s.parse())?;
    for i in 0..threads {
        let wake = i < busy;
        std::thread::Builder::new()
            .stack_size(64 * 1024)
            .spawn(move || loop {
                if wake {
                    std::thread::sleep(Duration::from_millis(10));
                } else {
                    std::thread::park();
                }
            })?;
    }
    // Keep the main thread asleep too; a line on stdin is never coming.
    let _ = BufReader::new(std::io::stdin()).lines().next();
    loop {
        std::thread::park();
    }
}
