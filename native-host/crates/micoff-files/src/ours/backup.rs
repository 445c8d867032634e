//! A marked file written where a foreign one was, and put away again: the foreign file is first
//! copied to a new backup (`<file>.micoff-backup`, then `.2`, `.3`, ...: never over an earlier one),
//! micoff's file names that backup in its header, and removing micoff's file (only when it is as
//! written) puts exactly that backup back. The fixers (`fix hda`, `fix client-shm`) write their
//! files this way.

use std::io;
use std::path::{Path, PathBuf};

use super::marked::{seal, Marked};
use super::Ownership;
use crate::read::read_with_mode;
use crate::read::{read_regular_text, MAX_TEXT_BYTES};
use crate::write::{copy_new, remove, restore, write_atomic};

/// Suffix of the backups kept of files micoff replaced: `<file>.micoff-backup`, then
/// `<file>.micoff-backup.2`, `.3`, ... (a new backup never replaces an older one).
pub const BACKUP_SUFFIX: &str = ".micoff-backup";

/// The header line of a file of micoff's that replaced a foreign file: names the backup removing
/// it puts back (a file name in the same folder).
pub const BACKUP_LINE: &str = "# micoff: the file this replaced is kept as ";

const MAX_BACKUPS: u32 = 999;

/// The n-th backup name of `path` (n >= 1).
pub fn backup_path(path: &Path, n: u32) -> PathBuf {
    if n <= 1 {
        PathBuf::from(format!("{}{BACKUP_SUFFIX}", path.display()))
    } else {
        PathBuf::from(format!("{}{BACKUP_SUFFIX}.{n}", path.display()))
    }
}

/// Every backup of `path` that exists, oldest first.
pub fn backups(path: &Path) -> Vec<PathBuf> {
    (1..=MAX_BACKUPS)
        .map(|n| backup_path(path, n))
        .filter(|b| b.symlink_metadata().is_ok())
        .collect()
}

/// The first backup name of `path` not taken.
fn free_backup(path: &Path) -> io::Result<PathBuf> {
    (1..=MAX_BACKUPS)
        .map(|n| backup_path(path, n))
        .find(|b| b.symlink_metadata().is_err())
        .ok_or_else(|| {
            io::Error::other(format!(
                "{} has {MAX_BACKUPS} backups already; remove some",
                path.display()
            ))
        })
}

/// The backup a file of ours names in its [`BACKUP_LINE`], as a path next to `path`.
pub(crate) fn backup_named_in(path: &Path, ours: &Marked) -> Option<PathBuf> {
    let name = ours
        .header()
        .find_map(|l| l.strip_prefix(BACKUP_LINE))?
        .trim();
    // Only a plain name in the same folder, whatever the file says.
    if name.is_empty() || name.contains('/') || name == "." || name == ".." {
        return None;
    }
    Some(path.with_file_name(name))
}

/// `body` (which starts with the marker line) with the [`BACKUP_LINE`] for `backup` after it.
fn with_backup_line(body: &str, backup: Option<&Path>) -> String {
    let Some(name) = backup.and_then(|b| b.file_name()) else {
        return body.to_owned();
    };
    let (first, rest) = body.split_once('\n').unwrap_or((body, ""));
    format!("{first}\n{BACKUP_LINE}{}\n{rest}", name.to_string_lossy())
}

/// Whether `existing` (a file's text) is ours, as written, with exactly `body` (the seal and the
/// backup line aside).
pub fn is_applied(existing: Option<&str>, body: &str) -> bool {
    let Some(marked) = existing.and_then(Marked::read) else {
        return false;
    };
    if marked.ownership() != Ownership::AsWritten {
        return false;
    }
    marked.unsealed_without(|l| l.starts_with(BACKUP_LINE)) == body
}

/// Outcome of [`install`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Installed {
    AlreadyApplied,
    Written {
        /// Where the foreign file just replaced was kept.
        backup: Option<PathBuf>,
    },
}

