//! [`ProcSampler`]: the host's [`Sampler`] on micoff-proc. All /proc reading is synchronous, so it
//! runs on tokio's blocking pool; windows are waited out with tokio timers, not thread sleeps.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use micoff_proc::{env_map, rates, FdBudget, ProcFs, Targets};

use micoff_native::deps::{BoxFuture, CpuTicker, HostError, Sampler, TickOutcome, RESOLVE_EVERY};
use micoff_native::protocol::{
    BrowserFamily, BrowserKind, BrowserRef, BrowserSource, CpuReport, ProcessInfo, Processes,
};

/// CPU sampling and process discovery through a proc root (`/proc` in production).
#[derive(Debug, Clone)]
pub struct ProcSampler {
    fs: ProcFs,
    /// Where "the browser that launched the host" is looked for (the host's parent).
    start_pid: u32,
    /// The environment the audio server's socket is found from (`PULSE_SERVER`, ...).
    env: Arc<HashMap<String, String>>,
    /// The fds all of this host's samplers may keep open together.
    fds: Arc<FdBudget>,
}

impl ProcSampler {
    /// `/proc`, the host's parent process, the host's environment.
    pub fn system() -> Self {
        Self::new(
            ProcFs::system(),
            std::os::unix::process::parent_id(),
            env_map(),
        )
    }

    pub fn new(fs: ProcFs, start_pid: u32, env: HashMap<String, String>) -> Self {
        Self {
            fs,
            start_pid,
            env: Arc::new(env),
            fds: FdBudget::new(micoff_proc::sampler::DEFAULT_MAX_OPEN_FDS),
        }
    }

    /// Shares `budget` among every sampler this one starts (one per `cpu` subscription).
    pub fn with_fd_budget(mut self, budget: Arc<FdBudget>) -> Self {
        self.fds = budget;
        self
    }

    /// The launching browser's tree plus the audio server.
    fn default_targets(&self) -> Targets {
        self.fs.default_targets(self.start_pid, &self.env)
    }

    fn default_pids(&self) -> Result<Vec<u32>, HostError> {
        let pids = self.default_targets().pids();
        if pids.is_empty() {
            return Err(HostError::NotFound(
                "no browser above the host and no audio server process found; pass `pids`".into(),
            ));
        }
        Ok(pids)
    }

    fn processes_blocking(&self, browser_pid: Option<u32>) -> Result<Processes, HostError> {
        // One process listing serves the tree and the audio server.
        let (targets, source) = match browser_pid {
            Some(pid) => {
                let targets = self.fs.browser_targets(pid, &self.env).map_err(internal)?;
                if targets.browser.is_none() {
                    return Err(HostError::NotFound(format!("no process {pid}")));
                }
                (targets, BrowserSource::Explicit)
            }
            None => (self.default_targets(), BrowserSource::Parent),
        };
        let browser = targets.browser.as_ref().map(|b| BrowserRef {
            pid: b.pid,
            family: BrowserKind::from(b.family),
            source,
        });
        Ok(Processes {
            browser,
            processes: targets.browser_tree.iter().map(ProcessInfo::from).collect(),
            audio_server: targets.audio_server.iter().map(ProcessInfo::from).collect(),
            processes_omitted: 0,
        })
    }

    /// Main processes of the running browsers (of `family`, or all): micoff-proc's
    /// `running_browsers` (named like a browser and classified as its main process).
    fn browsers_blocking(
        &self,
        family: Option<BrowserFamily>,
    ) -> Result<Vec<ProcessInfo>, HostError> {
        let all = self.fs.running_browsers().map_err(internal)?;
        Ok(all
            .iter()
            .filter(|b| family.is_none() || b.family == family)
            .map(ProcessInfo::from)
            .collect())
    }
}

fn snapshot_error(e: micoff_proc::Error) -> HostError {
    match e {
        micoff_proc::Error::OutOfFds => out_of_fds(),
        other => internal(other),
    }
}

fn internal(e: impl std::fmt::Display) -> HostError {
    HostError::Internal(e.to_string())
}

/// Runs blocking /proc work on tokio's blocking pool.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, HostError> + Send + 'static,
) -> Result<T, HostError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| HostError::Internal(format!("sampler task failed: {e}")))?
}

impl Sampler for ProcSampler {
    fn processes(&self, browser_pid: Option<u32>) -> BoxFuture<Result<Processes, HostError>> {
        let this = self.clone();
        Box::pin(blocking(move || this.processes_blocking(browser_pid)))
    }

