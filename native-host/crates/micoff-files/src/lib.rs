//! The one way micoff writes files outside its own folder (browser manifests, `/etc/modprobe.d`,
//! `~/.config/pulse/client.conf`, `/run` state) and puts them back.
//!
//! - Writes go to a randomly named temporary file created exclusively (`O_CREAT|O_EXCL`, so a
//!   symlink or file planted at that name is never followed or reused) in the folder of the file
//!   written, get their mode with `fchmod` (whatever the umask), are synced, then renamed over the
//!   target: readers see the old file or the new one, never half of one.
//! - A target that is a symlink (dotfiles setups) is written THROUGH the link: the file it points
//!   to gets the new content and the link stays a link pointing where it pointed.
//! - Backups are created exclusively too (never through a link planted at the backup's name) and
//!   keep the mode of the file they copy; [`restore`] puts one back exactly, through the link
//!   when the target is one.
//! - [`sha256_hex`] is the record of what was written, so a revert can tell whether the user
//!   edited the file since.

use std::fs;
use std::io::{self, Read, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// Symlinks followed at most (as the kernel's own limit, `MAXSYMLINKS`).
const MAX_LINKS: usize = 40;

/// Suffix of our temporary files (`.<name>.<random>.micoff-tmp`), for people wondering what one is.
pub const TMP_SUFFIX: &str = ".micoff-tmp";

/// Whether `path` itself is a symlink (not followed).
pub fn is_symlink(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

/// The file `path` stands for: `path` itself, or where its chain of symlinks ends (which may not
/// exist yet: a dangling link). Only the last component is followed; folders on the way are
/// whatever the kernel makes of them.
pub fn resolve(path: &Path) -> io::Result<PathBuf> {
    let mut p = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        match fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let target = fs::read_link(&p)?;
                p = if target.is_absolute() {
                    target
                } else {
                    p.parent().unwrap_or(Path::new("/")).join(target)
                };
            }
            _ => return Ok(p),
        }
    }
    Err(io::Error::other(format!(
        "{}: more than {MAX_LINKS} symlinks in a row",
        path.display()
    )))
}

/// Writes `content` to `path` with `mode` (exactly, whatever the umask), atomically: an
/// exclusively created, randomly named temporary file in the target's folder, synced, then
/// renamed over the target. Through a symlink, the file it points to is written and the link
/// stays. Creates the folders above `path` (not above a link's target: a link into a folder that
/// does not exist is an error that names both).
pub fn write_atomic(path: &Path, content: &[u8], mode: u32) -> io::Result<()> {
    let target = resolve(path)?;
    let dir = target
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .ok_or_else(|| io::Error::other(format!("{} has no folder", target.display())))?;
    if target == path {
        fs::create_dir_all(dir)?;
    } else if !dir.is_dir() {
        return Err(io::Error::other(format!(
            "{} is a symlink to {}, whose folder does not exist; not writing",
            path.display(),
            target.display()
        )));
    }
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
    Ok(())
}

