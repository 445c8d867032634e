//! What sampling costs: N idle threads in a child (default 300), sampled once a second for S
//! seconds (snapshot + rates + JSON); reports this process's CPU and peak RSS. `cargo run --release
//! -p micoff-proc --example sampler_cost -- [--threads N] [--active K] [--seconds S] [--pid P...]
//! [--host-mode]`: K threads wake every 10 ms; `--host-mode` sets the sampler up as the host does
//! (prints threads read per tick); `--pid` samples real processes. The sampler alone: the host's
//! whole cost is the `host_cost` example of micoff-host (docs/design/host-cost.md).
#![allow(clippy::print_stderr)]

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use micoff_proc::{ColdThreads, Pid, ProcFs, Sampler};

fn cpu_time() -> Duration {
    // SAFETY: getrusage only writes the struct we pass.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointer to a rusage.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, (t.tv_usec as u32) * 1000);
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

fn status_kib(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix(field))
                .and_then(|v| v.split_whitespace().next())
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

fn child(threads: usize, active: usize) {
    for i in 0..threads {
        let _ = if i < active {
            // Wakes 100 times a second, like an audio thread at 10 ms.
            std::thread::Builder::new()
                .name(format!("active-{i:03}"))
                .spawn(|| loop {
                    std::thread::sleep(Duration::from_millis(10));
                })
        } else {
            std::thread::Builder::new()
                .name(format!("idle-{i:03}"))
                .spawn(|| loop {
                    std::thread::park();
                })
        };
    }
    // Live until the parent closes our stdin.
    let mut sink = Vec::new();
    let _ = std::io::stdin().read_to_end(&mut sink);
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let mut threads = 300usize;
    let mut seconds = 30u64;
    let mut active = 0usize;
    let mut pids: Vec<Pid> = Vec::new();
    let mut host_mode = false;
    let mut i = 1;
    while i < args.len() {
        if args[i] == "--host-mode" {
            host_mode = true;
            i += 1;
            continue;
        }
        let val = args.get(i + 1).cloned().unwrap_or_default();
        match args[i].as_str() {
            "--child" => {
                let active = args.get(i + 2).and_then(|a| a.parse().ok()).unwrap_or(0);
                child(val.parse()?, active);
                return Ok(());
            }
            "--threads" => threads = val.parse()?,
            "--seconds" => seconds = val.parse()?,
            "--active" => active = val.parse()?,
            "--pid" => pids.push(val.parse()?),
            other => return Err(format!("unknown argument {other}").into()),
        }
        i += 2;
    }

    let fs = ProcFs::system();
    let mut spawned = None;
    if pids.is_empty() {
        let c = Command::new(std::env::current_exe()?)
            .args(["--child", &threads.to_string(), &active.to_string()])
            .stdin(Stdio::piped())
            .spawn()?;
        let pid = c.id();
        // Wait (on the condition, bounded) until all threads exist.
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let n = std::fs::read_dir(format!("/proc/{pid}/task"))?.count();
            if n > threads || Instant::now() > deadline {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        pids.push(pid);
        spawned = Some(c);
    }

    let mut sampler = Sampler::new(fs, pids.clone());
    if host_mode {
        sampler = sampler
            .skip_idle_processes(true)
            .cold_threads(Some(ColdThreads::DEFAULT));
    }
    let mut thread_reads = 0usize;
    let mut json = Vec::with_capacity(256 * 1024);
    let mut sampled_threads = 0usize;
    let mut json_bytes = 0usize;
    let mut full_reads = 0usize;
    let wall0 = Instant::now();
    let cpu0 = cpu_time();
    let mut next = Instant::now();
    for _ in 0..=seconds {
        if let Some(report) = sampler.tick() {
            json.clear();
            serde_json::to_writer(&mut json, &report)?;
            json_bytes = json.len();
            sampled_threads = report.processes.iter().map(|p| p.threads.len()).sum();
            full_reads = sampler.last_full_reads();
            thread_reads += sampler.last_thread_reads();
        }
        next += Duration::from_secs(1);
        std::thread::sleep(next.saturating_duration_since(Instant::now()));
    }
    let cpu = cpu_time() - cpu0;
    let wall = wall0.elapsed();
    if let Some(mut c) = spawned {
        drop(c.stdin.take());
        let _ = c.wait();
    }
    let ticks = seconds + 1;
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "sampled {} process(es), {sampled_threads} threads ({full_reads} re-read in the last tick), {ticks} ticks over {:.1} s (report JSON {json_bytes} bytes)",
        pids.len(),
        wall.as_secs_f64()
    )?;
    writeln!(
        out,
        "cpu: {:.3} % of one core ({:.0} us per tick, {:.2} us per thread-tick)",
        cpu.as_secs_f64() * 100.0 / wall.as_secs_f64(),
        cpu.as_secs_f64() * 1e6 / ticks as f64,
        cpu.as_secs_f64() * 1e6 / (ticks as f64 * sampled_threads.max(1) as f64)
    )?;
    if host_mode {
        writeln!(
            out,
            "host mode: {:.0} threads' schedstat read per tick on average, {} ticks read a process's cold threads all at once",
            thread_reads as f64 / seconds.max(1) as f64,
            sampler.cold_sweeps()
        )?;
    }
    writeln!(
        out,
        "rss: VmHWM {:.1} MiB, VmRSS {:.1} MiB",
        status_kib("VmHWM:") as f64 / 1024.0,
        status_kib("VmRSS:") as f64 / 1024.0
    )?;
    Ok(())
}
