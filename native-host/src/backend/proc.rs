//! [`ProcSampler`]: the host's [`Sampler`] on micoff-proc. All /proc reading is synchronous, so it
//! runs on tokio's blocking pool; windows are waited out with tokio timers, not thread sleeps.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use micoff_proc::{env_map, rates, ProcFs, Targets};
use tokio::sync::mpsc;

use crate::deps::{BoxFuture, CpuTick, HostError, Sampler};
use crate::protocol::{
    BrowserFamily, BrowserKind, BrowserRef, BrowserSource, CpuReport, ProcessInfo, Processes,
};

/// How often a `cpu` subscription on the default pids looks for new processes (renderers come
/// and go; the audio server may restart).
const RESOLVE_EVERY: Duration = Duration::from_secs(5);

/// CPU sampling and process discovery through a proc root (`/proc` in production).
#[derive(Debug, Clone)]
pub struct ProcSampler {
    fs: ProcFs,
    /// Where "the browser that launched the host" is looked for (the host's parent).
    start_pid: u32,
    /// The environment the audio server's socket is found from (`PULSE_SERVER`, ...).
    env: Arc<HashMap<String, String>>,
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
        }
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
                    let first = this.fs.snapshot(&pids);
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
            blocking(move || Ok(rates(&first, &fs.snapshot(&pids)))).await
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
    /// threads that ran. Default pids are re-resolved every [`RESOLVE_EVERY`]. A tick that finds
    /// none of its processes is [`CpuTick::Unavailable`] for the default pids (they may come: a
    /// browser or server that starts) and [`CpuTick::Ended`] for explicit ones (they cannot).
    fn cpu_reports(
        self: Arc<Self>,
        pids: Option<Vec<u32>>,
        interval: Duration,
    ) -> mpsc::Receiver<CpuTick> {
        let (tx, rx) = mpsc::channel(2);
        tokio::spawn(async move {
            let explicit = pids.clone();
            let resolve_every = (RESOLVE_EVERY.as_millis() / interval.as_millis().max(1)).max(1);
            let mut sampler = micoff_proc::Sampler::new(self.fs.clone(), pids.unwrap_or_default());
            let mut ticks: u128 = 0;
            let mut next = tokio::time::Instant::now();
            loop {
                if explicit.is_none() && ticks.is_multiple_of(resolve_every) {
                    let this = Arc::clone(&self);
                    match blocking(move || Ok(this.default_targets().pids())).await {
                        Ok(pids) => sampler.set_pids(pids),
                        Err(e) => tracing::warn!("resolving the default processes: {e}"),
                    }
                }
                let tick = blocking(move || {
                    let report = sampler.tick();
                    let found = sampler.last_snapshot().map_or(0, |s| s.processes.len());
                    Ok((sampler, report, found))
                })
                .await;
                let (report, found);
                (sampler, report, found) = match tick {
                    Ok(done) => done,
                    Err(e) => {
                        // The sampler's state went down with the blocking task.
                        let _ = tx.send(CpuTick::Ended(e)).await;
                        return;
                    }
                };
                // An empty report (nothing at either end) says nothing; `Unavailable` below does.
                let report = report.filter(|r| !r.processes.is_empty() || !r.gone_pids.is_empty());
                if let Some(report) = report {
                    if tx.send(CpuTick::Report(report)).await.is_err() {
                        return;
                    }
                }
                if found == 0 {
                    let item = match &explicit {
                        Some(pids) => CpuTick::Ended(HostError::NotFound(format!(
                            "none of the processes {pids:?} exists any more"
                        ))),
                        None => CpuTick::Unavailable(HostError::NotFound(
                            "no browser above the host and no audio server process found; \
                             still looking"
                                .into(),
                        )),
                    };
                    let ended = matches!(item, CpuTick::Ended(_));
                    if tx.send(item).await.is_err() || ended {
                        return;
                    }
                }
                ticks += 1;
                next += interval;
                tokio::select! {
                    () = tokio::time::sleep_until(next) => {}
                    () = tx.closed() => return,
                }
                // After a long stall (suspend), do not fire a burst of catch-up ticks.
                let now = tokio::time::Instant::now();
                if next + interval < now {
                    next = now;
                }
            }
        });
        rx
    }
}
