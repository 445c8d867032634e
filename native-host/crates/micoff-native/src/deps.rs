//! What the request handlers need from the outside world, as small traits: the CPU sampler and
//! process walker ([`Sampler`], backed by micoff-proc) and the audio server ([`AudioServer`], backed
//! by micoff-pulse); and, as data, where the capture-latency files and the power readings are.
//! Tests hand the server fakes; `backend` holds the real implementations.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;

use crate::latency::{LatencyError, ServerView, Unreachable};
use crate::protocol::{
    AudioServerInfo, AudioStream, BrowserFamily, CpuReport, ErrorCode, HostEvent, ProcessInfo,
    Processes,
};

pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// A failure a handler turns into an error reply.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HostError {
    #[error("audio server unavailable: {0}")]
    AudioServerUnavailable(String),
    #[error("not found: {0}")]
    NotFound(String),
    #[error("not implemented: {0}")]
    NotImplemented(String),
    #[error("busy: {0}")]
    Busy(String),
    #[error("internal error: {0}")]
    Internal(String),
}

impl HostError {
    pub fn code(&self) -> ErrorCode {
        match self {
            Self::AudioServerUnavailable(_) => ErrorCode::AudioServerUnavailable,
            Self::NotFound(_) => ErrorCode::NotFound,
            Self::NotImplemented(_) => ErrorCode::NotImplemented,
            Self::Busy(_) => ErrorCode::Busy,
            Self::Internal(_) => ErrorCode::Internal,
        }
    }
}

impl From<LatencyError> for HostError {
    fn from(e: LatencyError) -> Self {
        match e {
            LatencyError::ServerUnavailable(m) => Self::AudioServerUnavailable(m),
            LatencyError::Failed(m) => Self::Internal(m),
        }
    }
}

/// CPU sampling and process naming.
pub trait Sampler: Send + Sync + 'static {
    /// The browser's process tree (`browser_pid`, else the browser that launched the host) and the
    /// audio server's process(es).
    fn processes(&self, browser_pid: Option<u32>) -> BoxFuture<Result<Processes, HostError>>;

    /// One CPU report over `window`. `pids: None` means the default set: the launching browser's
    /// tree plus the audio server.
    fn cpu_sample(
        &self,
        pids: Option<Vec<u32>>,
        window: Duration,
    ) -> BoxFuture<Result<CpuReport, HostError>>;

    /// The main processes of the running browsers (of `family`, or of every family), by pid.
    fn browsers(
        &self,
        family: Option<BrowserFamily>,
    ) -> BoxFuture<Result<Vec<ProcessInfo>, HostError>>;

    /// A stateful sampler for a `cpu` subscription (or `top`) on `pids`; `None`: the default set,
    /// which the ticker re-resolves now and then. [`cpu_reports`] drives it.
    fn cpu_ticker(self: Arc<Self>, pids: Option<Vec<u32>>) -> Box<dyn CpuTicker>;
}

/// What one tick of a [`CpuTicker`] saw.
#[derive(Debug, Clone, PartialEq)]
pub struct TickOutcome {
    /// Covering the time since the previous tick; `None` on the first (a baseline).
    pub report: Option<CpuReport>,
    /// How many of the watched processes exist now.
    pub found: usize,
}

/// A stateful CPU sampler (micoff-proc's `Sampler` in production: each tick covers the time since
/// the previous one and costs little for threads that did not run).
pub trait CpuTicker: Send + 'static {
    /// Samples now. Takes and gives back the ticker so the blocking work can own it. `Err`: this
    /// tick failed (out of file descriptors, a failed task); the next one tries again.
    fn tick(self: Box<Self>) -> BoxFuture<(Box<dyn CpuTicker>, Result<TickOutcome, HostError>)>;

    /// Watches `pids` from now on (and no longer re-resolves a default set): processes new to
    /// the set are reported from the tick after next.
    fn set_pids(&mut self, pids: Vec<u32>);

    /// A ticker on the default set looks for its processes again every `every` (instead of
    /// [`RESOLVE_EVERY`]). Nothing for explicit pids (or a ticker that never re-resolves).
    fn resolve_every(&mut self, _every: Duration) {}

    /// A ticker on the default set looks for its processes again at its next tick, whatever the
    /// time (something may have started: a capture, the audio service).
    fn resolve_at_next_tick(&mut self) {}
}

