//! micoff-proc: per-thread CPU of the browser and the audio server, read from `/proc`; synchronous
//! std code (the host calls it from `spawn_blocking`). Module map: [`fs`] ([`ProcFs`], an
//! injectable proc root, cheap reads, [`Error`]); [`parse`] (text in, no I/O); [`role`] ([`Role`],
//! [`BrowserFamily`]); [`sample`] ([`Snapshot`], [`ProcFs::snapshot`]); [`sampler`] ([`Sampler`],
//! the periodic cheap one); [`rates`] ([`rates()`], two snapshots to a [`CpuReport`]: pure);
//! [`tree`] ([`ProcessInfo`], the browser above the host); [`audio`] (the PulseAudio socket and its
//! owner); [`Targets`] (what to watch: [`ProcFs::default_targets`], [`ProcFs::browser_targets`]).
//! Use: `ProcFs::system().default_targets(parent, &env_map())`, then `sample_over(pids, window)`.

pub mod audio;
pub mod fs;
pub mod parse;
pub mod rates;
pub mod role;
pub mod sample;
pub mod sampler;
pub mod tree;

use std::collections::HashMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use audio::{env_map, pulse_socket_candidates, pulse_socket_path};
pub use fs::{Error, ProcFs};
pub use rates::{rates, CpuReport, ProcessRates, Rates, RoleTotals, ThreadRates};
pub use role::{browser_family_of_name, BrowserFamily, Role};
pub use sample::{monotonic_ns, ProcessSample, Snapshot, ThreadSample};
pub use sampler::{ColdThreads, FdBudget, Sampler};
pub use tree::ProcessInfo;

/// A process or thread id.
pub type Pid = u32;

/// The default set of processes to watch: the browser's tree and the audio server.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Targets {
    /// The browser's main process, when one was found.
    pub browser: Option<ProcessInfo>,
    /// The browser's tree, root first (empty without a browser).
    pub browser_tree: Vec<ProcessInfo>,
    /// The audio server's process(es).
    pub audio_server: Vec<ProcessInfo>,
}

impl Targets {
    /// All pids, browser tree first, without duplicates.
    pub fn pids(&self) -> Vec<Pid> {
        let mut out: Vec<Pid> = Vec::new();
        for p in self.browser_tree.iter().chain(&self.audio_server) {
            if !out.contains(&p.pid) {
                out.push(p.pid);
            }
        }
        out
    }
}

impl ProcFs {
    /// The browser above `start_pid` (pass the host's parent) with its whole tree, and the audio
    /// server's processes as seen from `env`.
    ///
    /// It lists the processes (one `stat` read each) once for both lookups, and not at all when
    /// there is neither a browser above `start_pid` nor a listening socket: this runs every few
    /// seconds for the life of a `cpu` subscription.
    pub fn default_targets(&self, start_pid: Pid, env: &HashMap<String, String>) -> Targets {
        let browser = self.find_browser_ancestor(start_pid);
        let listening = self.listening_sockets(env);
        if browser.is_none() && listening.is_empty() {
            return Targets::default();
        }
        let all = self.all_parents().unwrap_or_default();
        let browser_tree = match &browser {
            Some(b) => self.process_tree_in(&all, b.pid),
            None => Vec::new(),
        };
        Targets {
            browser,
            browser_tree,
            audio_server: self.audio_server_processes_in(&all, &listening),
        }
    }

    /// The tree of `browser_pid` (a browser named by the caller) and the audio server's processes
    /// as seen from `env`, from one process listing: `browser` is the tree's root (`None`, and the
    /// tree empty, when `browser_pid` does not exist). An error when the processes cannot be
    /// listed.
    pub fn browser_targets(
        &self,
        browser_pid: Pid,
        env: &HashMap<String, String>,
    ) -> Result<Targets, Error> {
        let all = self.all_parents()?;
        let browser_tree = self.process_tree_in(&all, browser_pid);
        Ok(Targets {
            browser: browser_tree.first().cloned(),
            audio_server: self.audio_server_processes_in(&all, &self.listening_sockets(env)),
            browser_tree,
        })
    }

    /// Blocks for `window`: a snapshot, a sleep, a snapshot, and the rates between them.
    pub fn sample_over(&self, pids: &[Pid], window: Duration) -> CpuReport {
        let a = self.snapshot(pids);
        std::thread::sleep(window);
        let b = self.snapshot(pids);
        rates(&a, &b)
    }
}