    fn cpu_sample(
        &self,
        pids: Option<Vec<u32>>,
        window: Duration,
    ) -> BoxFuture<Result<CpuReport, HostError>> {
        let this = self.clone();
        Box::pin(async move {
            let explicit = pids.is_some();
            let (pids, first) = {
                let this = this.clone();
                blocking(move || {
                    let pids = match pids {
                        Some(pids) => pids,
                        None => this.default_pids()?,
                    };
                    let first = this.fs.try_snapshot(&pids).map_err(snapshot_error)?;
                    Ok((pids, first))
                })
                .await?
            };
            if first.processes.is_empty() {
                return Err(HostError::NotFound(if explicit {
                    format!("none of the processes {pids:?} exists")
                } else {
                    "the default processes vanished".into()
                }));
            }
            tokio::time::sleep(window).await;
            let fs = this.fs.clone();
            blocking(move || {
                let second = fs.try_snapshot(&pids).map_err(snapshot_error)?;
                Ok(rates(&first, &second))
            })
            .await
        })
    }

    fn browsers(
        &self,
        family: Option<BrowserFamily>,
    ) -> BoxFuture<Result<Vec<ProcessInfo>, HostError>> {
        let this = self.clone();
        Box::pin(blocking(move || this.browsers_blocking(family)))
    }

    /// micoff-proc's stateful `Sampler`: one kept-open `schedstat` per thread, full reads only for
    /// threads that ran, processes whose CPU time did not move left alone, threads idle for a
    /// while read only at their turn (`ColdThreads::DEFAULT`), fds kept open within the host's one
    /// [`FdBudget`]. Default pids are re-resolved every [`RESOLVE_EVERY`] (or what
    /// `resolve_every` set), and at the tick after `resolve_at_next_tick`.
    fn cpu_ticker(self: Arc<Self>, pids: Option<Vec<u32>>) -> Box<dyn CpuTicker> {
        Box::new(ProcTicker {
            sampler: None,
            default: pids.is_none(),
            pids: pids.unwrap_or_default(),
            resolved_at: None,
            resolve_every: RESOLVE_EVERY,
            this: self,
        })
    }
}

/// [`ProcSampler`]'s [`CpuTicker`].
struct ProcTicker {
    this: Arc<ProcSampler>,
    /// `None` before the first tick and after a tick whose task failed (its state went with it).
    sampler: Option<micoff_proc::Sampler>,
    /// Watching the default set (re-resolved every [`RESOLVE_EVERY`]).
    default: bool,
    pids: Vec<u32>,
    /// `None`: at the next tick.
    resolved_at: Option<std::time::Instant>,
    resolve_every: Duration,
}

impl CpuTicker for ProcTicker {
    fn tick(
        mut self: Box<Self>,
    ) -> BoxFuture<(Box<dyn CpuTicker>, Result<TickOutcome, HostError>)> {
        Box::pin(async move {
            let resolve = self.default
                && self
                    .resolved_at
                    .is_none_or(|at| at.elapsed() >= self.resolve_every);
            if resolve {
                self.resolved_at = Some(std::time::Instant::now());
            }
            let this = Arc::clone(&self.this);
            let pids = self.pids.clone();
            let sampler = self.sampler.take();
            let done = blocking(move || {
                let mut sampler = sampler.unwrap_or_else(|| {
                    micoff_proc::Sampler::new(this.fs.clone(), pids)
                        .with_fd_budget(Arc::clone(&this.fds))
                        .skip_idle_processes(true)
                        .cold_threads(Some(micoff_proc::ColdThreads::DEFAULT))
                });
                if resolve {
                    sampler.set_pids(this.default_targets().pids());
                }
                let report = sampler.tick();
                let found = sampler.last_snapshot().map_or(0, |s| s.processes.len());
                Ok((sampler, report, found))
            })
            .await;
            let outcome = match done {
                Ok((sampler, report, found)) => {
                    let exhausted = sampler.fds_exhausted();
                    self.sampler = Some(sampler);
                    if exhausted {
                        // Incomplete: what is missing may well be there. Said, then retried.
                        Err(out_of_fds())
                    } else {
                        Ok(TickOutcome { report, found })
                    }
                }
                Err(e) => Err(e),
            };
            (self as Box<dyn CpuTicker>, outcome)
        })
    }

    fn resolve_every(&mut self, every: Duration) {
        self.resolve_every = every;
    }

    fn resolve_at_next_tick(&mut self) {
        self.resolved_at = None;
    }

    fn set_pids(&mut self, pids: Vec<u32>) {
        self.default = false;
        if let Some(sampler) = self.sampler.as_mut() {
            sampler.set_pids(pids.clone());
        }
        self.pids = pids;
    }
}

/// The host ran out of file descriptors: retryable (`busy`), not "the process is gone".
fn out_of_fds() -> HostError {
    HostError::Busy("too many open files; the host retries at the next interval".into())
}