/// How often the default set of processes (the browser tree, the audio server) is looked for
/// again: renderers come and go, the audio server may restart.
pub const RESOLVE_EVERY: Duration = Duration::from_secs(5);

/// THE loop of a `cpu` subscription (production and tests alike): a baseline tick at once, then
/// one tick every `interval`, each giving
/// - [`CpuTick::Report`] when its report has something in it (processes or `gone_pids`);
/// - when it found none of its processes: [`CpuTick::Ended`] (`not_found`, the last item) for
///   explicit `pids` (a pid does not come back), [`CpuTick::Unavailable`] (`not_found`, "still
///   looking") for the default set (a browser or audio server may start);
/// - [`CpuTick::Unavailable`] with the error when the tick failed (the next one tries again).
///
/// Stops when the receiver is dropped. After a stall (suspend) it does not fire catch-up ticks.
pub fn cpu_reports(
    ticker: Box<dyn CpuTicker>,
    pids: Option<Vec<u32>>,
    interval: Duration,
) -> mpsc::Receiver<CpuTick> {
    let (tx, rx) = mpsc::channel(2);
    tokio::spawn(async move {
        let mut ticker = ticker;
        let mut next = tokio::time::Instant::now();
        loop {
            let (back, outcome) = tokio::select! {
                done = ticker.tick() => done,
                () = tx.closed() => return,
            };
            ticker = back;
            let items = tick_items(outcome, pids.as_deref());
            for item in items {
                let ended = matches!(item, CpuTick::Ended(_));
                if tx.send(item).await.is_err() || ended {
                    return;
                }
            }
            next += interval;
            tokio::select! {
                () = tokio::time::sleep_until(next) => {}
                () = tx.closed() => return,
            }
            let now = tokio::time::Instant::now();
            if next + interval < now {
                next = now;
            }
        }
    });
    rx
}

/// The end-of-subscription rule of [`cpu_reports`] for one tick (pure).
pub fn tick_items(
    outcome: Result<TickOutcome, HostError>,
    explicit: Option<&[u32]>,
) -> Vec<CpuTick> {
    let TickOutcome { report, found } = match outcome {
        Ok(o) => o,
        Err(e) => return vec![CpuTick::Unavailable(e)],
    };
    let mut items = Vec::new();
    if let Some(report) = report.filter(|r| !r.processes.is_empty() || !r.gone_pids.is_empty()) {
        items.push(CpuTick::Report(report));
    }
    if found == 0 {
        items.push(match explicit {
            Some(pids) => CpuTick::Ended(HostError::NotFound(format!(
                "none of the processes {pids:?} exists any more"
            ))),
            None => CpuTick::Unavailable(HostError::NotFound(
                "no browser above the host and no audio server process found; still looking".into(),
            )),
        });
    }
    items
}

/// One step of a `cpu` subscription (see [`cpu_reports`]).
#[derive(Debug, Clone, PartialEq)]
pub enum CpuTick {
    /// A report covering the time since the previous one.
    Report(CpuReport),
    /// No report for this interval: nothing to sample (no browser, no audio server) or the
    /// sampling failed. The producer keeps trying.
    Unavailable(HostError),
    /// The last item: nothing can be sampled any more (the explicit pids are all gone, or the
    /// sampler failed for good).
    Ended(HostError),
}

/// The audio server's view (PulseAudio or pipewire-pulse).
pub trait AudioServer: Send + Sync + 'static {
    fn server_info(&self) -> BoxFuture<Result<AudioServerInfo, HostError>>;
    fn streams(&self) -> BoxFuture<Result<Vec<AudioStream>, HostError>>;
    /// A stream of audio events (only the `audio_*` / `stream_*` kinds), starting with the current
    /// state: `audio_connected` + one `stream_added` per stream, or `audio_disconnected`.
    fn subscribe(&self) -> Result<mpsc::Receiver<HostEvent>, HostError>;
}

/// What capture latency needs of the audio server (`latency_status`, `latency_set`, `micoff-host
/// latency`): its info and, when it answered, its streams (a failed listing reads as none).
pub async fn latency_view(audio: &dyn AudioServer) -> ServerView {
    let info = audio.server_info().await;
    let streams = match &info {
        Ok(_) => audio.streams().await.unwrap_or_default(),
        Err(_) => Vec::new(),
    };
    ServerView {
        info: info.map_err(|e| Unreachable {
            error: e.to_string(),
            reason: match e {
                HostError::AudioServerUnavailable(m) => m,
                other => other.to_string(),
            },
        }),
        streams,
    }
}

