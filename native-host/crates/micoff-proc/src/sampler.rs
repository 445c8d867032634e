//! [`Sampler`]: periodic snapshots at a fraction of [`ProcFs::snapshot`]'s cost.
//!
//! Why it is cheaper: opening a `/proc/<pid>/task/<tid>/*` file costs more than reading it, and
//! `status` is the most expensive file to generate. A thread's `schedstat` run time
//! (`sum_exec_runtime`) grows whenever the thread runs at all, and none of the counters we read
//! (utime/stime, context switches, syscr/syscw) can change without the thread running. So each tick
//! reads one `schedstat` per thread through an fd kept open (`pread` at 0), and reads `stat`,
//! `status` and `io` only for threads whose run time moved; a thread that ran in two ticks in a row
//! (an audio thread runs in every one) keeps those three open too. The task directory is listed
//! only when the process's thread count changed or a thread vanished. The snapshots are identical
//! in content to [`ProcFs::snapshot`]'s.

use std::collections::HashMap;
use std::fs::File;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use crate::fs::text;
use crate::parse::{parse_schedstat, parse_stat};
use crate::rates::{rates, CpuReport};
use crate::role::Role;
use crate::sample::{
    monotonic_ns, read_thread, read_thread_with, ProcessSample, Scratch, Snapshot, ThreadFiles,
    ThreadSample,
};
use crate::{Pid, ProcFs};

/// Default cap on the fds kept open by a sampler that is given no shared [`FdBudget`] (below the
/// common soft limit of 1024 fds, leaving room for the rest of the program). Files beyond it are
/// read by path.
pub const DEFAULT_MAX_OPEN_FDS: usize = 640;

/// The fds the samplers of one program may keep open, shared by all of them (the native host runs
/// one sampler per `cpu` subscription): a sampler takes from it before it keeps a file open and
/// gives back what it closes (and everything when dropped). What does not fit is read by path.
#[derive(Debug)]
pub struct FdBudget {
    limit: usize,
    used: AtomicUsize,
}

impl FdBudget {
    pub fn new(limit: usize) -> Arc<Self> {
        Arc::new(Self {
            limit,
            used: AtomicUsize::new(0),
        })
    }

    /// Takes `n` fds if they fit.
    pub fn try_take(&self, n: usize) -> bool {
        self.used
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |used| {
                (used + n <= self.limit).then_some(used + n)
            })
            .is_ok()
    }

    pub fn give(&self, n: usize) {
        let _ = self
            .used
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |used| {
                Some(used.saturating_sub(n))
            });
    }

    /// Fds taken now.
    pub fn used(&self) -> usize {
        self.used.load(Ordering::Acquire)
    }

    pub fn limit(&self) -> usize {
        self.limit
    }
}

/// Keeps the previous snapshot (each report covers the time since the last tick) and per-thread
/// state that makes the next snapshot cheap.
#[derive(Debug)]
pub struct Sampler {
    fs: ProcFs,
    pids: Vec<Pid>,
    last: Option<Snapshot>,
    procs: HashMap<Pid, ProcCache>,
    /// The fds this sampler holds (taken from `budget`).
    open_fds: usize,
    budget: Arc<FdBudget>,
    /// The last snapshot ran out of file descriptors (EMFILE/ENFILE): it is incomplete.
    fds_exhausted: bool,
    /// How many threads were fully re-read in the last tick (for tests and benchmarks).
    last_full_reads: usize,
    /// Skip the threads of a process whose own CPU time did not move (see
    /// [`Sampler::skip_idle_processes`]).
    skip_idle: bool,
    /// Threads whose `schedstat` was read in the last tick.
    last_thread_reads: usize,
}

#[derive(Debug)]
struct ProcCache {
    starttime: u64,
    role: Role,
    threads: Vec<ThreadCache>,
    /// The process's own utime + stime (all its threads) at the last tick.
    cpu_ticks: u64,
}

