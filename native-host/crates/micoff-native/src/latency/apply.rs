//! Carrying out a plan, all or nothing: every change is recorded with what was there before
//! ([`Before`]), and when one step fails the earlier ones are put back exactly (contents,
//! permission bits, a removed link as a link). Writes go through micoff-files (atomic, exact
//! mode).

use std::fs;
use std::path::{Path, PathBuf};

use super::marker::read_meta;
use super::paths::Paths;
use super::plan::{wrappers_in, Action};

/// What was at a path before [`apply`] changed it, to put back exactly.
enum Before {
    /// Nothing (a write created the file; through a dangling link, the file it points to).
    Absent,
    /// A file (or, for a write, the file a link points to): its bytes and permission bits.
    File { content: Vec<u8>, mode: u32 },
    /// A symlink that a removal took away, with what it pointed to.
    Link(PathBuf),
}

impl Before {
    /// The state a write to `path` replaces (through a link: the file it points to).
    fn of_write(path: &Path) -> Result<Self, String> {
        match micoff_files::read_with_mode(path) {
            Ok((content, mode)) => Ok(Self::File { content, mode }),
            // No file there (a part of the path missing, or a file where a folder would be).
            Err(e)
                if e.kind() == std::io::ErrorKind::NotFound
                    || e.raw_os_error() == Some(libc::ENOTDIR) =>
            {
                Ok(Self::Absent)
            }
            Err(e) => Err(format!("cannot read {} first: {e}", path.display())),
        }
    }

    /// The state a removal of `path` (the entry itself, a link included) replaces.
    fn of_remove(path: &Path) -> Result<Self, String> {
        if micoff_files::is_symlink(path) {
            return fs::read_link(path)
                .map(Self::Link)
                .map_err(|e| format!("cannot read the link {}: {e}", path.display()));
        }
        Self::of_write(path)
    }

    /// Puts it back at `path`; `wrote` says whether the change was a write (through links) or a
    /// removal (of the entry).
    fn put_back(&self, path: &Path, wrote: bool) -> std::io::Result<()> {
        match self {
            Self::Absent if wrote => micoff_files::remove(path),
            Self::Absent => Ok(()),
            Self::File { content, mode } => micoff_files::write_atomic(path, content, *mode),
            Self::Link(target) => std::os::unix::fs::symlink(target, path),
        }
    }
}

/// Carries out `actions`, all or nothing: when one fails, what this run already changed is put
/// back as it was (contents and permission bits exactly, a removed link as a link), and the error
/// says so (and names anything that could not be put back). Returns the folders the writes made
/// (for micoff's record).
pub fn apply(actions: &[Action]) -> Result<Vec<PathBuf>, String> {
    let mut done: Vec<(&Path, Before, bool)> = Vec::new();
    let mut made = Vec::new();
    let mut failure = None;
    for a in actions {
        let step = match a {
            Action::Write { path, content } => Before::of_write(path).and_then(|before| {
                made.extend(
                    micoff_files::write_atomic_made(path, content.as_bytes(), 0o644)
                        .map_err(|e| format!("cannot write {}: {e}", path.display()))?,
                );
                Ok(Some((path.as_path(), before, true)))
            }),
            Action::Remove { path } => {
                // Check again right before: only a file that still is ours goes.
                let ours = micoff_files::read_regular_text(path, micoff_files::MAX_TEXT_BYTES)
                    .ok()
                    .flatten()
                    .is_some_and(|c| read_meta(&c).is_some());
                if ours {
                    Before::of_remove(path).and_then(|before| {
                        fs::remove_file(path)
                            .map_err(|e| format!("cannot remove {}: {e}", path.display()))?;
                        Ok(Some((path.as_path(), before, false)))
                    })
                } else {
                    Ok(None)
                }
            }
            Action::Unchanged { .. } | Action::Skip { .. } => Ok(None),
        };
        match step {
            Ok(Some(change)) => done.push(change),
            Ok(None) => {}
            Err(e) => {
                failure = Some(e);
                break;
            }
        }
    }
    let Some(error) = failure else {
        return Ok(made);
    };
    if done.is_empty() {
        return Err(format!("{error}; nothing was changed"));
    }
    let mut not_back = Vec::new();
    for (path, before, wrote) in done.iter().rev() {
        if let Err(e) = before.put_back(path, *wrote) {
            not_back.push(format!("{}: {e}", path.display()));
        }
    }
    if not_back.is_empty() {
        Err(format!(
            "{error}; the {} file(s) this run had already changed were put back as they were",
            done.len()
        ))
    } else {
        Err(format!(
            "{error}; putting back what this run had changed failed for: {}",
            not_back.join("; ")
        ))
    }
}

/// Makes micoff's wrappers executable (the atomic write leaves them 0644).
pub(super) fn make_executable(paths: &Paths, actions: &[Action]) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    for w in wrappers_in(paths, actions) {
        fs::set_permissions(w, fs::Permissions::from_mode(0o755))
            .map_err(|e| format!("cannot make {} executable: {e}", w.display()))?;
    }
    Ok(())
}
