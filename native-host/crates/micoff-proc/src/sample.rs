//! Raw per-thread counters at one instant ([`Snapshot`]), read by [`ProcFs::snapshot`].

use std::fs::File;
use std::sync::OnceLock;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::fs::{is_out_of_fds, is_vanished_or_denied, pread_small, read_small, text, PathBuilder};
use crate::parse::{parse_cmdline, parse_io, parse_schedstat, parse_stat, parse_status_ctxt};
use crate::role::Role;
use crate::{Error, Pid, ProcFs};

/// Nanoseconds on the monotonic clock since an arbitrary, process-wide origin.
pub fn monotonic_ns() -> u64 {
    static ORIGIN: OnceLock<Instant> = OnceLock::new();
    let origin = *ORIGIN.get_or_init(Instant::now);
    u64::try_from(origin.elapsed().as_nanos()).unwrap_or(u64::MAX)
}

/// Counters of a set of processes at one instant. Rates come from two of them ([`crate::rates`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    /// Clock ticks per second of `utime`/`stime`.
    pub clk_tck: u64,
    /// Monotonic time ([`monotonic_ns`]) when the snapshot started.
    pub taken_at_ns: u64,
    pub processes: Vec<ProcessSample>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProcessSample {
    pub pid: Pid,
    pub ppid: Pid,
    pub comm: String,
    pub role: Role,
    /// Start time in clock ticks after boot: tells a reused pid from the process sampled before.
    pub starttime: u64,
    /// Monotonic time ([`monotonic_ns`]) when this process was read.
    pub at_ns: u64,
    /// The whole thread group's user/system ticks (includes threads that already exited).
    pub utime: u64,
    pub stime: u64,
    pub threads: Vec<ThreadSample>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThreadSample {
    pub tid: Pid,
    pub comm: String,
    pub starttime: u64,
    pub utime: u64,
    pub stime: u64,
    /// `schedstat` run time; `None` where the kernel has no schedstats.
    pub run_time_ns: Option<u64>,
    pub voluntary_ctxt: Option<u64>,
    pub involuntary_ctxt: Option<u64>,
    /// `io` syscr/syscw; `None` where `io` is not readable (another user's process without root).
    pub syscr: Option<u64>,
    pub syscw: Option<u64>,
    /// When these counters were read ([`monotonic_ns`]), where that is not its process's `at_ns`:
    /// a [`crate::Sampler`] that did not read this thread in this snapshot carries its last read
    /// (counters and time). `None`: read with its process.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_at_ns: Option<u64>,
}

/// Reused buffers for one snapshot: one path buffer and one read buffer for every file.
pub(crate) struct Scratch {
    pub(crate) path: PathBuilder,
    pub(crate) buf: Vec<u8>,
    /// A read failed for want of file descriptors (EMFILE/ENFILE): what was read is incomplete.
    pub(crate) exhausted: bool,
}

/// What a process's own `stat` gives its [`ProcessSample`] (and the sampler, its thread count),
/// owned: the read buffer is reused for the next file.
pub(crate) struct ProcessStat {
    pub(crate) ppid: Pid,
    pub(crate) comm: String,
    pub(crate) starttime: u64,
    pub(crate) utime: u64,
    pub(crate) stime: u64,
    pub(crate) num_threads: u64,
}

impl ProcessStat {
    /// The sample of process `pid` read at `at_ns`, with its `role` and `threads`.
    pub(crate) fn into_sample(
        self,
        pid: Pid,
        role: Role,
        at_ns: u64,
        threads: Vec<ThreadSample>,
    ) -> ProcessSample {
        ProcessSample {
            pid,
            ppid: self.ppid,
            comm: self.comm,
            role,
            starttime: self.starttime,
            at_ns,
            utime: self.utime,
            stime: self.stime,
            threads,
        }
    }
}

impl Scratch {
    pub(crate) fn new(fs: &ProcFs) -> Self {
        Self {
            path: PathBuilder::new(fs.root()),
            buf: vec![0; 4096],
            exhausted: false,
        }
    }

    /// Reads `root/<parts>` into the buffer; `None` when missing, vanished, unreadable or empty.
    pub(crate) fn read(&mut self, parts: &[&dyn std::fmt::Display]) -> Option<&[u8]> {
        let path = self.path.at(parts);
        match read_small(path, &mut self.buf) {
            Ok(0) => None,
            Ok(n) => Some(&self.buf[..n]),
            Err(e) => {
                self.exhausted |= is_out_of_fds(&e);
                if !is_vanished_or_denied(&e) {
                    tracing::debug!(path = %path.display(), error = %e, "proc read failed");
                }
                None
            }
        }
    }

    /// Reads a kept-open `/proc` file from its start into the buffer; `None` once its task is
    /// gone (ESRCH), or when it reads empty.
    pub(crate) fn pread(&mut self, f: &File) -> Option<&[u8]> {
        match pread_small(f, &mut self.buf) {
            Ok(0) | Err(_) => None,
            Ok(n) => Some(&self.buf[..n]),
        }
    }

    /// The role of `pid`, from its comm and its command line.
    pub(crate) fn role(&mut self, pid: Pid, comm: &str) -> Role {
        match self.read(&[&pid, &"cmdline"]) {
            Some(raw) => Role::classify(comm, &parse_cmdline(raw)),
            // Kernel threads and zombies have an empty command line.
            None => Role::classify(comm, &[]),
        }
    }

    /// The process's own `stat`, parsed and owned; `None` when it vanished or is unreadable.
    pub(crate) fn process_stat(&mut self, pid: Pid) -> Option<ProcessStat> {
        let raw = self.read(&[&pid, &"stat"])?;
        let t = text(raw);
        let st = parse_stat(&t)?;
        Some(ProcessStat {
            ppid: st.ppid,
            comm: st.comm.to_owned(),
            starttime: st.starttime,
            utime: st.utime,
            stime: st.stime,
            num_threads: st.num_threads,
        })
    }

    /// The thread ids of `pid` (its `task` dir), sorted, into `tids`; `None` when it vanished.
    pub(crate) fn task_ids(&mut self, pid: Pid, tids: &mut Vec<Pid>) -> Option<()> {
        let rd = match std::fs::read_dir(self.path.at(&[&pid, &"task"])) {
            Ok(rd) => rd,
            Err(e) => {
                self.exhausted |= is_out_of_fds(&e);
                return None;
            }
        };
        tids.clear();
        tids.extend(
            rd.filter_map(|e| e.ok())
                .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<Pid>().ok())),
        );
        tids.sort_unstable();
        Some(())
    }

    /// The thread's on-CPU time from its `schedstat` (`None` without schedstats or once gone).
    pub(crate) fn run_time_ns(&mut self, pid: Pid, tid: Pid) -> Option<u64> {
        self.read(&[&pid, &"task", &tid, &"schedstat"])
            .and_then(|raw| parse_schedstat(&text(raw)))
            .map(|x| x.run_time_ns)
    }
}