#[derive(Debug)]
struct ThreadCache {
    sample: ThreadSample,
    schedstat: Option<File>,
    /// `stat`/`status`/`io` kept open once the thread ran in two ticks in a row (an audio thread
    /// runs every tick; most threads of a browser never do).
    files: Option<ThreadFiles>,
    /// It ran during the last tick.
    ran: bool,
}

impl ThreadCache {
    /// The fds this thread holds.
    fn fds(&self) -> usize {
        usize::from(self.schedstat.is_some()) + self.files.as_ref().map_or(0, ThreadFiles::count)
    }
}

impl Sampler {
    pub fn new(fs: ProcFs, pids: Vec<Pid>) -> Self {
        Self {
            fs,
            pids,
            last: None,
            procs: HashMap::new(),
            open_fds: 0,
            budget: FdBudget::new(DEFAULT_MAX_OPEN_FDS),
            fds_exhausted: false,
            last_full_reads: 0,
            skip_idle: false,
            last_thread_reads: 0,
        }
    }

    /// Reads a process's own `stat` first and descends into its threads only when its CPU time
    /// (utime + stime of the whole thread group, in clock ticks) moved since the last tick and its
    /// thread count did not change: a browser's thousands of idle threads then cost one read per
    /// process, not one per thread. The price: a process that used less than one clock tick
    /// (10 ms) since the last tick shows no thread activity in that tick (its threads' counters
    /// are carried over); what they did is counted at the next descent, in that tick's window.
    pub fn skip_idle_processes(mut self, on: bool) -> Self {
        self.skip_idle = on;
        self
    }

    /// Threads whose `schedstat` was read in the last tick (all threads of the processes that
    /// were descended into).
    pub fn last_thread_reads(&self) -> usize {
        self.last_thread_reads
    }

    /// Caps the fds kept open with a budget of its own (0: keep none, sample every file by path).
    pub fn with_max_open_fds(self, max: usize) -> Self {
        self.with_fd_budget(FdBudget::new(max))
    }

    /// Keeps fds open only as far as `budget` (shared with other samplers) allows.
    pub fn with_fd_budget(mut self, budget: Arc<FdBudget>) -> Self {
        self.budget.give(self.open_fds);
        self.budget = budget;
        let _ = self.budget.try_take(self.open_fds);
        self
    }

    /// The last snapshot hit the process's open-file limit (EMFILE) or the system's (ENFILE):
    /// some of its processes or threads could not be read and it must not be taken as "they are
    /// gone". The next tick tries again.
    pub fn fds_exhausted(&self) -> bool {
        self.fds_exhausted
    }

    /// Changes the watched pids (processes new to the set get their first report one tick later).
    pub fn set_pids(&mut self, pids: Vec<Pid>) {
        self.pids = pids;
    }

    pub fn pids(&self) -> &[Pid] {
        &self.pids
    }

    /// The `/proc` fds kept open now (`schedstat` per thread; `stat`/`status`/`io` of threads
    /// that keep running).
    pub fn open_fds(&self) -> usize {
        self.open_fds
    }

    /// Threads whose `stat`/`status`/`io` were read in the last tick (the others had not run).
    pub fn last_full_reads(&self) -> usize {
        self.last_full_reads
    }

    /// Takes a snapshot; returns the report since the previous one (`None` on the first call).
    pub fn tick(&mut self) -> Option<CpuReport> {
        let now = self.snapshot();
        let report = self.last.as_ref().map(|prev| rates(prev, &now));
        self.last = Some(now);
        report
    }

    /// A snapshot of the watched pids (updates the per-thread state).
    pub fn snapshot(&mut self) -> Snapshot {
        let mut pids = self.pids.clone();
        pids.sort_unstable();
        pids.dedup();
        // Forget processes no longer watched.
        let stale: Vec<Pid> = self
            .procs
            .keys()
            .copied()
            .filter(|p| pids.binary_search(p).is_err())
            .collect();
        for p in stale {
            self.forget(p);
        }
        let mut scratch = Scratch::new(&self.fs);
        self.last_full_reads = 0;
        self.last_thread_reads = 0;
        let taken_at_ns = monotonic_ns();
        let mut processes = Vec::with_capacity(pids.len());
        for pid in pids {
            match self.sample_process(pid, &mut scratch) {
                Some(p) => processes.push(p),
                None => self.forget(pid),
            }
        }
        self.fds_exhausted = scratch.exhausted;
        Snapshot {
            clk_tck: self.fs.clk_tck(),
            taken_at_ns,
            processes,
        }
    }

