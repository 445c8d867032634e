//! Finding the audio server: its socket path and the pid of the process holding it; and a look at
//! a client's file descriptors (srbchannel gives the client two eventfds).

use std::path::{Path, PathBuf};

pub use micoff_audio_server::is_pipewire;
use micoff_audio_server::ServerEnv;

/// The unix socket a libpulse client would use, from micoff-audio-server's resolver: `--server`
/// in place of `PULSE_SERVER`, then the environment's candidates in libpulse's order, the first
/// one that exists. `None` for a network server. `env` is injectable for tests.
pub fn socket_path(server: Option<&str>, env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let env = ServerEnv::from_lookup(env).with_server(server);
    micoff_audio_server::first_socket(&env, Path::exists)
}

/// Where a libpulse client looks for the server, for messages: `--server` in place of
/// `PULSE_SERVER`, then micoff-audio-server's candidates in libpulse's order, as one server string
/// (`unix:/run/user/1000/pulse/native unix:/var/run/pulse/native`). `env` is injectable for tests.
pub fn describe(server: Option<&str>, env: &dyn Fn(&str) -> Option<String>) -> String {
    micoff_audio_server::describe(&ServerEnv::from_lookup(env).with_server(server))
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

    /// The resolver itself is tested in micoff-audio-server; this checks what the bench feeds it.
    #[test]
    fn socket_path_resolution() {
        let none = env_of(&[]);
        assert_eq!(
            socket_path(Some("unix:/tmp/x/pulse.sock"), &none),
            Some(PathBuf::from("/tmp/x/pulse.sock"))
        );
        assert_eq!(socket_path(Some("tcp:localhost:4713"), &none), None);
        let e = env_of(&[("PULSE_SERVER", "/run/p"), ("XDG_RUNTIME_DIR", "/r")]);
        assert_eq!(socket_path(None, &e), Some(PathBuf::from("/run/p")));
        assert_eq!(
            socket_path(Some("unix:/cli"), &e),
            Some(PathBuf::from("/cli"))
        );
        // Nothing exists there: the first candidate.
        let e = env_of(&[("PULSE_RUNTIME_PATH", "/nonexistent/rt")]);
        assert_eq!(
            socket_path(None, &e),
            Some(PathBuf::from("/nonexistent/rt/native"))
        );
        // The first candidate that exists.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pulse").join("native");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let _listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
        let xdg = dir.path().to_string_lossy().into_owned();
        let e = move |k: &str| (k == "XDG_RUNTIME_DIR").then(|| xdg.clone());
        assert_eq!(socket_path(None, &e), Some(path));
    }

    #[test]
    fn describe_names_what_a_client_would_try() {
        let none = env_of(&[]);
        assert_eq!(describe(Some("unix:/tmp/x"), &none), "unix:/tmp/x");
        let e = env_of(&[("PULSE_SERVER", "/run/p tcp:box")]);
        assert_eq!(describe(None, &e), "unix:/run/p tcp:box");
        let e = env_of(&[("PULSE_RUNTIME_PATH", "/rt"), ("XDG_RUNTIME_DIR", "/r")]);
        assert_eq!(
            describe(None, &e),
            "unix:/rt/native unix:/var/run/pulse/native"
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
}
