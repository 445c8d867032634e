//! Writes and removals of Firefox's part, through `micoff-files` (exclusive temporary file +
//! rename, through symlinks); a dry run changes nothing.

use std::path::Path;

/// Writes `text` to `path` keeping the file's mode (new files `new_mode`); dry-run writes nothing.
pub fn write_keeping_mode(
    path: &Path,
    text: &[u8],
    new_mode: u32,
    dry_run: bool,
) -> Result<(), String> {
    if dry_run {
        return Ok(());
    }
    let mode = micoff_files::read_with_mode(path).map_or(new_mode, |(_, m)| m);
    micoff_files::write_atomic(path, text, mode).map_err(|e| e.to_string())
}

/// Removes `path` (`micoff_files::remove`: through a symlink, the file it points to); dry-run
/// removes nothing.
pub fn remove(path: &Path, dry_run: bool) -> Result<(), String> {
    if dry_run {
        return Ok(());
    }
    micoff_files::remove(path).map_err(|e| e.to_string())
}