    /// The snapshot the last [`tick`](Self::tick) / [`snapshot`](Self::snapshot) took (`None`
    /// before the first). Its `processes` is empty when none of the watched pids exists.
    pub fn last_snapshot(&self) -> Option<&Snapshot> {
        self.last.as_ref()
    }

    fn forget(&mut self, pid: Pid) {
        if let Some(c) = self.procs.remove(&pid) {
            let kept: usize = c.threads.iter().map(ThreadCache::fds).sum();
            self.open_fds = self.open_fds.saturating_sub(kept);
            self.budget.give(kept);
        }
    }

    fn sample_process(&mut self, pid: Pid, s: &mut Scratch) -> Option<ProcessSample> {
        let at_ns = monotonic_ns();
        let (ppid, comm, starttime, utime, stime, num_threads) = {
            let raw = s.read(&[&pid, &"stat"])?;
            let t = text(raw);
            let st = parse_stat(&t)?;
            (
                st.ppid,
                st.comm.to_owned(),
                st.starttime,
                st.utime,
                st.stime,
                st.num_threads,
            )
        };
        if self
            .procs
            .get(&pid)
            .is_some_and(|c| c.starttime != starttime)
        {
            self.forget(pid); // pid reused
        }
        if let std::collections::hash_map::Entry::Vacant(e) = self.procs.entry(pid) {
            e.insert(ProcCache {
                starttime,
                role: s.role(pid, &comm),
                threads: Vec::new(),
                cpu_ticks: u64::MAX,
            });
        }
        let mut open_fds = self.open_fds;
        let budget = Arc::clone(&self.budget);
        let mut full_reads = 0;
        let skip_idle = self.skip_idle;
        let cache = self.procs.get_mut(&pid)?;

        let cpu_ticks = utime.saturating_add(stime);
        let mut relist = cache.threads.len() as u64 != num_threads;
        let idle = skip_idle && !relist && cache.cpu_ticks == cpu_ticks;
        cache.cpu_ticks = cpu_ticks;
        let mut i = if idle { cache.threads.len() } else { 0 };
        self.last_thread_reads += cache.threads.len() - i;
        while i < cache.threads.len() {
            let tc = &mut cache.threads[i];
            let tid = tc.sample.tid;
            let run = match &tc.schedstat {
                Some(f) => s
                    .pread(f)
                    .and_then(|raw| parse_schedstat(&text(raw)))
                    .map(|x| x.run_time_ns),
                None => s.run_time_ns(pid, tid),
            };
            let unchanged = run.is_some() && run == tc.sample.run_time_ns;
            if !unchanged {
                full_reads += 1;
                if tc.ran && tc.files.is_none() && budget.try_take(ThreadFiles::MAX) {
                    tc.files = ThreadFiles::open(pid, tid, s);
                    let kept = tc.files.as_ref().map_or(0, ThreadFiles::count);
                    budget.give(ThreadFiles::MAX - kept);
                    open_fds += kept;
                }
                match read_thread_with(pid, tid, s, run, tc.files.as_ref()) {
                    Some(t) if t.starttime == tc.sample.starttime => tc.sample = t,
                    _ => {
                        // Gone (or a reused tid): drop it and list the task dir again.
                        let fds = cache.threads.swap_remove(i).fds();
                        open_fds -= fds;
                        budget.give(fds);
                        relist = true;
                        continue;
                    }
                }
            }
            tc.ran = !unchanged;
            i += 1;
        }

        if relist {
            let mut tids = Vec::new();
            if s.task_ids(pid, &mut tids).is_none() {
                // The process is going away. Keep the count of the fds closed above (the caller
                // forgets the pid, which subtracts the ones still cached).
                self.open_fds = open_fds;
                return None;
            }
            cache.threads.retain(|t| {
                let keep = tids.binary_search(&t.sample.tid).is_ok();
                if !keep {
                    open_fds -= t.fds(); // its fds close with it
                    budget.give(t.fds());
                }
                keep
            });
            for tid in tids {
                if cache.threads.iter().any(|t| t.sample.tid == tid) {
                    continue;
                }
                let Some(sample) = read_thread(pid, tid, s) else {
                    continue;
                };
                full_reads += 1;
                let schedstat = if sample.run_time_ns.is_some() && budget.try_take(1) {
                    let f = File::open(s.path.at(&[&pid, &"task", &tid, &"schedstat"])).ok();
                    if f.is_none() {
                        budget.give(1);
                    }
                    f
                } else {
                    None
                };
                if schedstat.is_some() {
                    open_fds += 1;
                }
                cache.threads.push(ThreadCache {
                    sample,
                    schedstat,
                    files: None,
                    ran: false,
                });
            }
        }
        cache.threads.sort_unstable_by_key(|t| t.sample.tid);
        let threads = cache.threads.iter().map(|t| t.sample.clone()).collect();
        let role = cache.role;
        self.open_fds = open_fds;
        self.last_full_reads += full_reads;
        Some(ProcessSample {
            pid,
            ppid,
            comm,
            role,
            starttime,
            at_ns,
            utime,
            stime,
            threads,
        })
    }
}

