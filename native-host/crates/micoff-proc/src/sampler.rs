//! [`Sampler`]: periodic snapshots identical in content to [`ProcFs::snapshot`]'s, at a fraction of
//! its cost. Opening a `/proc` file costs more than reading it, and no counter we read can change
//! unless the thread ran, which its `schedstat` run time shows: each tick reads one `schedstat` per
//! thread through a kept fd, and `stat`, `status` and `io` only for threads that ran. With
//! [`Sampler::skip_idle_processes`] and [`Sampler::cold_threads`] an idle process is not descended
//! into and a "cold" thread is read only at its turn (or at once when its process's CPU time moved
//! more than the threads read account for), its figures then covering its own span
//! (`ThreadSample::read_at_ns`): never lumped into one window, never lost.

use std::collections::HashMap;
use std::fs::File;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use crate::fs::text;
use crate::parse::parse_schedstat;
use crate::rates::{rates, CpuReport};
use crate::role::Role;
use crate::sample::{
    monotonic_ns, read_thread, read_thread_with, ProcessSample, Scratch, Snapshot, ThreadFiles,
    ThreadSample,
};
use crate::{Pid, ProcFs};

/// Which threads a [`Sampler`] reads less often ("cold" threads) and how often it reads them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ColdThreads {
    /// A thread goes cold after this many ticks in which it did not run (until then it is read
    /// every tick its process is descended into).
    pub after: u64,
    /// A cold thread is read every this many ticks (at 1 every tick), at a turn spread by its tid
    /// so that the cold threads of a process are not all read in the same tick; a turn that falls
    /// on a tick its process was not descended into is taken at the next descent.
    pub every: u64,
}

impl ColdThreads {
    /// What the native host uses (chosen from measurements: `docs/design/host-cost.md`).
    pub const DEFAULT: Self = Self { after: 3, every: 8 };

    /// The tick a thread read at `tick`, that last ran at `ran_tick`, is read next.
    fn next_read(self, tick: u64, ran_tick: u64, tid: Pid) -> u64 {
        // A thread that ran in this tick is hot whatever `after` says (0 would make every thread cold).
        if tick + 1 - ran_tick.min(tick) <= self.after.max(1) {
            return tick + 1;
        }
        let every = self.every.max(1);
        tick + every - (tick + u64::from(tid)) % every
    }
}

/// A process's CPU time (clock ticks, as its `stat` gives it) that the threads read since account
/// for, beyond which the cold threads are all read at once: the `stat` figures are the thread
/// group's exact run time truncated to ticks, user and system separately, so over any span they
/// may differ from the run time the threads' `schedstat` show by up to (not including) two ticks
/// either way. More than that is run time of threads not read (or of threads that exited).
pub const UNEXPLAINED_TICKS: u64 = 2;

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
    /// Read threads that have not run for a while less often (see [`Sampler::cold_threads`]).
    cold: Option<ColdThreads>,
    /// Snapshots taken so far.
    tick: u64,
    /// Ticks in which a process's unexplained CPU time had all its cold threads read at once.
    cold_sweeps: u64,
}

#[derive(Debug)]
struct ProcCache {
    starttime: u64,
    role: Role,
    threads: Vec<ThreadCache>,
    /// The process's own utime + stime (all its threads) at the last tick.
    cpu_ticks: u64,
    /// The process's run time (from `cpu_ticks`) since its threads were last all read, minus the
    /// run time the threads read since then showed: what threads not read since did (plus up to
    /// two ticks of truncation either way).
    unexplained_ns: i64,
}

