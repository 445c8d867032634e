//! The audio server's processes: the process holding the PulseAudio socket (PulseAudio itself or
//! pipewire-pulse) and, for pipewire-pulse, the `pipewire`/`wireplumber` daemons of the same user.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use micoff_audio_server::ServerEnv;

use crate::fs::text;
use crate::parse::{parse_net_unix_listeners, parse_socket_link, parse_status_uid};
use crate::role::Role;
use crate::sample::Scratch;
use crate::tree::ProcessInfo;
use crate::{Pid, ProcFs};

/// The process environment as a map (non-UTF-8 values are converted lossily).
pub fn env_map() -> HashMap<String, String> {
    std::env::vars_os()
        .map(|(k, v)| {
            (
                k.to_string_lossy().into_owned(),
                v.to_string_lossy().into_owned(),
            )
        })
        .collect()
}

/// Where libpulse would look for the server's unix socket, in its order (micoff-audio-server's
/// resolver over `env`: `PULSE_SERVER`'s unix entries when it is set, else client.conf's
/// `default-server`'s, else the runtime dir's socket and the system-wide one).
pub fn pulse_socket_candidates(env: &HashMap<String, String>) -> Vec<PathBuf> {
    micoff_audio_server::socket_candidates(&ServerEnv::from_map(env))
}

/// The first socket candidate (see [`pulse_socket_candidates`]).
pub fn pulse_socket_path(env: &HashMap<String, String>) -> Option<PathBuf> {
    pulse_socket_candidates(env).into_iter().next()
}

impl ProcFs {
    /// Inodes of the listening unix sockets bound to `path` (from `<root>/net/unix`).
    pub fn listening_socket_inodes(&self, path: &Path) -> Vec<u64> {
        let Ok(raw) = std::fs::read(self.root().join("net").join("unix")) else {
            return Vec::new();
        };
        let t = text(&raw);
        let mut inodes = parse_net_unix_listeners(&t, &path.to_string_lossy());
        if inodes.is_empty() {
            // The server may have bound the socket through a symlinked directory.
            if let Ok(canon) = std::fs::canonicalize(path) {
                if canon != path {
                    inodes = parse_net_unix_listeners(&t, &canon.to_string_lossy());
                }
            }
        }
        inodes
    }

    /// Whether one of `pid`'s open fds is one of the socket `inodes` (unreadable fds are skipped).
    pub fn holds_socket(&self, pid: Pid, inodes: &[u64]) -> bool {
        let dir = self.root().join(pid.to_string()).join("fd");
        let Ok(rd) = std::fs::read_dir(&dir) else {
            return false;
        };
        rd.filter_map(|e| e.ok())
            .filter_map(|e| std::fs::read_link(e.path()).ok())
            .filter_map(|t| parse_socket_link(&t.to_string_lossy()))
            .any(|inode| inodes.contains(&inode))
    }

    /// The process holding the listening unix socket at `path`: likely servers (by comm) are
    /// checked first, then every process. `None` when nobody listens there, the fds are not ours to
    /// read, or only a service manager holds it.
    ///
    /// With socket activation (`pulseaudio.socket`, `pipewire-pulse.socket`) `systemd --user`
    /// holds the listening socket too, and until the first client connects it is the only holder:
    /// that is "the server is not running yet", not a server to sample. So a real server among the
    /// holders wins, and a service manager alone counts as nobody.
    pub fn socket_owner(&self, path: &Path) -> Option<Pid> {
        let inodes = self.listening_socket_inodes(path);
        if inodes.is_empty() {
            return None;
        }
        self.socket_owner_in(&self.all_parents().ok()?, path, &inodes)
    }

    fn socket_owner_in(
        &self,
        all: &[(Pid, Pid, String)],
        path: &Path,
        inodes: &[u64],
    ) -> Option<Pid> {
        let likely = |comm: &str| Role::classify(comm, &[]).is_audio_server();
        let (first, rest): (Vec<_>, Vec<_>) = all.iter().partition(|(_, _, comm)| likely(comm));
        let holder = first
            .into_iter()
            .chain(
                rest.into_iter()
                    .filter(|(_, _, comm)| !is_service_manager(comm)),
            )
            .map(|(pid, _, _)| *pid)
            .find(|&pid| self.holds_socket(pid, inodes));
        if holder.is_none() {
            tracing::debug!(path = %path.display(), "no server process holds the socket (not running yet, or socket-activated and idle)");
        }
        holder
    }

    /// The real uid of a process (from `status`).
    pub fn uid_of(&self, pid: Pid) -> Option<u32> {
        let mut s = Scratch::new(self);
        let raw = s.read(&[&pid, &"status"])?;
        parse_status_uid(&text(raw))
    }

