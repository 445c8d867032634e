//! Reads, writes and removals of Firefox's part, through `micoff-files` (regular files only,
//! bounded; exclusive temporary file + rename, through symlinks); a dry run changes nothing.
//! The user's files (user.js, prefs.js, an administrator's policies.json) are written as they are;
//! micoff's own (its copies of the add-on, its record of policy entries) through the journal of
//! micoff's record.

use std::path::Path;

use micoff_files::record::Journal;
use micoff_files::{read_regular_text, MAX_TEXT_BYTES};

/// A text file micoff edits or reads (`None`: none there); anything but a regular UTF-8 file of
/// a sane size is an error that says what it is.
pub fn read_text(path: &Path) -> Result<Option<String>, String> {
    read_regular_text(path, MAX_TEXT_BYTES).map_err(|e| e.to_string())
}

/// Writes `text` to the user's `path` keeping the file's mode (new files `new_mode`); dry-run
/// writes nothing. The file is the user's (micoff's lines in it are a part of micoff's record);
/// folders the write had to make (a new `/etc/firefox/policies`) are noted in `journal`.
pub fn write_keeping_mode(
    path: &Path,
    text: &[u8],
    new_mode: u32,
    dry_run: bool,
    journal: &mut Journal,
) -> Result<(), String> {
    if dry_run {
        return Ok(());
    }
    let mode = micoff_files::read_with_mode(path).map_or(new_mode, |(_, m)| m);
    let made = micoff_files::write_atomic_made(path, text, mode).map_err(|e| e.to_string())?;
    journal.made_folders(&made);
    Ok(())
}

/// Removes the user's `path` (`micoff_files::remove`: through a symlink, the file it points to);
/// dry-run removes nothing.
pub fn remove(path: &Path, dry_run: bool) -> Result<(), String> {
    if dry_run {
        return Ok(());
    }
    micoff_files::remove(path).map_err(|e| e.to_string())
}

/// Writes micoff's own file `path` through `journal` (recorded with `role`), keeping the mode of
/// a file already there (new files 0644); dry-run writes nothing.
pub fn write_recorded(
    path: &Path,
    content: &[u8],
    role: &str,
    dry_run: bool,
    journal: &mut Journal,
) -> Result<(), String> {
    if dry_run {
        return Ok(());
    }
    let mode = micoff_files::read_with_mode(path).map_or(0o644, |(_, m)| m);
    journal
        .write(path, content, mode, role)
        .map_err(|e| e.to_string())
}

/// Removes micoff's own file `path` through `journal`; dry-run removes nothing.
pub fn remove_recorded(path: &Path, dry_run: bool, journal: &mut Journal) -> Result<(), String> {
    if dry_run {
        return Ok(());
    }
    journal.remove(path).map_err(|e| e.to_string())
}
