//! The one restart micoff offers itself: ending a Chromium-family audio service that has no
//! stream open, so the browser starts a new one that connects with pipewire-pulse's current
//! rules. Found in /proc, and only this user's and this audio server's.

use std::fs;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::error::LatencyError;
use super::proc::{descends_from, server_socket_of};
use crate::protocol::{AudioServerInfo, AudioStream, Browser};

/// The command-line switch of Chromium's audio service process.
pub const AUDIO_SERVICE_SWITCH: &str = "--utility-sub-type=audio.mojom.AudioService";

/// A Chromium-family audio service process.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AudioService {
    pub pid: u32,
    pub browser: Browser,
    /// Streams of this process open at the server (ending it would cut them).
    pub open_streams: Vec<u32>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RestartResult {
    pub dry_run: bool,
    /// Audio services ended (or that would be): the browser starts a new one when audio is next
    /// used, which connects with the server's current rules.
    pub ended: Vec<AudioService>,
    /// Audio services left running because they have streams open.
    pub kept: Vec<AudioService>,
    pub message: String,
}

/// The browser an audio service belongs to, from its binary's name.
pub(super) fn browser_of_exe(exe: &Path) -> Option<Browser> {
    let name = exe.file_name()?.to_str()?;
    Browser::ALL
        .into_iter()
        .filter(|b| *b != Browser::Firefox)
        .find(|b| b.binaries().any(|n| n == name))
}

/// This user's Chromium-family audio service processes under `proc_root`, of `browsers` (all
/// Chromium-family ones when empty).
pub fn audio_services(proc_root: &Path, browsers: &[Browser]) -> Vec<(u32, Browser)> {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    let mut found = Vec::new();
    let Ok(dir) = fs::read_dir(proc_root) else {
        return found;
    };
    for e in dir.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        let base = e.path();
        if fs::metadata(&base).map(|m| m.uid()).ok() != Some(me) {
            continue;
        }
        let Ok(cmdline) = fs::read(base.join("cmdline")) else {
            continue;
        };
        // Chromium's children rewrite their command line as one space-separated title.
        let text = String::from_utf8_lossy(&cmdline);
        let args: Vec<&str> = text.split(['\0', ' ']).filter(|a| !a.is_empty()).collect();
        if !args.contains(&AUDIO_SERVICE_SWITCH) {
            continue;
        }
        let Some(browser) = fs::read_link(base.join("exe"))
            .ok()
            .and_then(|exe| browser_of_exe(&exe))
            .or_else(|| args.first().and_then(|a| browser_of_exe(Path::new(a))))
        else {
            continue;
        };
        if browsers.is_empty() || browsers.contains(&browser) {
            found.push((pid, browser));
        }
    }
    found.sort_unstable();
    found
}

/// Ends the browsers' audio services that use this server (`info`) and have none of its
/// `streams` open (SIGTERM by pid); keeps the others and says why. With `browser_pid`, only that
/// browser's. The caller asks the server first: without it, nothing can be told.
pub fn restart_audio_services(
    info: &AudioServerInfo,
    streams: &[AudioStream],
    browsers: &[Browser],
    browser_pid: Option<u32>,
    dry_run: bool,
) -> Result<RestartResult, LatencyError> {
    // Only audio services that talk to this server (by the socket their environment names):
    // another session's browser is none of our business.
    let Some(ours) = info.server.socket_path.clone() else {
        return Err(LatencyError::ServerUnavailable(
            "the audio server is not on a local socket: cannot tell which audio services use it"
                .into(),
        ));
    };
    let mut ended = Vec::new();
    let mut kept = Vec::new();
    for (pid, browser) in audio_services(Path::new("/proc"), browsers) {
        if browser_pid.is_some_and(|b| !descends_from(pid, b)) {
            continue;
        }
        if server_socket_of(pid).as_deref() != Some(ours.as_str()) {
            continue;
        }
        let open_streams: Vec<u32> = streams
            .iter()
            .filter(|s| s.application_process_id == Some(pid))
            .map(|s| s.index)
            .collect();
        let service = AudioService {
            pid,
            browser,
            open_streams,
        };
        if !service.open_streams.is_empty() {
            kept.push(service);
            continue;
        }
        if !dry_run {
            // SAFETY: kill has no memory preconditions; the pid was just read from /proc and
            // checked to be this user's audio service.
            let rc = unsafe { libc::kill(pid as libc::pid_t, libc::SIGTERM) };
            if rc != 0 {
                let e = std::io::Error::last_os_error();
                if e.raw_os_error() != Some(libc::ESRCH) {
                    return Err(LatencyError::Failed(format!("cannot end pid {pid}: {e}")));
                }
            }
        }
        ended.push(service);
    }
    let mut lines = Vec::new();
    for s in &ended {
        lines.push(format!(
            "{} {}'s audio service (pid {}); the browser starts a new one when audio is next used",
            if dry_run { "would end" } else { "ended" },
            s.browser.name(),
            s.pid
        ));
    }
    for s in &kept {
        lines.push(format!(
            "kept {}'s audio service (pid {}): stream(s) {} open, ending it would cut them; \
             run this again after the call",
            s.browser.name(),
            s.pid,
            s.open_streams
                .iter()
                .map(|i| format!("#{i}"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if ended.is_empty() && kept.is_empty() {
        lines.push(format!(
            "no Chromium-family audio service using the audio server at {ours} is running"
        ));
    }
    Ok(RestartResult {
        dry_run,
        ended,
        kept,
        message: lines.join("\n"),
    })
}