/// Writes micoff's file at `path` (`body` starts with the marker line), sealed with `note`. A
/// foreign file there is first copied to a new backup (the next free `<path>.micoff-backup[.N]`),
/// and micoff's file names that backup so [`uninstall`] puts exactly it back. An older file of
/// ours as written is replaced, keeping the backup it named; a file of ours that was edited since
/// counts as foreign (it gets a backup). Existing backups are never overwritten, so no foreign file
/// is lost: not even when the user replaced ours by hand between two writes. A symlink at `path`
/// stays a link (the file it points to is written); the file keeps the mode of the one it replaces
/// (new files: 0644).
pub fn install(path: &Path, body: &str, note: &str) -> io::Result<Installed> {
    let existing = read_regular_text(path, MAX_TEXT_BYTES)?;
    if is_applied(existing.as_deref(), body) {
        return Ok(Installed::AlreadyApplied);
    }
    let ours_as_written = existing
        .as_deref()
        .and_then(Marked::read)
        .filter(|m| m.ownership() == Ownership::AsWritten);
    let (content, backup) = match (&existing, ours_as_written) {
        (Some(_), Some(old)) => {
            let kept = backup_named_in(path, &old);
            (with_backup_line(body, kept.as_deref()), None)
        }
        (Some(_), None) => {
            let b = free_backup(path)?;
            copy_new(path, &b)?;
            (with_backup_line(body, Some(&b)), Some(b))
        }
        (None, _) => (body.to_owned(), None),
    };
    let mode = read_with_mode(path).map_or(0o644, |(_, m)| m);
    write_atomic(path, seal(&content, note).as_bytes(), mode)?;
    Ok(Installed::Written { backup })
}

/// Outcome of [`uninstall`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Removed {
    NothingThere,
    /// The file there was not written by micoff; it was left alone.
    NotOurs,
    Removed {
        /// The backup put back in its place.
        restored: Option<PathBuf>,
        /// Older backups that stay (of files replaced by earlier writes and then replaced again by
        /// hand): micoff never deletes a foreign file.
        left: Vec<PathBuf>,
    },
    /// Ours, but changed since micoff wrote it: the user's changes were kept and only micoff's
    /// lines removed (the file is the user's now).
    KeptEdits {
        /// Every backup, which all stay (the last one is the file micoff had replaced).
        left: Vec<PathBuf>,
    },
    /// Ours, but changed since micoff wrote it, and the writer cannot tell its lines from the
    /// user's: left alone.
    Changed {
        /// The file micoff had replaced, still kept.
        backup: Option<PathBuf>,
    },
}

/// Removes micoff's file at `path` and puts back the file it replaced (the backup it names),
/// exactly: a symlink at `path` stays a link pointing where it pointed. Never touches a file micoff
/// did not write, whatever the caller asks. A file of ours changed since it was written: with
/// `strip` (the writer's "remove only micoff's lines") the result of it replaces the file and every
/// backup stays; without, the file is left alone ([`Removed::Changed`]).
pub fn uninstall(path: &Path, strip: Option<&dyn Fn(&str) -> String>) -> io::Result<Removed> {
    let Some(existing) = read_regular_text(path, MAX_TEXT_BYTES)? else {
        return Ok(Removed::NothingThere);
    };
    let Some(marked) = Marked::read(&existing) else {
        return Ok(Removed::NotOurs);
    };
    let backup = backup_named_in(path, &marked).filter(|b| b.symlink_metadata().is_ok());
    if marked.ownership() != Ownership::AsWritten {
        let Some(strip) = strip else {
            return Ok(Removed::Changed { backup });
        };
        let (_, mode) = read_with_mode(path)?;
        write_atomic(path, strip(&existing).as_bytes(), mode)?;
        return Ok(Removed::KeptEdits {
            left: backups(path),
        });
    }
    let restored = match backup {
        Some(b) => {
            restore(&b, path)?;
            Some(b)
        }
        None => {
            remove(path)?;
            None
        }
    };
    Ok(Removed::Removed {
        restored,
        left: backups(path),
    })
}
