//! What capture latency reads of running processes in /proc: `PULSE_LATENCY_MSEC` in a
//! browser's inherited environment, when the audio server started, whether a process runs under
//! a browser, which audio server a process talks to. [`World`] is what the status computation
//! needs of it, so tests hand it a fake.

use std::collections::HashMap;
use std::fs;
use std::time::SystemTime;

use super::content::LATENCY_ENV;
use crate::protocol::AudioServerInfo;

/// What the status computation needs besides the server's lists (from /proc in real use).
pub trait World {
    /// `PULSE_LATENCY_MSEC` in the environment of `pid` (None: unset or unreadable).
    fn latency_env(&self, pid: u32) -> Option<u32>;
    /// When the audio server (pipewire-pulse itself) started.
    fn server_started(&self, info: &AudioServerInfo) -> Option<SystemTime>;
}

/// The real machine: /proc.
pub struct ProcWorld;

impl World for ProcWorld {
    fn latency_env(&self, pid: u32) -> Option<u32> {
        tree_env(pid, &[LATENCY_ENV])
            .get(LATENCY_ENV)
            .and_then(|v| v.trim().parse().ok())
    }

    fn server_started(&self, info: &AudioServerInfo) -> Option<SystemTime> {
        let comm = |pid: u32| fs::read_to_string(format!("/proc/{pid}/comm")).ok();
        let pid = info
            .pids
            .iter()
            .copied()
            .find(|p| comm(*p).is_some_and(|c| c.trim() == "pipewire-pulse"))
            .or_else(|| info.pids.first().copied())?;
        process_start(pid)
    }
}

/// `names` from the environment `pid` inherited. Chromium's zygote children reuse their
/// environment block for the process title (setproctitle), so their `/proc/<pid>/environ` no longer
/// shows it: walk up through the parents running the same binary (the browser's own processes)
/// and take the first environment that shows any of `names`.
fn tree_env(pid: u32, names: &[&str]) -> HashMap<String, String> {
    let exe = |p: u32| fs::read_link(format!("/proc/{p}/exe")).ok();
    let first = exe(pid);
    let mut p = pid;
    for _ in 0..16 {
        if let Ok(environ) = fs::read(format!("/proc/{p}/environ")) {
            let found: HashMap<String, String> = environ
                .split(|b| *b == 0)
                .filter_map(|kv| std::str::from_utf8(kv).ok())
                .filter_map(|kv| kv.split_once('='))
                .filter(|(k, _)| names.contains(k))
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .collect();
            if !found.is_empty() {
                return found;
            }
        }
        let Some(parent) = fs::read_to_string(format!("/proc/{p}/stat"))
            .ok()
            .and_then(|st| micoff_proc::parse::parse_stat(&st).map(|s| s.ppid))
        else {
            break;
        };
        if parent <= 1 || first.is_none() || exe(parent) != first {
            break;
        }
        p = parent;
    }
    HashMap::new()
}

/// Whether `pid` is `ancestor` or runs under it.
pub(super) fn descends_from(pid: u32, ancestor: u32) -> bool {
    let mut p = pid;
    for _ in 0..64 {
        if p == ancestor {
            return true;
        }
        match fs::read_to_string(format!("/proc/{p}/stat"))
            .ok()
            .and_then(|st| micoff_proc::parse::parse_stat(&st).map(|s| s.ppid))
        {
            Some(parent) if parent > 1 => p = parent,
            _ => return false,
        }
    }
    false
}

/// The unix socket `pid`'s libpulse connects to by default, from the environment it inherited,
/// resolved as every other part of micoff resolves it (micoff-audio-server).
pub(super) fn server_socket_of(pid: u32) -> Option<String> {
    let mut names = vec!["PULSE_SERVER", "PULSE_RUNTIME_PATH", "XDG_RUNTIME_DIR"];
    names.extend(micoff_audio_server::CONF_ENV);
    let env = tree_env(pid, &names);
    let env = micoff_audio_server::ServerEnv::from_map(&env);
    micoff_audio_server::first_socket(&env, |p| p.exists()).map(|p| p.display().to_string())
}

/// When `pid` started: its `starttime` (clock ticks of the boot-time clock) after the boot,
/// the boot placed on the wall clock from `CLOCK_BOOTTIME` now (exact to the tick; `/proc/stat`
/// `btime` is whole seconds, too coarse to compare with a file written a moment earlier).
fn process_start(pid: u32) -> Option<SystemTime> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let ticks = micoff_proc::parse::parse_stat(&stat)?.starttime;
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; sysconf has no preconditions.
    let (rc, hz) = unsafe {
        (
            libc::clock_gettime(libc::CLOCK_BOOTTIME, &mut ts),
            libc::sysconf(libc::_SC_CLK_TCK),
        )
    };
    if rc != 0 {
        return None;
    }
    let since_boot = std::time::Duration::new(
        u64::try_from(ts.tv_sec).ok()?,
        u32::try_from(ts.tv_nsec).ok()?,
    );
    let boot = SystemTime::now().checked_sub(since_boot)?;
    let hz = u64::try_from(hz).ok().filter(|h| *h > 0)?;
    Some(boot + std::time::Duration::from_micros(ticks * 1_000_000 / hz))
}