impl ProcFs {
    /// [`ProcFs::snapshot`], or [`Error::OutOfFds`] when the program ran out of file descriptors
    /// while taking it (then what is missing may not be gone at all).
    pub fn try_snapshot(&self, pids: &[Pid]) -> Result<Snapshot, Error> {
        let mut exhausted = false;
        let snapshot = self.snapshot_with(pids, &mut exhausted);
        if exhausted {
            return Err(Error::OutOfFds);
        }
        Ok(snapshot)
    }

    /// Reads the counters of `pids` and all their threads. Processes and threads that vanish (or
    /// cannot be read) are left out silently; duplicate pids are read once.
    pub fn snapshot(&self, pids: &[Pid]) -> Snapshot {
        self.snapshot_with(pids, &mut false)
    }

    fn snapshot_with(&self, pids: &[Pid], exhausted: &mut bool) -> Snapshot {
        let mut sorted: Vec<Pid> = pids.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        let mut scratch = Scratch::new(self);
        let mut tids: Vec<Pid> = Vec::with_capacity(64);
        let taken_at_ns = monotonic_ns();
        let mut processes = Vec::with_capacity(sorted.len());
        for &pid in &sorted {
            if let Some(p) = self.read_process(pid, &mut scratch, &mut tids) {
                processes.push(p);
            }
        }
        *exhausted = scratch.exhausted;
        Snapshot {
            clk_tck: self.clk_tck(),
            taken_at_ns,
            processes,
        }
    }

