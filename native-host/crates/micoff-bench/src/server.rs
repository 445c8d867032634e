//! Finding the audio server: its socket path and the pid of the process holding it; and a look at
//! a client's file descriptors (srbchannel gives the client two eventfds).

use std::path::{Path, PathBuf};

/// The unix socket path a libpulse client would use: `--server`, else `PULSE_SERVER`, else
/// `$PULSE_RUNTIME_PATH/native`, else `$XDG_RUNTIME_DIR/pulse/native`. `None` for a TCP server.
/// `env` is injectable for tests.
pub fn socket_path(server: Option<&str>, env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let explicit = server.map(str::to_string).or_else(|| env("PULSE_SERVER"));
    if let Some(s) = explicit {
        // A server string may list several servers; take the first unix one.
        return s.split_whitespace().find_map(|part| {
            // An optional "{machine-id}" prefix names the host the server runs on.
            let part = match part.strip_prefix('{') {
                Some(rest) => rest.split_once('}').map_or(rest, |(_, p)| p),
                None => part,
            };
            if let Some(p) = part.strip_prefix("unix:") {
                Some(PathBuf::from(p))
            } else if part.starts_with('/') {
                Some(PathBuf::from(part))
            } else {
                None
            }
        });
    }
    if let Some(rt) = env("PULSE_RUNTIME_PATH") {
        return Some(Path::new(&rt).join("native"));
    }
    if let Some(rt) = env("XDG_RUNTIME_DIR") {
        return Some(Path::new(&rt).join("pulse").join("native"));
    }
    // SAFETY: getuid has no preconditions.
    let uid = unsafe { libc::getuid() };
    Some(PathBuf::from(format!("/run/user/{uid}/pulse/native")))
}

/// The pid of the process at the other end of a unix socket (SO_PEERCRED: the process that
/// created the listening socket). The fallback when micoff-proc's socket-holder scan
/// (`ProcFs::socket_owner`, right under systemd socket activation too, where SO_PEERCRED names
/// systemd) finds nobody, e.g. another user's server. Connecting makes PulseAudio log one
/// short-lived client; the bench does this once, before any measured client.
pub fn socket_peer_pid(path: &Path) -> std::io::Result<u32> {
    use std::os::fd::AsRawFd;
    let stream = std::os::unix::net::UnixStream::connect(path)?;
    let mut cred = libc::ucred {
        pid: 0,
        uid: 0,
        gid: 0,
    };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: getsockopt writes at most `len` bytes into `cred`, a properly sized ucred.
    let rc = unsafe {
        libc::getsockopt(
            stream.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            (&mut cred as *mut libc::ucred).cast(),
            &mut len,
        )
    };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    u32::try_from(cred.pid)
        .ok()
        .filter(|p| *p > 0)
        .ok_or_else(|| std::io::Error::other("no peer pid"))
}

/// How many eventfds the process holds (`anon_inode:[eventfd]` links under `<proc>/<pid>/fd`).
/// `None` when the folder cannot be read.
pub fn count_eventfds(proc_root: &Path, pid: u32) -> Option<usize> {
    let dir = std::fs::read_dir(proc_root.join(pid.to_string()).join("fd")).ok()?;
    Some(
        dir.filter_map(Result::ok)
            .filter_map(|e| std::fs::read_link(e.path()).ok())
            .filter(|target| target.as_os_str() == "anon_inode:[eventfd]")
            .count(),
    )
}

/// pipewire-pulse names itself "PulseAudio (on PipeWire x.y.z)".
pub fn is_pipewire(server_name: &str) -> bool {
    server_name.contains("PipeWire")
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn env_of(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn socket_path_resolution() {
        let none = env_of(&[]);
        assert_eq!(
            socket_path(Some("unix:/tmp/x/pulse.sock"), &none),
            Some(PathBuf::from("/tmp/x/pulse.sock"))
        );
        assert_eq!(
            socket_path(Some("{abc}unix:/a tcp:host"), &none),
            Some(PathBuf::from("/a"))
        );
        assert_eq!(socket_path(Some("tcp:localhost:4713"), &none), None);
        let e = env_of(&[("PULSE_SERVER", "/run/p"), ("XDG_RUNTIME_DIR", "/r")]);
        assert_eq!(socket_path(None, &e), Some(PathBuf::from("/run/p")));
        let e = env_of(&[("PULSE_RUNTIME_PATH", "/rt"), ("XDG_RUNTIME_DIR", "/r")]);
        assert_eq!(socket_path(None, &e), Some(PathBuf::from("/rt/native")));
        let e = env_of(&[("XDG_RUNTIME_DIR", "/r")]);
        assert_eq!(
            socket_path(None, &e),
            Some(PathBuf::from("/r/pulse/native"))
        );
    }

    #[test]
    fn eventfds_in_a_fake_proc() {
        let root = tempfile::tempdir().unwrap();
        let fd = root.path().join("42").join("fd");
        std::fs::create_dir_all(&fd).unwrap();
        std::os::unix::fs::symlink("anon_inode:[eventfd]", fd.join("7")).unwrap();
        std::os::unix::fs::symlink("anon_inode:[eventfd]", fd.join("9")).unwrap();
        std::os::unix::fs::symlink("socket:[123]", fd.join("5")).unwrap();
        assert_eq!(count_eventfds(root.path(), 42), Some(2));
        assert_eq!(count_eventfds(root.path(), 43), None);
    }

    #[test]
    fn peer_pid_of_our_own_listener() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s");
        let _l = std::os::unix::net::UnixListener::bind(&path).unwrap();
        assert_eq!(socket_peer_pid(&path).unwrap(), std::process::id());
    }

    #[test]
    fn pipewire_detection() {
        assert!(is_pipewire("PulseAudio (on PipeWire 0.3.65)"));
        assert!(!is_pipewire("pulseaudio"));
    }
}