/// The machine check of micoff-doctor (what makes audio cost more CPU here), for the `doctor` request.
pub trait Doctor: Send + Sync + 'static {
    /// The doctor's JSON report (`micoff-host doctor --json`).
    fn report(&self) -> BoxFuture<Result<serde_json::Value, HostError>>;
}

/// Who started the host (from its command line).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Launch {
    /// `chrome-extension://<id>/` as Chromium passed it.
    pub origin: Option<String>,
    pub extension_id: Option<String>,
    pub browser_family: Option<BrowserFamily>,
}

impl Launch {
    /// Reads the browser's arguments: `chrome-extension://<id>/` (Chromium family, possibly
    /// followed by more arguments), or `<manifest path> <extension id>` (Firefox). `None` when the
    /// arguments are not a browser's.
    pub fn from_args(args: &[String]) -> Option<Launch> {
        let first = args.first()?;
        if let Some(rest) = first.strip_prefix("chrome-extension://") {
            let id = rest.trim_end_matches('/');
            return Some(Launch {
                origin: Some(first.clone()),
                extension_id: (!id.is_empty()).then(|| id.to_owned()),
                browser_family: Some(BrowserFamily::Chromium),
            });
        }
        if let [manifest, extension_id] = args {
            if manifest.ends_with(".json") && !extension_id.starts_with('-') {
                return Some(Launch {
                    origin: None,
                    extension_id: Some(extension_id.clone()),
                    browser_family: Some(BrowserFamily::Firefox),
                });
            }
        }
        None
    }