    fn read_process(
        &self,
        pid: Pid,
        s: &mut Scratch,
        tids: &mut Vec<Pid>,
    ) -> Option<ProcessSample> {
        let at_ns = monotonic_ns();
        let stat = s.process_stat(pid)?;
        let role = s.role(pid, &stat.comm);
        s.task_ids(pid, tids)?;
        let mut threads = Vec::with_capacity(tids.len());
        for &tid in tids.iter() {
            if let Some(t) = read_thread(pid, tid, s) {
                threads.push(t);
            }
        }
        Some(stat.into_sample(pid, role, at_ns, threads))
    }
}

pub(crate) fn read_thread(pid: Pid, tid: Pid, s: &mut Scratch) -> Option<ThreadSample> {
    read_thread_with(pid, tid, s, None, None)
}

/// A thread's `stat`, `status` and `io`, kept open by the sampler for threads that keep running
/// (`pread` at 0 regenerates a `/proc` file; opening it costs more than reading it). `io` is `None`
/// where it cannot be opened (another user's process).
#[derive(Debug)]
pub(crate) struct ThreadFiles {
    pub(crate) stat: File,
    pub(crate) status: File,
    pub(crate) io: Option<File>,
}

impl ThreadFiles {
    /// The most fds one holds.
    pub(crate) const MAX: usize = 3;

    pub(crate) fn open(pid: Pid, tid: Pid, s: &mut Scratch) -> Option<Self> {
        let mut open = |name: &str| File::open(s.path.at(&[&pid, &"task", &tid, &name])).ok();
        Some(Self {
            stat: open("stat")?,
            status: open("status")?,
            io: open("io"),
        })
    }

    /// How many fds this holds.
    pub(crate) fn count(&self) -> usize {
        2 + usize::from(self.io.is_some())
    }
}

/// [`read_thread`], with the `schedstat` run time when the caller has just read it (the sampler,
/// by its kept-open fd or by path): one file fewer to open per thread that ran. `None` reads it.
/// With `files`, `stat`/`status`/`io` are read through those fds instead of by path.
pub(crate) fn read_thread_with(
    pid: Pid,
    tid: Pid,
    s: &mut Scratch,
    run_time_ns: Option<u64>,
    files: Option<&ThreadFiles>,
) -> Option<ThreadSample> {
    let (comm, starttime, utime, stime) = {
        let raw = match files {
            Some(f) => s.pread(&f.stat)?,
            None => s.read(&[&pid, &"task", &tid, &"stat"])?,
        };
        let t = text(raw);
        let st = parse_stat(&t)?;
        (st.comm.to_owned(), st.starttime, st.utime, st.stime)
    };
    let run_time_ns = run_time_ns.or_else(|| s.run_time_ns(pid, tid));
    let ctxt = match files {
        Some(f) => s.pread(&f.status),
        None => s.read(&[&pid, &"task", &tid, &"status"]),
    }
    .and_then(|raw| parse_status_ctxt(&text(raw)));
    let io = match files {
        Some(ThreadFiles { io: Some(io), .. }) => s.pread(io),
        Some(_) => None,
        None => s.read(&[&pid, &"task", &tid, &"io"]),
    }
    .and_then(|raw| parse_io(&text(raw)));
    Some(ThreadSample {
        tid,
        comm,
        starttime,
        utime,
        stime,
        run_time_ns,
        voluntary_ctxt: ctxt.map(|c| c.voluntary),
        involuntary_ctxt: ctxt.map(|c| c.involuntary),
        syscr: io.map(|i| i.syscr),
        syscw: io.map(|i| i.syscw),
        read_at_ns: None,
    })
}