#[derive(Debug)]
struct ThreadCache {
    sample: ThreadSample,
    schedstat: Option<File>,
    /// `stat`/`status`/`io` kept open once the thread ran in two ticks in a row (an audio thread
    /// runs every tick; most threads of a browser never do).
    files: Option<ThreadFiles>,
    /// It ran since the read before its last one.
    ran: bool,
    /// When it was last read (its process's `at_ns` then): the start of its next figures' span.
    read_at_ns: u64,
    /// The tick it was last read in.
    read_tick: u64,
    /// The last tick it was seen to have run in (or was first listed in).
    ran_tick: u64,
    /// The tick from which it is due to be read again.
    next_read: u64,
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
            cold: None,
            tick: 0,
            cold_sweeps: 0,
        }
    }

    /// Reads threads that have not run for a while only at their turn (see [`ColdThreads`]), in
    /// the processes it descends into; `None` (the default) reads every thread each time. A cold
    /// thread that starts running is read within `every` ticks of its process's descents, and at
    /// once when its process's CPU time moved by [`UNEXPLAINED_TICKS`] or more beyond what the
    /// threads read account for; from then on it is read every tick until it has been idle for
    /// `after` ticks again. Its figures then cover the span since its last read
    /// ([`crate::ThreadRates::window_ms`]).
    pub fn cold_threads(mut self, cold: Option<ColdThreads>) -> Self {
        self.cold = cold;
        self
    }

    /// Ticks so far in which a process's cold threads were all read at once because its CPU time
    /// moved by more than the threads read account for (for tests and benchmarks).
    pub fn cold_sweeps(&self) -> u64 {
        self.cold_sweeps
    }

    /// Reads a process's own `stat` first and descends into its threads only when its CPU time
    /// (utime + stime of the whole thread group, in clock ticks) moved since the last tick and its
    /// thread count did not change: a browser's thousands of idle threads then cost one read per
    /// process, not one per thread. The price: a process that used less than one clock tick
    /// (10 ms) since the last tick shows no thread activity in that tick (its threads' counters
    /// are carried over with the time of their last read); what they did is counted at the next
    /// descent, as rates over the time since that read ([`crate::ThreadRates::window_ms`]).
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
        self.tick += 1;
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
        let stat = s.process_stat(pid)?;
        if self
            .procs
            .get(&pid)
            .is_some_and(|c| c.starttime != stat.starttime)
        {
            self.forget(pid); // pid reused
        }
        if let std::collections::hash_map::Entry::Vacant(e) = self.procs.entry(pid) {
            e.insert(ProcCache {
                starttime: stat.starttime,
                role: s.role(pid, &stat.comm),
                threads: Vec::new(),
                cpu_ticks: u64::MAX,
                unexplained_ns: 0,
            });
        }
        let tick_ns = 1_000_000_000 / self.fs.clk_tck().max(1);
        let at = ReadAt {
            tick: self.tick,
            at_ns,
            tick_ns,
            cold: self.cold,
        };
        let mut open_fds = self.open_fds;
        let budget = Arc::clone(&self.budget);
        let mut counts = ReadCounts::default();
        let skip_idle = self.skip_idle;
        let cache = self.procs.get_mut(&pid)?;

        let cpu_ticks = stat.utime.saturating_add(stat.stime);
        let mut relist = cache.threads.len() as u64 != stat.num_threads;
        if cache.cpu_ticks != u64::MAX {
            let moved = cpu_ticks.saturating_sub(cache.cpu_ticks);
            cache.unexplained_ns = cache
                .unexplained_ns
                .saturating_add(ns_i64(moved.saturating_mul(tick_ns)));
        }
        let idle = skip_idle && !relist && cache.cpu_ticks == cpu_ticks;
        cache.cpu_ticks = cpu_ticks;
        if !idle {
            // The threads due (all of them without cold threads); then, if the process ran more
            // than those account for, the rest.
            let mut sweep = at.cold.is_none();
            loop {
                let mut i = 0;
                while i < cache.threads.len() {
                    let tc = &mut cache.threads[i];
                    if tc.read_tick == at.tick || !(sweep || at.tick >= tc.next_read) {
                        i += 1;
                        continue;
                    }
                    match read_cached(pid, tc, s, &budget, &mut open_fds, at, &mut counts) {
                        Some(ns) => {
                            cache.unexplained_ns = cache.unexplained_ns.saturating_sub(ns);
                            i += 1;
                        }
                        None => {
                            // Gone (or a reused tid): drop it and list the task dir again.
                            let fds = cache.threads.swap_remove(i).fds();
                            open_fds -= fds;
                            budget.give(fds);
                            relist = true;
                        }
                    }
                }
                let unread = cache.threads.iter().any(|t| t.read_tick != at.tick);
                if sweep || !unread || cache.unexplained_ns < ns_i64(UNEXPLAINED_TICKS * tick_ns) {
                    break;
                }
                sweep = true;
                self.cold_sweeps += 1;
            }
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
                counts.full += 1;
                // Born since the last listing: all its run time is in the process's CPU time
                // since then.
                cache.unexplained_ns = cache
                    .unexplained_ns
                    .saturating_sub(ns_i64(run_ns(&sample, tick_ns)));
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
                    read_at_ns: at.at_ns,
                    read_tick: at.tick,
                    ran_tick: at.tick,
                    next_read: at.tick + 1,
                });
            }
        }
        if cache.threads.iter().all(|t| t.read_tick == at.tick) {
            // Every thread read now: what is left is exited threads' last run time and
            // truncation, not anyone's to find.
            cache.unexplained_ns = 0;
        }
        // Nothing below minus the truncation: a cold thread can only add to it.
        cache.unexplained_ns = cache
            .unexplained_ns
            .max(-ns_i64(UNEXPLAINED_TICKS * tick_ns));
        cache.threads.sort_unstable_by_key(|t| t.sample.tid);
        let threads = cache
            .threads
            .iter()
            .map(|t| {
                let mut sample = t.sample.clone();
                sample.read_at_ns = (t.read_tick != at.tick).then_some(t.read_at_ns);
                sample
            })
            .collect();
        let role = cache.role;
        self.open_fds = open_fds;
        self.last_full_reads += counts.full;
        self.last_thread_reads += counts.schedstat;
        Some(stat.into_sample(pid, role, at_ns, threads))
    }
}

