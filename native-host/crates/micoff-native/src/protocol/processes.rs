//! `processes`: the browser's process tree and the audio server's processes, as the wire carries
//! them; the pid rule every request with pids follows.

use serde::{Deserialize, Serialize};

/// The browser families (`chromium`, `firefox`), micoff-proc's definition.
pub use micoff_proc::BrowserFamily;
use micoff_proc::Role;

pub const MAX_PID: u32 = i32::MAX as u32;

/// Longest `cmdline` summary on the wire (Chromium children carry kilobytes of flags).
pub const CMDLINE_SUMMARY_CHARS: usize = 160;

/// micoff-proc's [`micoff_proc::ProcessInfo`] on the wire: the command line shortened to a summary.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessInfo {
    pub pid: u32,
    /// 0 when there is none.
    pub ppid: u32,
    pub comm: String,
    /// Open set (PROTOCOL.md, "Roles"; unknown strings read as `other`).
    pub role: Role,
    pub family: Option<BrowserFamily>,
    /// At most [`CMDLINE_SUMMARY_CHARS`] characters of the command line (ends with `…` when cut).
    pub cmdline: String,
}

impl From<&micoff_proc::ProcessInfo> for ProcessInfo {
    fn from(p: &micoff_proc::ProcessInfo) -> Self {
        Self {
            pid: p.pid,
            ppid: p.ppid,
            comm: p.comm.clone(),
            role: p.role,
            family: p.family,
            cmdline: p.cmdline_summary(CMDLINE_SUMMARY_CHARS),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BrowserKind {
    Chromium,
    Firefox,
    Unknown,
}

impl From<Option<BrowserFamily>> for BrowserKind {
    fn from(f: Option<BrowserFamily>) -> Self {
        match f {
            Some(BrowserFamily::Chromium) => Self::Chromium,
            Some(BrowserFamily::Firefox) => Self::Firefox,
            None => Self::Unknown,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BrowserSource {
    /// Found by walking up from the host's parent process.
    Parent,
    /// Given as `browser_pid`.
    Explicit,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BrowserRef {
    pub pid: u32,
    pub family: BrowserKind,
    pub source: BrowserSource,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Processes {
    pub browser: Option<BrowserRef>,
    pub processes: Vec<ProcessInfo>,
    pub audio_server: Vec<ProcessInfo>,
    /// Processes of the tree left out (from its end: the deepest) to fit the reply into one frame.
    #[serde(default)]
    pub processes_omitted: u64,
}

/// A pid a request may name: 1..=[`MAX_PID`].
pub(super) fn validate_pid(pid: u32) -> Result<(), String> {
    if pid == 0 || pid > MAX_PID {
        return Err(format!("pid {pid} is out of range 1..={MAX_PID}"));
    }
    Ok(())
}
