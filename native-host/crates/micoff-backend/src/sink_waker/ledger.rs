//! What a waker leaves on disk while its suspend of a null sink may stand: one file per host process
//! (`<dir>/<pid>`: the server and the sink), written before the suspend/resume pair leaves and removed
//! once the sink is known not to be left suspended. The server keeps a client's suspend after the
//! client is gone (it is a user's suspend to PulseAudio), so a host killed between the two requests
//! would leave the user's virtual microphone silent for good; the next host on the same server finds
//! the file of a process that is no longer a running micoff-host and resumes the sink. A sink
//! suspended without such a file (the user's own `pactl suspend-sink`) is never touched.

use std::fs;
use std::io;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

/// Under `$XDG_RUNTIME_DIR` (a per-user tmpfs that goes with the session, as the audio server does).
pub const LEDGER_DIR: &str = "micoff/sink-waker";

/// A suspend that may stand: the server it was sent to and the sink, by name (indices do not
/// survive a server restart).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub server: String,
    pub sink: String,
}

/// A dead host's entry, with the file that holds it.
#[derive(Debug)]
pub struct Left {
    pub path: PathBuf,
    pub entry: Entry,
}

/// The ledger of this process. Without a folder (no `$XDG_RUNTIME_DIR`) it keeps nothing: the
/// in-memory retry after a reconnect still covers a resume that failed while this host runs.
pub struct Ledger {
    dir: Option<PathBuf>,
    pid: u32,
    /// Whether `pid` is a running micoff-host (its entries are its own business).
    alive: Box<dyn Fn(u32) -> bool + Send + Sync>,
}

impl Ledger {
    /// This process's ledger under `runtime_dir`.
    pub fn new(runtime_dir: Option<PathBuf>) -> Self {
        Self::with(
            runtime_dir.map(|d| d.join(LEDGER_DIR)),
            std::process::id(),
            Box::new(is_micoff_host),
        )
    }

    /// A ledger in `dir` for process `pid`, `alive` telling running hosts (tests).
    pub fn with(
        dir: Option<PathBuf>,
        pid: u32,
        alive: Box<dyn Fn(u32) -> bool + Send + Sync>,
    ) -> Self {
        Self { dir, pid, alive }
    }

    /// Nothing kept.
    pub fn none() -> Self {
        Self::with(None, std::process::id(), Box::new(|_| true))
    }

    fn own(&self) -> Option<PathBuf> {
        self.dir.as_ref().map(|d| d.join(self.pid.to_string()))
    }

    /// Notes, before the suspend leaves, that `entry` may stand. A failure is logged and the wake
    /// goes on: first words matter more than a guard against a kill in a window of microseconds.
    pub fn note(&self, entry: &Entry) {
        let (Some(dir), Some(path)) = (&self.dir, self.own()) else {
            return;
        };
        let text = format!("{}\n{}\n", entry.server, entry.sink);
        let write = || {
            fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)
                .and_then(|()| fs::write(&path, &text))
        };
        // Once more if another host removed the emptied folder in between (`clear`).
        let written = write().or_else(|e| match e.kind() {
            io::ErrorKind::NotFound => write(),
            _ => Err(e),
        });
        if let Err(e) = written {
            tracing::info!(
                "sink waker: cannot note the suspend in {}: {e}",
                path.display()
            );
        }
    }

    /// This process's suspend is known not to stand. The folders go once empty, so a host leaves
    /// nothing behind but the entry of a resume it still owed.
    pub fn clear(&self) {
        let (Some(dir), Some(path)) = (&self.dir, self.own()) else {
            return;
        };
        remove(&path);
        prune(dir);
    }

    /// A dead host's entry handled.
    pub fn forget(&self, left: &Left) {
        remove(&left.path);
        if let Some(dir) = &self.dir {
            prune(dir);
        }
    }

    /// The entries on `server` left by processes that are not running micoff-hosts.
    pub fn left_by_dead(&self, server: &str) -> Vec<Left> {
        let Some(dir) = &self.dir else {
            return Vec::new();
        };
        let Ok(read) = fs::read_dir(dir) else {
            return Vec::new();
        };
        let mut left = Vec::new();
        for file in read.flatten() {
            let path = file.path();
            let Some(pid) = file
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            if pid == self.pid || (self.alive)(pid) {
                continue;
            }
            match parse(&path) {
                Some(entry) if entry.server == server => left.push(Left { path, entry }),
                Some(_) => {}
                // Cut short as its writer died: nothing to resume by.
                None => remove(&path),
            }
        }
        left
    }
}

/// Removes the ledger's folder and micoff's under the runtime folder if they are empty (fails, and
/// is meant to, while another host's entry is there).
fn prune(dir: &Path) {
    if fs::remove_dir(dir).is_ok() {
        if let Some(micoff) = dir.parent() {
            let _ = fs::remove_dir(micoff);
        }
    }
}

fn parse(path: &Path) -> Option<Entry> {
    let text = fs::read_to_string(path).ok()?;
    let mut lines = text.lines();
    let (server, sink) = (lines.next()?, lines.next()?);
    (!sink.is_empty()).then(|| Entry {
        server: server.to_owned(),
        sink: sink.to_owned(),
    })
}

fn remove(path: &Path) {
    match fs::remove_file(path) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => tracing::info!("sink waker: cannot remove {}: {e}", path.display()),
    }
}

/// Whether `pid` runs the same program as this process (a micoff-host, whatever its file is called).
fn is_micoff_host(pid: u32) -> bool {
    let comm = |p: &str| fs::read_to_string(format!("/proc/{p}/comm")).ok();
    match (comm(&pid.to_string()), comm("self")) {
        (Some(theirs), Some(ours)) => theirs == ours,
        _ => false,
    }
}