/// The tick a process is read in.
#[derive(Debug, Clone, Copy)]
struct ReadAt {
    tick: u64,
    /// The process's `at_ns` in this tick.
    at_ns: u64,
    /// Nanoseconds per clock tick of `utime`/`stime`.
    tick_ns: u64,
    cold: Option<ColdThreads>,
}

/// Reads of one tick.
#[derive(Debug, Default)]
struct ReadCounts {
    /// `schedstat` reads.
    schedstat: usize,
    /// Threads whose `stat`/`status`/`io` were read.
    full: usize,
}

fn ns_i64(ns: u64) -> i64 {
    i64::try_from(ns).unwrap_or(i64::MAX)
}

/// A thread's run time so far: `schedstat`, or its clock ticks where there are no schedstats.
fn run_ns(t: &ThreadSample, tick_ns: u64) -> u64 {
    t.run_time_ns
        .unwrap_or_else(|| t.utime.saturating_add(t.stime).saturating_mul(tick_ns))
}

/// Reads a cached thread: its `schedstat`, and its other files if it ran. The run time it shows
/// since its last read (ns), or `None` when it is gone or its tid now belongs to another thread.
fn read_cached(
    pid: Pid,
    tc: &mut ThreadCache,
    s: &mut Scratch,
    budget: &FdBudget,
    open_fds: &mut usize,
    at: ReadAt,
    counts: &mut ReadCounts,
) -> Option<i64> {
    let tid = tc.sample.tid;
    counts.schedstat += 1;
    let run = match &tc.schedstat {
        Some(f) => s
            .pread(f)
            .and_then(|raw| parse_schedstat(&text(raw)))
            .map(|x| x.run_time_ns),
        None => s.run_time_ns(pid, tid),
    };
    let unchanged = run.is_some() && run == tc.sample.run_time_ns;
    let mut ran_ns = 0;
    if !unchanged {
        counts.full += 1;
        if tc.ran && tc.files.is_none() && budget.try_take(ThreadFiles::MAX) {
            tc.files = ThreadFiles::open(pid, tid, s);
            let kept = tc.files.as_ref().map_or(0, ThreadFiles::count);
            budget.give(ThreadFiles::MAX - kept);
            *open_fds += kept;
        }
        match read_thread_with(pid, tid, s, run, tc.files.as_ref()) {
            Some(t) if t.starttime == tc.sample.starttime => {
                ran_ns = run_ns(&t, at.tick_ns).saturating_sub(run_ns(&tc.sample, at.tick_ns));
                tc.sample = t;
            }
            _ => return None,
        }
    }
    tc.ran = !unchanged;
    tc.read_at_ns = at.at_ns;
    tc.read_tick = at.tick;
    if tc.ran {
        tc.ran_tick = at.tick;
    }
    tc.next_read = match at.cold {
        Some(cold) => cold.next_read(at.tick, tc.ran_tick, tid),
        None => at.tick + 1,
    };
    Some(ns_i64(ran_ns))
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
        assert!(r.processes[0].rates.cpu_pct > 0.0, "{:?}", r.processes[0]);
        let t41 = r.processes[0].threads.iter().find(|t| t.tid == 41).unwrap();
        assert_eq!(t41.rates.run_time_ns, Some(30_000_000));
    }
}