/// The content and permission bits of the file `path` stands for (through links).
pub fn read_with_mode(path: &Path) -> io::Result<(Vec<u8>, u32)> {
    let mut f = fs::File::open(path)?;
    let mode = f.metadata()?.permissions().mode() & 0o7777;
    let mut content = Vec::new();
    f.read_to_end(&mut content)?;
    Ok((content, mode))
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

/// Removes the file `path` stands for: through a symlink the file it points to goes and the link
/// stays (dangling, as it was before micoff created that file).
pub fn remove(path: &Path) -> io::Result<()> {
    fs::remove_file(resolve(path)?)
}

/// Hex SHA-256 of `bytes`: the record of what micoff wrote.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    fn mode(path: &Path) -> u32 {
        fs::metadata(path).unwrap().permissions().mode() & 0o7777
    }

    #[test]
    fn writes_atomically_with_the_exact_mode_and_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a/b/x.conf");
        write_atomic(&p, b"one\n", 0o644).unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"one\n");
        assert_eq!(mode(&p), 0o644);
        write_atomic(&p, b"two\n", 0o600).unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"two\n");
        assert_eq!(mode(&p), 0o600);
        assert_eq!(names(p.parent().unwrap()), ["x.conf"]);
    }

    #[test]
    fn the_mode_does_not_depend_on_the_umask() {
        // The umask is per process; the other tests here set every mode they check.
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("m.json");
        // SAFETY: umask only sets the process's file creation mask; restored right after.
        let old = unsafe { libc::umask(0o077) };
        let r = write_atomic(&p, b"{}\n", 0o644);
        // SAFETY: as above.
        unsafe { libc::umask(old) };
        r.unwrap();
        assert_eq!(mode(&p), 0o644);
    }

    #[test]
    fn writes_through_a_symlink_and_the_link_stays() {
        let dir = tempfile::tempdir().unwrap();
        let dotfiles = dir.path().join("dotfiles");
        fs::create_dir(&dotfiles).unwrap();
        fs::write(dotfiles.join("x.conf"), "theirs\n").unwrap();
        let conf = dir.path().join("conf");
        fs::create_dir(&conf).unwrap();
        let link = conf.join("x.conf");
        symlink("../dotfiles/x.conf", &link).unwrap();
        write_atomic(&link, b"ours\n", 0o644).unwrap();
        assert!(is_symlink(&link));
        assert_eq!(
            fs::read_link(&link).unwrap(),
            PathBuf::from("../dotfiles/x.conf")
        );
        assert_eq!(fs::read(dotfiles.join("x.conf")).unwrap(), b"ours\n");
        assert_eq!(names(&dotfiles), ["x.conf"]);
        assert_eq!(names(&conf), ["x.conf"]);
        // A link into a folder that does not exist: refused, nothing created.
        let dangling = conf.join("y.conf");
        symlink(dir.path().join("nowhere/y.conf"), &dangling).unwrap();
        let e = write_atomic(&dangling, b"ours\n", 0o644).unwrap_err();
        assert!(e.to_string().contains("whose folder does not exist"), "{e}");
        assert!(!dir.path().join("nowhere").exists());
    }

    #[test]
    fn copy_new_never_overwrites_and_never_follows_a_link() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("src");
        fs::write(&src, "data\n").unwrap();
        fs::set_permissions(&src, fs::Permissions::from_mode(0o640)).unwrap();
        let victim = dir.path().join("victim");
        fs::write(&victim, "precious\n").unwrap();
        let planted = dir.path().join("backup");
        symlink(&victim, &planted).unwrap();
        assert!(copy_new(&src, &planted).is_err());
        assert_eq!(fs::read(&victim).unwrap(), b"precious\n");
        let b = dir.path().join("backup2");
        copy_new(&src, &b).unwrap();
        assert_eq!(fs::read(&b).unwrap(), b"data\n");
        assert_eq!(mode(&b), 0o640);
        assert!(copy_new(&src, &b).is_err());
    }

    #[test]
    fn restore_through_a_link_keeps_the_link_and_the_mode() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.conf");
        fs::write(&real, "ours\n").unwrap();
        let link = dir.path().join("x.conf");
        symlink(&real, &link).unwrap();
        let backup = dir.path().join("x.conf.bak");
        fs::write(&backup, "theirs\n").unwrap();
        fs::set_permissions(&backup, fs::Permissions::from_mode(0o600)).unwrap();
        restore(&backup, &link).unwrap();
        assert_eq!(fs::read_link(&link).unwrap(), real);
        assert_eq!(fs::read(&real).unwrap(), b"theirs\n");
        assert_eq!(mode(&real), 0o600);
        assert!(!backup.exists());
        // A plain file: renamed into place.
        let plain = dir.path().join("plain.conf");
        fs::write(&plain, "ours\n").unwrap();
        fs::write(&backup, "theirs\n").unwrap();
        restore(&backup, &plain).unwrap();
        assert_eq!(fs::read(&plain).unwrap(), b"theirs\n");
        // remove() through a link removes what it points to, not the link.
        remove(&link).unwrap();
        assert!(is_symlink(&link));
        assert!(!real.exists());
    }

    #[test]
    fn resolve_follows_chains_and_stops_loops() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        let b = dir.path().join("b");
        symlink("b", &a).unwrap();
        symlink("c", &b).unwrap();
        assert_eq!(resolve(&a).unwrap(), dir.path().join("c"));
        let l1 = dir.path().join("l1");
        let l2 = dir.path().join("l2");
        symlink("l2", &l1).unwrap();
        symlink("l1", &l2).unwrap();
        assert!(resolve(&l1).is_err());
    }

    #[test]
    fn sha256_of_known_input() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
