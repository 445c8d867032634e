//! Per-thread rates of the client and the server over a window, from micoff-proc.
//!
//! micoff-proc owns all /proc reading ([`ProcFs`], injectable root) and the rate arithmetic
//! ([`micoff_proc::rates`], a pure function of two snapshots). This module only flattens its
//! report into the figures the bench adds up, preferring the precise schedstat run time over the
//! 10 ms-tick utime/stime where the kernel has it.

use micoff_proc::{CpuReport, Pid, ProcFs, Snapshot};
use serde::{Deserialize, Serialize};

/// Rates of one thread over a window.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ThreadRates {
    pub tid: u32,
    pub name: String,
    /// Percent of one core.
    pub cpu_pct: f64,
    /// Voluntary + involuntary context switches per second.
    pub wakeups_per_s: f64,
    pub read_syscalls_per_s: f64,
    pub write_syscalls_per_s: f64,
}

/// The threads of `pid` in a micoff-proc report (empty when the process was not in both
/// snapshots). Missing counters (no schedstat, unreadable io) count as zero.
pub fn threads_of(report: &CpuReport, pid: Pid) -> Vec<ThreadRates> {
    report
        .processes
        .iter()
        .filter(|p| p.pid == pid)
        .flat_map(|p| p.threads.iter())
        .map(|t| ThreadRates {
            tid: t.tid,
            name: t.comm.clone(),
            cpu_pct: t.rates.run_time_pct.unwrap_or(t.rates.cpu_pct),
            wakeups_per_s: t.rates.wakeups_per_s.unwrap_or(0.0),
            read_syscalls_per_s: t.rates.read_syscalls_per_s.unwrap_or(0.0),
            write_syscalls_per_s: t.rates.write_syscalls_per_s.unwrap_or(0.0),
        })
        .collect()
}

/// One snapshot of the given processes (the client and the server are read together, so both
/// windows cover the same time).
pub fn snapshot(fs: &ProcFs, pids: &[Pid]) -> Snapshot {
    fs.snapshot(pids)
}

/// Read (`write == false`) or write syscalls of all threads of `pid` so far; `None` when the
/// process is gone or its io is unreadable.
pub fn io_syscalls(fs: &ProcFs, pid: Pid, write: bool) -> Option<u64> {
    let snap = fs.snapshot(&[pid]);
    let p = snap.processes.iter().find(|p| p.pid == pid)?;
    p.threads
        .iter()
        .map(|t| if write { t.syscw } else { t.syscr })
        .sum()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// A fake /proc with one process of two threads, at a given point of its life.
    fn fake_proc(root: &std::path::Path, run_ns: [u64; 2], cs: [u64; 2], io: [(u64, u64); 2]) {
        let p = root.join("10");
        std::fs::create_dir_all(&p).unwrap();
        std::fs::write(
            p.join("stat"),
            "10 (pulseaudio) S 1 10 10 0 -1 0 0 0 0 0 5 5 0 0 20 0 2 0 100 0 0\n",
        )
        .unwrap();
        std::fs::write(p.join("cmdline"), "pulseaudio\0").unwrap();
        for (i, tid) in [10u32, 11].iter().enumerate() {
            let t = p.join("task").join(tid.to_string());
            std::fs::create_dir_all(&t).unwrap();
            let comm = if *tid == 10 {
                "pulseaudio"
            } else {
                "null-sink"
            };
            std::fs::write(
                t.join("stat"),
                format!("{tid} ({comm}) S 1 10 10 0 -1 0 0 0 0 0 5 5 0 0 20 0 2 0 100 0 0\n"),
            )
            .unwrap();
            std::fs::write(t.join("schedstat"), format!("{} 0 0\n", run_ns[i])).unwrap();
            std::fs::write(
                t.join("status"),
                format!(
                    "voluntary_ctxt_switches:\t{}\nnonvoluntary_ctxt_switches:\t0\n",
                    cs[i]
                ),
            )
            .unwrap();
            std::fs::write(
                t.join("io"),
                format!("rchar: 0\nsyscr: {}\nsyscw: {}\n", io[i].0, io[i].1),
            )
            .unwrap();
        }
    }

    #[test]
    fn threads_from_two_snapshots_of_a_fake_tree() {
        let dir = tempfile::tempdir().unwrap();
        let fs = ProcFs::with_clk_tck(dir.path(), 100);
        fake_proc(dir.path(), [0, 0], [0, 0], [(0, 0), (0, 0)]);
        let a = snapshot(&fs, &[10]);
        assert_eq!(io_syscalls(&fs, 10, true), Some(0));
        fake_proc(
            dir.path(),
            [1_000_000_000, 0],
            [300, 100],
            [(600, 300), (0, 0)],
        );
        let mut b = snapshot(&fs, &[10]);
        // Pretend exactly 10 s passed between the snapshots.
        b.taken_at_ns = a.taken_at_ns + 10_000_000_000;
        for p in &mut b.processes {
            p.at_ns = a.processes[0].at_ns + 10_000_000_000;
        }
        let report = micoff_proc::rates(&a, &b);
        let threads = threads_of(&report, 10);
        assert_eq!(threads.len(), 2);
        let main = threads.iter().find(|t| t.tid == 10).unwrap();
        assert!((main.cpu_pct - 10.0).abs() < 1e-6, "{main:?}");
        assert!((main.wakeups_per_s - 30.0).abs() < 1e-6);
        assert!((main.read_syscalls_per_s - 60.0).abs() < 1e-6);
        assert!((main.write_syscalls_per_s - 30.0).abs() < 1e-6);
        let dev = threads.iter().find(|t| t.tid == 11).unwrap();
        assert_eq!(dev.name, "null-sink");
        assert!(threads_of(&report, 99).is_empty());
        assert_eq!(io_syscalls(&fs, 10, false), Some(600));
        assert_eq!(io_syscalls(&fs, 99, false), None);
    }
}
