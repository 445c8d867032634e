//! [`ProcFs`]: the injectable `/proc` root, and the cheap file reading the sampler is built on.

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use crate::Pid;

/// Errors that are not "the process went away" (which is never an error here).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot read {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("too many open files: the sampler ran out of file descriptors")]
    OutOfFds,
}

/// A `/proc` tree: the real one ([`ProcFs::system`]) or a fake one built by a test ([`ProcFs::new`]).
#[derive(Debug, Clone)]
pub struct ProcFs {
    root: PathBuf,
    clk_tck: u64,
}

impl ProcFs {
    /// A proc tree at `root`, with the system's clock tick (utime/stime unit).
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self::with_clk_tck(root, system_clk_tck())
    }

    /// A proc tree at `root` with an explicit clock tick (tests).
    pub fn with_clk_tck(root: impl Into<PathBuf>, clk_tck: u64) -> Self {
        Self {
            root: root.into(),
            clk_tck: clk_tck.max(1),
        }
    }

    /// The real `/proc`.
    pub fn system() -> Self {
        Self::new("/proc")
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Clock ticks per second (`sysconf(_SC_CLK_TCK)`, 100 on Linux).
    pub fn clk_tck(&self) -> u64 {
        self.clk_tck
    }

    /// Every pid (thread group) under the root, ascending.
    pub fn list_pids(&self) -> Result<Vec<Pid>, Error> {
        let rd = std::fs::read_dir(&self.root).map_err(|source| Error::Io {
            path: self.root.clone(),
            source,
        })?;
        let mut pids: Vec<Pid> = rd
            .filter_map(|e| e.ok())
            .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse().ok()))
            .collect();
        pids.sort_unstable();
        Ok(pids)
    }
}

fn system_clk_tck() -> u64 {
    // SAFETY: sysconf has no preconditions; it returns -1 for an unknown name.
    let v = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if v > 0 {
        v as u64
    } else {
        100
    }
}

/// Whether an error only means the task is gone (or its file is not ours to read); such tasks and
/// fields are skipped silently.
pub(crate) fn is_vanished_or_denied(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::NotFound | io::ErrorKind::PermissionDenied
    ) || matches!(
        e.raw_os_error(),
        Some(libc::ESRCH) | Some(libc::ENOENT) | Some(libc::EACCES) | Some(libc::EPERM)
    )
}

/// The program (EMFILE) or the system (ENFILE) has no file descriptor left: a retryable condition,
/// not a vanished process.
pub(crate) fn is_out_of_fds(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EMFILE) | Some(libc::ENFILE))
}

/// Reads a small proc file with one `read` into a reused buffer (proc's seq files hand out the whole
/// text in the first read when the buffer is big enough; a full buffer grows and reads on).
/// Returns the number of bytes read; 0 means "vanished" to the callers.
pub(crate) fn read_small(path: &Path, buf: &mut Vec<u8>) -> io::Result<usize> {
    let mut f = File::open(path)?;
    read_from(&mut f, buf)
}

/// [`read_from`] a kept-open file from offset 0 (`pread`): a `/proc` file regenerates its text.
pub(crate) fn pread_small(f: &File, buf: &mut Vec<u8>) -> io::Result<usize> {
    use std::os::unix::fs::FileExt;
    read_growing(buf, |b, offset| f.read_at(b, offset))
}

pub(crate) fn read_from(f: &mut File, buf: &mut Vec<u8>) -> io::Result<usize> {
    read_growing(buf, |b, _| f.read(b))
}

/// Reads into `buf` (at least 4 KiB) until a short read or the end, growing it as needed; `read`
/// gets the free part of the buffer and the offset it starts at.
fn read_growing(
    buf: &mut Vec<u8>,
    mut read: impl FnMut(&mut [u8], u64) -> io::Result<usize>,
) -> io::Result<usize> {
    if buf.len() < 4096 {
        buf.resize(4096, 0);
    }
    let mut len = 0;
    loop {
        let n = read(&mut buf[len..], len as u64)?;
        len += n;
        if n == 0 || len < buf.len() {
            return Ok(len);
        }
        let grow = buf.len();
        buf.resize(buf.len() + grow, 0);
    }
}

/// The text of `buf[..len]`, lossily: comm names are bytes and a 15-byte truncation can split a UTF-8
/// character. Borrowed (no allocation) for valid UTF-8.
pub(crate) fn text(buf: &[u8]) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(buf)
}

/// A path buffer reused across reads: `root/<a>/<b>/...` (no allocation per read once warm).
pub(crate) struct PathBuilder {
    root: String,
    buf: String,
}

impl PathBuilder {
    pub(crate) fn new(root: &Path) -> Self {
        Self {
            root: root.to_string_lossy().trim_end_matches('/').to_owned(),
            buf: String::with_capacity(128),
        }
    }

    /// `root/<parts...>`; the returned path stays valid until the next call.
    pub(crate) fn at(&mut self, parts: &[&dyn std::fmt::Display]) -> &Path {
        use std::fmt::Write as _;
        self.buf.clear();
        self.buf.push_str(&self.root);
        for p in parts {
            self.buf.push('/');
            let _ = write!(self.buf, "{p}");
        }
        Path::new(&self.buf)
    }
}
