//! Putting away a file or folder micoff's record names: a file only while it is exactly what
//! micoff wrote (its sha256), a folder only while it is empty. What a writer undoes by its own
//! rules (a user.js block, policy entries, a fixer) is its own.

use std::fs;
use std::io;
use std::path::Path;

use super::journal::Journal;
use crate::ours::sha256_hex;
use crate::read::{read_regular, MAX_FILE_BYTES};
use crate::shown::shown;
use crate::write::{is_symlink, remove};

/// What became of a recorded file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileUndone {
    /// Removed (with a dry run: would be).
    Removed,
    /// Not there any more (removed by hand, or by another command): nothing to do.
    Gone,
    /// Changed since micoff wrote it: the user's now, left as it is (why).
    Kept(String),
    /// Could not be removed (why).
    Failed(String),
}

impl FileUndone {
    /// Whether something was left behind (the uninstall's partial exit).
    pub fn left_something(&self) -> bool {
        matches!(self, FileUndone::Kept(_) | FileUndone::Failed(_))
    }
}

/// Removes the file micoff recorded at `path` with `sha256`, while it still is that, and forgets
/// it in `journal`; a file left (edited since, or not removable) stays recorded, so the next
/// uninstall names it again until it is gone. A dry run changes nothing.
pub fn undo_file(path: &Path, sha256: &str, journal: &mut Journal, dry_run: bool) -> FileUndone {
    let now = match read_regular(path, MAX_FILE_BYTES) {
        Ok(None) => {
            journal.forget_file(path);
            return FileUndone::Gone;
        }
        Ok(Some(bytes)) => bytes,
        // Not a regular file any more (a FIFO, a folder): not micoff's to remove.
        Err(e) if e.kind() == io::ErrorKind::InvalidData => return FileUndone::Kept(e.to_string()),
        Err(e) => return FileUndone::Failed(e.to_string()),
    };
    if sha256_hex(&now) != sha256 {
        return FileUndone::Kept(format!(
            "{} was changed since micoff wrote it: yours now, left as it is",
            shown(path)
        ));
    }
    if dry_run {
        return FileUndone::Removed;
    }
    // The entry micoff wrote at goes: a link there (dotfiles) is removed itself, and the file it
    // points to, in the user's own folder, is left (as `install --uninstall` always did).
    let removed = if is_symlink(path) {
        fs::remove_file(path)
    } else {
        remove(path)
    };
    match removed {
        Ok(()) => {
            journal.forget_file(path);
            FileUndone::Removed
        }
        Err(e) => FileUndone::Failed(e.to_string()),
    }
}

/// What became of a recorded folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FolderUndone {
    Removed,
    Gone,
    /// Not empty: something else is in it now, so it stays.
    NotEmpty,
    Failed(String),
}

/// Removes the folder micoff made at `path` when it is empty, and forgets it in `journal`; one
/// that is not empty yet (a file left in it) stays recorded for a later run. A dry run changes
/// nothing (and counts files a real run would have removed first as gone: `would_be_empty`).
pub fn undo_folder(
    path: &Path,
    journal: &mut Journal,
    dry_run: bool,
    would_be_empty: bool,
) -> FolderUndone {
    let Ok(meta) = fs::symlink_metadata(path) else {
        journal.forget_folder(path);
        return FolderUndone::Gone;
    };
    if !meta.is_dir() {
        journal.forget_folder(path);
        return FolderUndone::NotEmpty;
    }
    if dry_run {
        let empty = fs::read_dir(path).is_ok_and(|mut d| d.next().is_none());
        return if empty || would_be_empty {
            FolderUndone::Removed
        } else {
            FolderUndone::NotEmpty
        };
    }
    match fs::remove_dir(path) {
        Ok(()) => {
            journal.forget_folder(path);
            FolderUndone::Removed
        }
        Err(e)
            if e.raw_os_error() == Some(libc::ENOTEMPTY)
                || e.raw_os_error() == Some(libc::EEXIST) =>
        {
            FolderUndone::NotEmpty
        }
        Err(e) => FolderUndone::Failed(e.to_string()),
    }
}