impl Drop for Sampler {
    fn drop(&mut self) {
        // Its files close with it.
        self.budget.give(self.open_fds);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::fs;
    use std::path::Path;

    use super::*;

    fn stat(pid: Pid, comm: &str, num_threads: u64, starttime: u64) -> String {
        format!(
            "{pid} ({comm}) S 1 {pid} {pid} 0 -1 4194560 1197 0 0 0 0 0 0 0 20 0 {num_threads} 0 \
             {starttime} 1000000 100 18446744073709551615 1 1 0 0 0 0 0 4096 0 0 0 0 17 1 0 0 0 0 0\n"
        )
    }

    fn process(root: &Path, pid: Pid, num_threads: u64) {
        let d = root.join(pid.to_string());
        fs::create_dir_all(d.join("task")).unwrap();
        fs::write(d.join("stat"), stat(pid, "proc", num_threads, 1000)).unwrap();
        fs::write(d.join("cmdline"), "proc\0").unwrap();
    }

    fn thread(root: &Path, pid: Pid, tid: Pid, run_ns: u64) {
        let d = root.join(format!("{pid}/task/{tid}"));
        fs::create_dir_all(&d).unwrap();
        fs::write(d.join("stat"), stat(tid, "t", 1, 2000 + u64::from(tid))).unwrap();
        fs::write(d.join("schedstat"), format!("{run_ns} 0 1\n")).unwrap();
        fs::write(
            d.join("status"),
            "voluntary_ctxt_switches:\t1\nnonvoluntary_ctxt_switches:\t0\n",
        )
        .unwrap();
    }

    /// The fds the cache really holds.
    fn held(s: &Sampler) -> usize {
        s.procs
            .values()
            .flat_map(|p| &p.threads)
            .map(ThreadCache::fds)
            .sum()
    }

    #[test]
    fn open_fd_count_follows_threads_dropped_on_relist() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        process(root, 10, 3);
        for tid in [10, 11, 12] {
            thread(root, 10, tid, 5);
        }
        let mut s = Sampler::new(ProcFs::with_clk_tck(root, 100), vec![10]);
        assert!(s.tick().is_none());
        assert_eq!((s.open_fds, held(&s)), (3, 3));

        // Thread 12 exits without its kept schedstat noticing (its fd still reads the old text):
        // the relist drops it, and its fd must leave the count.
        fs::remove_dir_all(root.join("10/task/12")).unwrap();
        fs::write(root.join("10/stat"), stat(10, "proc", 2, 1000)).unwrap();
        s.tick();
        assert_eq!((s.open_fds, held(&s)), (2, 2));
    }

