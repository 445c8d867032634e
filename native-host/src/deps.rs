//! What the request handlers need from the outside world, as small traits: the CPU sampler and
//! process walker ([`Sampler`], backed by micoff-proc) and the audio server ([`AudioServer`], backed
//! by micoff-pulse). Tests hand the server fakes; `backend` holds the real implementations.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;

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

    /// Periodic reports for a `cpu` subscription: one every `interval`, the first after one
    /// interval, each covering the time since the previous one; [`CpuTick::Unavailable`] for an
    /// interval without a report, and [`CpuTick::Ended`] as the last item when nothing can come
    /// any more. The producer stops when the receiver is dropped. The default runs `cpu_sample`
    /// back to back; the real sampler keeps state between ticks (micoff-proc's `Sampler`, much
    /// cheaper) and re-resolves the default pids now and then.
    fn cpu_reports(
        self: Arc<Self>,
        pids: Option<Vec<u32>>,
        interval: Duration,
    ) -> mpsc::Receiver<CpuTick> {
        let (tx, rx) = mpsc::channel(2);
        tokio::spawn(async move {
            let explicit = pids.is_some();
            loop {
                let report = tokio::select! {
                    r = self.cpu_sample(pids.clone(), interval) => r,
                    () = tx.closed() => return,
                };
                let (tick, failed) = match report {
                    Ok(report) => (CpuTick::Report(report), false),
                    // Explicit pids do not come back.
                    Err(e @ HostError::NotFound(_)) if explicit => {
                        let _ = tx.send(CpuTick::Ended(e)).await;
                        return;
                    }
                    Err(e) => (CpuTick::Unavailable(e), true),
                };
                if tx.send(tick).await.is_err() {
                    return;
                }
                if failed {
                    // Do not spin on a failing sampler.
                    tokio::select! {
                        () = tokio::time::sleep(interval) => {}
                        () = tx.closed() => return,
                    }
                }
            }
        });
        rx
    }
}

/// One step of a `cpu` subscription (see [`Sampler::cpu_reports`]).
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

/// The machine check of micoff-doctor (issue 5), for the `doctor` request.
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
    /// [`crate::CHROME_EXTENSION_ID`] (derived from the manifest's key), Firefox's second argument
    /// must be [`crate::FIREFOX_EXTENSION_ID`]. `Err` says who called and what was expected; the
    /// host then answers one `forbidden` error and exits (PROTOCOL.md, "Who may call").
    pub fn check_caller(&self) -> Result<(), String> {
        let expected = match self.browser_family {
            Some(BrowserFamily::Chromium) => crate::CHROME_EXTENSION_ID,
            Some(BrowserFamily::Firefox) => crate::FIREFOX_EXTENSION_ID,
            None => return Err("the caller is not a browser extension".into()),
        };
        let origin_ok = match self.browser_family {
            // Chromium passes exactly `chrome-extension://<id>/`.
            Some(BrowserFamily::Chromium) => {
                self.origin.as_deref() == Some(&format!("chrome-extension://{expected}/"))
            }
            _ => true,
        };
        match self.extension_id.as_deref() {
            Some(id) if id == expected && origin_ok => Ok(()),
            other => {
                // The id is the caller's text: bounded and debug-quoted in the message.
                let shown: String = other.unwrap_or("").chars().take(64).collect();
                Err(format!(
                    "caller {shown:?} is not micoff (this host answers only {expected:?})"
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
    pub launch: Launch,
    pub limits: Limits,
}

/// Per-connection limits (PROTOCOL.md, "Transport").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub max_in_flight: usize,
    pub max_subscriptions: usize,
    pub codec: crate::framing::FrameCodec,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_in_flight: 32,
            max_subscriptions: 8,
            codec: crate::framing::FrameCodec::default(),
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

    #[test]
    fn only_micoffs_own_ids_are_accepted_callers() {
        let chrome = |origin: &str| Launch::from_args(&args(&[origin])).unwrap().check_caller();
        let firefox = |id: &str| {
            Launch::from_args(&args(&["/x/org.micoff.host.json", id]))
                .unwrap()
                .check_caller()
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
        assert!(Launch::default().check_caller().is_err());
    }
}