    /// The PulseAudio server's processes as seen from `env`: the process holding the socket, and when
    /// that is pipewire-pulse, the `pipewire` and `wireplumber` processes of the same uid as
    /// companions. Empty when no socket owner is found.
    pub fn audio_server_processes(&self, env: &HashMap<String, String>) -> Vec<ProcessInfo> {
        // The process list only when some candidate socket is listening (the cheap check first).
        let listening = self.listening_sockets(env);
        if listening.is_empty() {
            return Vec::new();
        }
        match self.all_parents() {
            Ok(all) => self.audio_server_processes_in(&all, &listening),
            Err(_) => Vec::new(),
        }
    }

    /// The candidate sockets (see [`pulse_socket_candidates`]) someone listens on, with their
    /// inodes.
    pub(crate) fn listening_sockets(
        &self,
        env: &HashMap<String, String>,
    ) -> Vec<(PathBuf, Vec<u64>)> {
        pulse_socket_candidates(env)
            .into_iter()
            .map(|p| {
                let inodes = self.listening_socket_inodes(&p);
                (p, inodes)
            })
            .filter(|(_, inodes)| !inodes.is_empty())
            .collect()
    }

    pub(crate) fn audio_server_processes_in(
        &self,
        all: &[(Pid, Pid, String)],
        listening: &[(PathBuf, Vec<u64>)],
    ) -> Vec<ProcessInfo> {
        let Some(owner) = listening
            .iter()
            .find_map(|(p, inodes)| self.socket_owner_in(all, p, inodes))
        else {
            return Vec::new();
        };
        let Some(mut info) = self.process_info(owner) else {
            return Vec::new();
        };
        if !info.role.is_audio_server() {
            // Whoever holds the socket is the server, whatever its name.
            info.role = Role::AudioServer;
        }
        let mut out = vec![info];
        if out[0].role == Role::PipewirePulse {
            out.extend(self.pipewire_companions(all, owner));
        }
        out
    }

    /// `pipewire` and `wireplumber` processes (from the listing `all`) with the same real uid as
    /// `pid` and, where both environments can be read, the same runtime dirs (so another PipeWire
    /// instance of the same user, e.g. a private one on other sockets, is not counted as this
    /// server's: with three test rigs' daemons summed into each, a muted Firefox read 4.2 % for
    /// `pipewire` in all three configurations).
    fn pipewire_companions(&self, all: &[(Pid, Pid, String)], pid: Pid) -> Vec<ProcessInfo> {
        let uid = self.uid_of(pid);
        let dirs = self.runtime_dirs(pid);
        all.iter()
            .filter(|(p, _, comm)| *p != pid && (comm == "pipewire" || comm == "wireplumber"))
            .filter(|(p, _, _)| self.uid_of(*p) == uid)
            .filter(|(p, _, _)| match (&dirs, self.runtime_dirs(*p)) {
                (Some(a), Some(b)) => *a == b,
                _ => true,
            })
            .filter_map(|(p, _, _)| self.process_info(*p))
            .collect()
    }

    /// `PIPEWIRE_RUNTIME_DIR` and `XDG_RUNTIME_DIR` of a process (where PipeWire's sockets are), from
    /// its `environ`; None when it cannot be read.
    fn runtime_dirs(&self, pid: Pid) -> Option<(Option<String>, Option<String>)> {
        let mut s = Scratch::new(self);
        let raw = s.read(&[&pid, &"environ"])?;
        Some(parse_runtime_dirs(raw))
    }
}

/// `PIPEWIRE_RUNTIME_DIR` and `XDG_RUNTIME_DIR` from an `environ` file's NUL-separated entries.
fn parse_runtime_dirs(raw: &[u8]) -> (Option<String>, Option<String>) {
    let mut pipewire = None;
    let mut xdg = None;
    for entry in raw.split(|b| *b == 0) {
        let entry = String::from_utf8_lossy(entry);
        if let Some(v) = entry.strip_prefix("PIPEWIRE_RUNTIME_DIR=") {
            pipewire = Some(v.to_string());
        } else if let Some(v) = entry.strip_prefix("XDG_RUNTIME_DIR=") {
            xdg = Some(v.to_string());
        }
    }
    (pipewire, xdg)
}

/// Processes that hold a listening socket on a server's behalf (systemd socket activation, as
/// `systemd --user` or as pid 1, whose comm may read `init`) without being the server.
fn is_service_manager(comm: &str) -> bool {
    matches!(comm, "systemd" | "init")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    /// The resolver itself is tested in micoff-audio-server; this checks that the map is what
    /// it reads.
    #[test]
    fn socket_candidates_come_from_the_map() {
        assert_eq!(
            pulse_socket_candidates(&env(&[
                ("PULSE_SERVER", "unix:/tmp/rig/pulse.sock"),
                ("XDG_RUNTIME_DIR", "/run/user/1"),
            ])),
            vec![PathBuf::from("/tmp/rig/pulse.sock")]
        );
        assert_eq!(
            pulse_socket_path(&env(&[("XDG_RUNTIME_DIR", "/r")])),
            Some(PathBuf::from("/r/pulse/native"))
        );
        assert_eq!(pulse_socket_path(&env(&[("PULSE_SERVER", "tcp:x")])), None);
    }
}
