//! Writing, copying, restoring and removing a file, the one way micoff does it: exclusive randomly
//! named temporary file + rename, exact mode, through a symlink only where [`resolve`] follows it;
//! and writing a kernel setting in place ([`write_existing`]) under the same link rules.

use std::fs;
use std::io::{self, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::read::read_with_mode;
use crate::resolve::resolve;
use crate::shown::shown;

/// Suffix of our temporary files (`.<name>.<random>.micoff-tmp`), for people wondering what one is.
pub const TMP_SUFFIX: &str = ".micoff-tmp";

/// Whether `path` itself is a symlink (not followed).
pub fn is_symlink(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

/// Writes `content` to `path` with `mode` (exactly, whatever the umask), atomically: an
/// exclusively created, randomly named temporary file in the target's folder, synced, then
/// renamed over the target. Through a symlink, the file it points to is written and the link
/// stays. Creates the folders above `path` (not above a link's target: a link into a folder that
/// does not exist is an error that names both).
pub fn write_atomic(path: &Path, content: &[u8], mode: u32) -> io::Result<()> {
    write_atomic_made(path, content, mode).map(|_| ())
}

/// [`write_atomic`], returning the folders it had to make, top down (what putting the file away
/// again may remove, when they are empty).
pub fn write_atomic_made(path: &Path, content: &[u8], mode: u32) -> io::Result<Vec<PathBuf>> {
    let target = resolve(path)?;
    let dir = target
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .ok_or_else(|| io::Error::other(format!("{} has no folder", shown(&target))))?;
    if is_symlink(path) && !dir.is_dir() {
        return Err(io::Error::other(format!(
            "{} is a symlink to {}, whose folder does not exist; not writing",
            shown(path),
            shown(&target)
        )));
    }
    let made = make_folders(dir)?;
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(TMP_SUFFIX)
        .rand_bytes(12)
        .permissions(fs::Permissions::from_mode(0o600))
        .tempfile_in(dir)?;
    // fchmod: the mode asked for, not what the umask leaves of it.
    tmp.as_file()
        .set_permissions(fs::Permissions::from_mode(mode))?;
    tmp.write_all(content)?;
    tmp.as_file().sync_all()?;
    tmp.persist(&target).map_err(|e| e.error)?;
    // The rename itself survives a crash once the folder is synced (best effort).
    if let Ok(d) = fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(made)
}

/// Makes `dir` and the folders above it that are missing; returns the ones it made, top down.
pub fn make_folders(dir: &Path) -> io::Result<Vec<PathBuf>> {
    let missing: Vec<PathBuf> = dir
        .ancestors()
        .take_while(|a| !a.as_os_str().is_empty() && fs::symlink_metadata(a).is_err())
        .map(Path::to_path_buf)
        .collect();
    fs::create_dir_all(dir)?;
    Ok(missing.into_iter().rev().collect())
}

/// Copies the file `src` stands for to a NEW file `dst` (never an existing one, never through a
/// link planted there), with `src`'s mode. A failure leaves no `dst` behind.
pub fn copy_new(src: &Path, dst: &Path) -> io::Result<()> {
    let (content, mode) = read_with_mode(src)?;
    let mut f = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(dst)?;
    let result = (|| {
        f.set_permissions(fs::Permissions::from_mode(mode))?;
        f.write_all(&content)?;
        f.sync_all()
    })();
    if result.is_err() {
        let _ = fs::remove_file(dst);
    }
    result
}

/// Puts the backup `backup` back at `path`, exactly: its content and mode. A plain file is
/// renamed into place (owner and all); when `path` is a symlink the content goes through the link
/// (the link stays, pointing where it pointed) and the backup is removed afterwards.
pub fn restore(backup: &Path, path: &Path) -> io::Result<()> {
    if is_symlink(path) {
        let (content, mode) = read_with_mode(backup)?;
        write_atomic(path, &content, mode)?;
        fs::remove_file(backup)
    } else {
        fs::rename(backup, path)
    }
}

/// Writes `content` into the file `path` stands for, in place: for a file that cannot be replaced
/// by a rename (a kernel setting in `/sys` or `/proc`, `fix governor`'s `scaling_governor`). Through
/// a symlink only where [`resolve`] follows it (a link someone else planted, under a `--root`
/// folder say, is refused and nothing is written); never creates a file, never follows a link
/// planted after the check (`O_NOFOLLOW`).
pub fn write_existing(path: &Path, content: &[u8]) -> io::Result<()> {
    let target = resolve(path)?;
    let mut f = fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&target)?;
    f.write_all(content)?;
    f.flush()
}

/// Removes the file `path` stands for: through a symlink the file it points to goes and the link
/// stays (dangling, as it was before micoff created that file).
pub fn remove(path: &Path) -> io::Result<()> {
    fs::remove_file(resolve(path)?)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