    #[test]
    fn open_fd_count_survives_a_process_vanishing_mid_read() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        process(root, 20, 2);
        thread(root, 20, 20, 5);
        thread(root, 20, 21, 5);
        let mut s = Sampler::new(ProcFs::with_clk_tck(root, 100), vec![20]);
        s.tick();
        assert_eq!(s.open_fds, 2);

        // Thread 21 ran (its kept schedstat changes in place) and is gone when re-read, and then
        // the task dir cannot be listed: the process is exiting while its stat is still there.
        fs::write(root.join("20/task/21/schedstat"), "99 0 2\n").unwrap();
        fs::remove_file(root.join("20/task/21/stat")).unwrap();
        fs::rename(root.join("20/task"), root.join("20/task.gone")).unwrap();
        let snap = s.snapshot();
        assert!(snap.processes.is_empty());
        assert_eq!((s.open_fds, held(&s)), (0, 0));

        // It comes back (same pid, new start): counted from zero again, no underflow.
        fs::rename(root.join("20/task.gone"), root.join("20/task")).unwrap();
        thread(root, 20, 21, 7);
        s.snapshot();
        assert_eq!(s.open_fds, held(&s));
    }

    #[test]
    fn samplers_share_one_fd_budget_and_give_it_back() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        process(root, 30, 4);
        for tid in [30, 31, 32, 33] {
            thread(root, 30, tid, 5);
        }
        let budget = FdBudget::new(6);
        let fs = ProcFs::with_clk_tck(root, 100);
        let mut a = Sampler::new(fs.clone(), vec![30]).with_fd_budget(Arc::clone(&budget));
        let mut b = Sampler::new(fs.clone(), vec![30]).with_fd_budget(Arc::clone(&budget));
        a.tick();
        b.tick();
        // 4 schedstat fds for the first, the 2 left for the second; the rest is read by path.
        assert_eq!((a.open_fds(), b.open_fds(), budget.used()), (4, 2, 6));
        let second = b.tick();
        assert!(second.is_some_and(|r| r.processes[0].threads.len() == 4));
        drop(a);
        assert_eq!(budget.used(), 2);
        drop(b);
        assert_eq!(budget.used(), 0);
    }

    #[test]
    fn an_idle_process_costs_one_read_and_a_busy_one_is_descended_into() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        process(root, 40, 3);
        for tid in [40, 41, 42] {
            thread(root, 40, tid, 5);
        }
        let fs = ProcFs::with_clk_tck(root, 100);
        let mut s = Sampler::new(fs, vec![40]).skip_idle_processes(true);
        s.tick();
        assert_eq!(s.last_thread_reads(), 0, "the first tick lists the threads");
        // Nothing moved: the process's stat says so and its threads are not read.
        let r = s.tick().unwrap();
        assert_eq!(s.last_thread_reads(), 0);
        assert_eq!(r.processes[0].threads.len(), 3, "still listed, at 0 %");
        // Thread 41 runs for 30 ms: the process's utime moves by 3 ticks, and it is descended into.
        fs::write(root.join("40/task/41/schedstat"), "30000005 0 2\n").unwrap();
        let busy = stat(40, "proc", 3, 1000).replacen(" 0 0 0 0 20 ", " 3 0 0 0 20 ", 1);
        fs::write(root.join("40/stat"), busy).unwrap();
        let r = s.tick().unwrap();
        assert_eq!(s.last_thread_reads(), 3);
        assert!(r.processes[0].cpu_pct > 0.0, "{:?}", r.processes[0]);
        let t41 = r.processes[0].threads.iter().find(|t| t.tid == 41).unwrap();
        assert_eq!(t41.run_time_ns, Some(30_000_000));
    }
}