    /// Whether the caller is micoff itself: Chromium's origin must carry
    /// [`crate::CHROME_EXTENSION_ID`] (derived from the manifest's key) or one of `local_ids` (the
    /// ids of micoff's crx copies signed with another key: micoff-install's
    /// `chromium::external::local_ids`), Firefox's second argument must be
    /// [`crate::FIREFOX_EXTENSION_ID`]. `Err` says who called and what was expected; the host then
    /// answers one `forbidden` error and exits (PROTOCOL.md, "Who may call").
    pub fn check_caller(&self, local_ids: &[String]) -> Result<(), String> {
        let mut expected = match self.browser_family {
            Some(BrowserFamily::Chromium) => vec![crate::CHROME_EXTENSION_ID],
            Some(BrowserFamily::Firefox) => vec![crate::FIREFOX_EXTENSION_ID],
            None => return Err("the caller is not a browser extension".into()),
        };
        if self.browser_family == Some(BrowserFamily::Chromium) {
            expected.extend(local_ids.iter().map(String::as_str));
        }
        let accepted = self.extension_id.as_deref().filter(|id| {
            expected.contains(id)
                && match self.browser_family {
                    // Chromium passes exactly `chrome-extension://<id>/`.
                    Some(BrowserFamily::Chromium) => {
                        self.origin.as_deref() == Some(&format!("chrome-extension://{id}/"))
                    }
                    _ => true,
                }
        });
        match accepted {
            Some(_) => Ok(()),
            None => {
                // The id is the caller's text: bounded and quoted in the message.
                Err(format!(
                    "caller {} is not micoff (this host answers only {})",
                    micoff_exit::quote(self.extension_id.as_deref().unwrap_or("")),
                    expected
                        .iter()
                        .map(|id| format!("{id:?}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
            }
        }
    }
}

/// Everything `server::run` needs besides the pipe.
#[derive(Clone)]
pub struct Deps {
    pub sampler: Arc<dyn Sampler>,
    pub audio: Arc<dyn AudioServer>,
    /// `None`: the `doctor` request answers `not_implemented`.
    pub doctor: Option<Arc<dyn Doctor>>,
    /// Where the capture-latency files are (the user's XDG folders, `$PATH`); `Err` (no home in
    /// the environment): the latency requests answer `internal` with it.
    pub latency_paths: Result<crate::latency::Paths, String>,
    /// Where `power` reads (`/sys`, `/proc`).
    pub power_roots: crate::power::Roots,
    pub launch: Launch,
    pub limits: Limits,
}

/// Per-connection limits (PROTOCOL.md, "Transport").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub max_in_flight: usize,
    pub max_subscriptions: usize,
    pub codec: crate::framing::FrameCodec,
    /// The longest one frame may take to be written: a browser that stops reading (a full pipe)
    /// ends the host instead of holding it forever.
    pub write_deadline: std::time::Duration,
    /// Once the input has ended: how long requests still running may take to answer, then how
    /// long what is left to write may take, before the host stops anyway.
    pub end_grace: std::time::Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_in_flight: 32,
            max_subscriptions: 8,
            codec: crate::framing::FrameCodec::default(),
            write_deadline: std::time::Duration::from_secs(30),
            end_grace: std::time::Duration::from_millis(200),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn recognises_browser_arguments() {
        let chrome = Launch::from_args(&args(&["chrome-extension://abc/"])).unwrap();
        assert_eq!(chrome.extension_id.as_deref(), Some("abc"));
        assert_eq!(chrome.browser_family, Some(BrowserFamily::Chromium));
        // Chrome on Windows appends --parent-window; tolerate extra arguments.
        assert!(
            Launch::from_args(&args(&["chrome-extension://abc/", "--parent-window=0"])).is_some()
        );
        let firefox = Launch::from_args(&args(&[
            "/home/u/.mozilla/native-messaging-hosts/org.micoff.host.json",
            "micoff@micoff.org",
        ]))
        .unwrap();
        assert_eq!(firefox.extension_id.as_deref(), Some("micoff@micoff.org"));
        assert_eq!(firefox.origin, None);
        assert!(Launch::from_args(&args(&["sample", "--json"])).is_none());
        assert!(Launch::from_args(&args(&[])).is_none());
    }

    fn report(processes: usize, gone: Vec<u32>) -> CpuReport {
        let mut r = CpuReport {
            window_ms: 1000.0,
            total_cpu_pct: 0.0,
            processes: vec![],
            roles: vec![],
            gone_pids: gone,
            threads_omitted: 0,
        };
        for pid in 0..processes {
            r.processes.push(micoff_proc::ProcessRates::idle(
                pid as u32 + 1,
                0,
                "p",
                micoff_proc::Role::Other,
            ));
        }
        r
    }

    fn kinds(items: &[CpuTick]) -> Vec<&'static str> {
        items
            .iter()
            .map(|t| match t {
                CpuTick::Report(_) => "report",
                CpuTick::Unavailable(_) => "unavailable",
                CpuTick::Ended(_) => "ended",
            })
            .collect()
    }

    #[test]
    fn end_of_subscription_rule() {
        let ok = |report, found| Ok(TickOutcome { report, found });
        let explicit: Option<&[u32]> = Some(&[7]);
        // The baseline tick: nothing to send while the processes are there.
        assert!(tick_items(ok(None, 1), explicit).is_empty());
        assert!(tick_items(ok(None, 1), None).is_empty());
        // A report with something in it goes out; an empty one does not.
        assert_eq!(
            kinds(&tick_items(ok(Some(report(1, vec![])), 1), None)),
            ["report"]
        );
        assert!(tick_items(ok(Some(report(0, vec![])), 1), None).is_empty());
        // Explicit pids all gone: their last report (naming them gone), then the end.
        assert_eq!(
            kinds(&tick_items(ok(Some(report(0, vec![7])), 0), explicit)),
            ["report", "ended"]
        );
        assert_eq!(kinds(&tick_items(ok(None, 0), explicit)), ["ended"]);
        // The default set may come back: unavailable, never ended.
        assert_eq!(kinds(&tick_items(ok(None, 0), None)), ["unavailable"]);
        // A failed tick (out of fds) is retried, explicit pids or not: never ended, and says why.
        for pids in [explicit, None] {
            let items = tick_items(Err(HostError::Busy("too many open files".into())), pids);
            assert_eq!(kinds(&items), ["unavailable"]);
            assert!(matches!(&items[0], CpuTick::Unavailable(e) if e.code() == ErrorCode::Busy));
        }
        let ended = tick_items(ok(None, 0), explicit);
        assert!(matches!(&ended[0], CpuTick::Ended(e) if e.code() == ErrorCode::NotFound));
    }

    /// A scripted ticker through the one loop: a baseline at once, then one tick per interval, and
    /// the loop stops after `ended`.
    #[tokio::test(start_paused = true)]
    async fn the_loop_ticks_once_per_interval_and_stops_after_the_end() {
        struct Script(
            std::collections::VecDeque<TickOutcome>,
            Arc<std::sync::Mutex<Vec<tokio::time::Instant>>>,
        );
        impl CpuTicker for Script {
            fn tick(
                mut self: Box<Self>,
            ) -> BoxFuture<(Box<dyn CpuTicker>, Result<TickOutcome, HostError>)> {
                Box::pin(async move {
                    self.1.lock().unwrap().push(tokio::time::Instant::now());
                    let next = self.0.pop_front().unwrap();
                    (self as Box<dyn CpuTicker>, Ok(next))
                })
            }
            fn set_pids(&mut self, _pids: Vec<u32>) {}
        }
        let at = Arc::new(std::sync::Mutex::new(Vec::new()));
        let script = [
            TickOutcome {
                report: None,
                found: 1,
            },
            TickOutcome {
                report: Some(report(1, vec![])),
                found: 1,
            },
            TickOutcome {
                report: Some(report(0, vec![1])),
                found: 0,
            },
        ];
        let start = tokio::time::Instant::now();
        let interval = Duration::from_millis(500);
        let mut rx = cpu_reports(
            Box::new(Script(script.into(), Arc::clone(&at))),
            Some(vec![1]),
            interval,
        );
        let mut got = Vec::new();
        while let Some(item) = rx.recv().await {
            got.push(item);
        }
        assert_eq!(kinds(&got), ["report", "report", "ended"]);
        let offsets: Vec<Duration> = at.lock().unwrap().iter().map(|t| *t - start).collect();
        assert_eq!(offsets, [Duration::ZERO, interval, interval * 2]);
    }

    #[test]
    fn a_local_id_is_accepted_from_chromium_only_and_only_as_that_exact_origin() {
        let local = "abcdefghijklmnopabcdefghijklmnop".to_owned();
        let chrome = |origin: &str, ids: &[String]| {
            Launch::from_args(&args(&[origin]))
                .unwrap()
                .check_caller(ids)
        };
        let origin = format!("chrome-extension://{local}/");
        assert!(chrome(&origin, &[]).is_err(), "not without the local id");
        assert_eq!(chrome(&origin, std::slice::from_ref(&local)), Ok(()));
        let own = format!("chrome-extension://{}/", crate::CHROME_EXTENSION_ID);
        assert_eq!(chrome(&own, std::slice::from_ref(&local)), Ok(()));
        for foreign in [
            "chrome-extension://aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/".to_owned(),
            format!("chrome-extension://{local}x/"),
            format!("chrome-extension://{local}/x/"),
        ] {
            let e = chrome(&foreign, std::slice::from_ref(&local)).unwrap_err();
            assert!(e.contains(&local), "{e}");
        }
        // Firefox's caller is micoff's add-on id only.
        let firefox = Launch::from_args(&args(&["/x/org.micoff.host.json", &local])).unwrap();
        assert!(firefox.check_caller(std::slice::from_ref(&local)).is_err());
    }

    #[test]
    fn only_micoffs_own_ids_are_accepted_callers() {
        let chrome = |origin: &str| {
            Launch::from_args(&args(&[origin]))
                .unwrap()
                .check_caller(&[])
        };
        let firefox = |id: &str| {
            Launch::from_args(&args(&["/x/org.micoff.host.json", id]))
                .unwrap()
                .check_caller(&[])
        };
        let own = format!("chrome-extension://{}/", crate::CHROME_EXTENSION_ID);
        assert_eq!(chrome(&own), Ok(()));
        assert_eq!(firefox(crate::FIREFOX_EXTENSION_ID), Ok(()));
        for foreign in [
            "chrome-extension://aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/",
            "chrome-extension:///",
            // The id as a prefix or with a suffix is not the id.
            &format!("chrome-extension://{}x/", crate::CHROME_EXTENSION_ID),
            &format!("chrome-extension://{}/x/", crate::CHROME_EXTENSION_ID),
        ] {
            assert!(chrome(foreign).is_err(), "{foreign}");
        }
        // Firefox's id is not Chrome's and the other way round.
        assert!(chrome(&format!(
            "chrome-extension://{}/",
            crate::FIREFOX_EXTENSION_ID
        ))
        .is_err());
        assert!(firefox(crate::CHROME_EXTENSION_ID).is_err());
        assert!(firefox("evil@example.org").is_err());
        assert!(Launch::default().check_caller(&[]).is_err());
    }
}
