//! The one way micoff writes files outside its own folder (browser manifests, `/etc/modprobe.d`,
//! `~/.config/pulse/client.conf`, `/run` state) and puts them back.
//!
//! - Writes go to a randomly named temporary file created exclusively (`O_CREAT|O_EXCL`, so a
//!   symlink or file planted at that name is never followed or reused) in the folder of the file
//!   written, get their mode with `fchmod` (whatever the umask), are synced, then renamed over the
//!   target: readers see the old file or the new one, never half of one.
//! - A target that is a symlink (dotfiles setups) is written THROUGH the link: the file it points
//!   to gets the new content and the link stays a link pointing where it pointed. Only a link
//!   nobody else could have planted or redirected is followed ([`resolve`]): every link of the
//!   chain and the file it ends at belong to the user running micoff or to root, and sit in
//!   [safe folders](resolve); anything else is refused with a message and nothing is written.
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
/// exist yet: a dangling link). Only the last component is followed in user space (folders on the
/// way are whatever the kernel makes of them), so micoff checks what the kernel's
/// `protected_symlinks` would not see here, and refuses (`PermissionDenied`, naming the link and
/// why) to follow a chain that someone else could have planted or redirected:
///
/// - each link must be owned by a trusted user: the one running micoff (effective uid) or root;
///   as root only root-owned links are followed;
/// - each link must sit in a safe folder, and the file the chain ends at must be in one (that is
///   where such a file may live);
/// - the file it ends at, when it exists, must be owned by a trusted user.
///
/// A safe folder is owned by a trusted user and not writable by others (group or world, sticky
/// or not), unless the group is the owner's private group (same name, the owner's primary group,
/// no other members: what Debian/Ubuntu give every user, whose umask 002 makes the user's own
/// folders group-writable); every folder above it is owned by a trusted user too and not writable
/// by others unless sticky (like `/tmp`, where no one else can rename the entry below it, which
/// must itself be trusted). The returned path of a followed link is the target's folder made
/// canonical plus its name: the folder that was checked is the one written in.
pub fn resolve(path: &Path) -> io::Result<PathBuf> {
    let trust = Trust::current();
    let mut p = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        match fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                trust.check_link(path, &p, &m)?;
                let target = fs::read_link(&p)?;
                p = if target.is_absolute() {
                    target
                } else {
                    folder_of(&p).join(target)
                };
            }
            found => {
                if p == path {
                    return Ok(p);
                }
                return trust.check_target(path, &p, found.ok().as_ref());
            }
        }
    }
    Err(io::Error::other(format!(
        "{}: more than {MAX_LINKS} symlinks in a row",
        path.display()
    )))
}

/// The folder holding `p` (`.` for a bare name).
fn folder_of(p: &Path) -> &Path {
    match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// Whom micoff trusts with the links it follows and the folders it writes in through them.
struct Trust {
    euid: u32,
}

impl Trust {
    fn current() -> Self {
        // SAFETY: geteuid has no preconditions and cannot fail.
        Self {
            euid: unsafe { libc::geteuid() },
        }
    }

    fn trusted(&self, uid: u32) -> bool {
        uid == self.euid || uid == 0
    }

    fn who(&self) -> String {
        if self.euid == 0 {
            "root".to_owned()
        } else {
            format!("you (uid {}) or root", self.euid)
        }
    }

    fn refuse(&self, path: &Path, why: String) -> io::Error {
        io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "{} is a symlink micoff does not follow: {why}; nothing written (replace the link \
                 with a file, or point it at a file of yours in a folder only you can write)",
                path.display()
            ),
        )
    }

    /// The link `link` (met while resolving `path`): trusted owner, in a safe folder.
    fn check_link(&self, path: &Path, link: &Path, m: &fs::Metadata) -> io::Result<()> {
        use std::os::unix::fs::MetadataExt;
        if !self.trusted(m.uid()) {
            let what = if link == path {
                "it".to_owned()
            } else {
                format!("the link {} on its way", link.display())
            };
            return Err(self.refuse(
                path,
                format!("{what} is owned by uid {}, not by {}", m.uid(), self.who()),
            ));
        }
        let folder = fs::canonicalize(folder_of(link))?;
        self.check_folder(path, &folder)
    }

    /// Where the chain of `path` ends (`end`, with its metadata when it exists): a trusted owner
    /// and a safe folder. Returns the path to write: the canonical folder plus the name.
    fn check_target(
        &self,
        path: &Path,
        end: &Path,
        m: Option<&fs::Metadata>,
    ) -> io::Result<PathBuf> {
        use std::os::unix::fs::MetadataExt;
        let Some(name) = end.file_name() else {
            return Err(self.refuse(path, format!("it ends at {}, not a file", end.display())));
        };
        let folder = match fs::canonicalize(folder_of(end)) {
            Ok(f) => f,
            // A link into a folder that does not exist: the caller says so (nothing is created
            // at the end of a link).
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(end.to_path_buf()),
            Err(e) => return Err(e),
        };
        if let Some(m) = m {
            if !self.trusted(m.uid()) {
                return Err(self.refuse(
                    path,
                    format!(
                        "the file it points to, {}, is owned by uid {}, not by {}",
                        end.display(),
                        m.uid(),
                        self.who()
                    ),
                ));
            }
        }
        self.check_folder(path, &folder)?;
        Ok(folder.join(name))
    }

    /// `folder` (canonical) is safe: see [`resolve`].
    fn check_folder(&self, path: &Path, folder: &Path) -> io::Result<()> {
        use std::os::unix::fs::MetadataExt;
        let mut ancestors: Vec<&Path> = folder.ancestors().collect();
        ancestors.reverse(); // from `/` down to `folder`
        let last = ancestors.len().saturating_sub(1);
        for (i, dir) in ancestors.iter().enumerate() {
            let m = fs::metadata(dir)?;
            if !self.trusted(m.uid()) {
                return Err(self.refuse(
                    path,
                    format!(
                        "the folder {} is owned by uid {}, not by {}",
                        dir.display(),
                        m.uid(),
                        self.who()
                    ),
                ));
            }
            let mode = m.mode();
            let others_write = mode & 0o002 != 0;
            let group_write = mode & 0o020 != 0 && !is_private_group(m.uid(), m.gid());
            if !others_write && !group_write {
                continue;
            }
            let sticky = mode & 0o1000 != 0;
            if i < last && sticky {
                // Nobody else can rename or remove the next folder down (checked next).
                continue;
            }
            return Err(self.refuse(
                path,
                format!(
                    "the folder {} can be written by {} (mode {:o})",
                    dir.display(),
                    if others_write {
                        "everyone"
                    } else {
                        "other members of its group"
                    },
                    mode & 0o7777
                ),
            ));
        }
        Ok(())
    }
}

/// Whether `gid` is `uid`'s private group: the user's primary group, named like the user, with no
/// other member listed.
fn is_private_group(uid: u32, gid: u32) -> bool {
    let Some((user, primary)) = passwd_entry(uid) else {
        return false;
    };
    let Some((group, members)) = group_entry(gid) else {
        return false;
    };
    primary == gid && group == user && members.iter().all(|m| *m == user)
}

/// Runs a `get*_r` lookup with a growing buffer; `None` when there is no entry or it fails.
fn lookup_with_buffer(mut call: impl FnMut(&mut [libc::c_char]) -> libc::c_int) -> Option<()> {
    let mut buf: Vec<libc::c_char> = vec![0; 4096];
    loop {
        match call(&mut buf) {
            0 => return Some(()),
            libc::ERANGE if buf.len() < 1 << 20 => buf = vec![0; buf.len() * 4],
            _ => return None,
        }
    }
}

/// # Safety
/// `p` is null or a NUL-terminated string.
unsafe fn c_string(p: *const libc::c_char) -> Option<String> {
    if p.is_null() {
        return None;
    }
    // SAFETY: as the caller promises.
    Some(
        unsafe { std::ffi::CStr::from_ptr(p) }
            .to_string_lossy()
            .into_owned(),
    )
}

/// A user's name and primary group.
fn passwd_entry(uid: u32) -> Option<(String, u32)> {
    let mut out = None;
    lookup_with_buffer(|buf| {
        // SAFETY: an all-zero passwd is a valid value to be filled in.
        let mut pw: libc::passwd = unsafe { std::mem::zeroed() };
        let mut result: *mut libc::passwd = std::ptr::null_mut();
        // SAFETY: every pointer is valid for the call; `buf.len()` is the buffer's size.
        let rc =
            unsafe { libc::getpwuid_r(uid, &mut pw, buf.as_mut_ptr(), buf.len(), &mut result) };
        if rc == 0 && !result.is_null() {
            // SAFETY: filled in by getpwuid_r, pointing into `buf`, alive here.
            out = unsafe { c_string(pw.pw_name) }.map(|n| (n, pw.pw_gid));
        }
        if rc == 0 && result.is_null() {
            return libc::ENOENT;
        }
        rc
    })?;
    out
}

/// A group's name and listed members.
fn group_entry(gid: u32) -> Option<(String, Vec<String>)> {
    let mut out = None;
    lookup_with_buffer(|buf| {
        // SAFETY: an all-zero group is a valid value to be filled in.
        let mut gr: libc::group = unsafe { std::mem::zeroed() };
        let mut result: *mut libc::group = std::ptr::null_mut();
        // SAFETY: every pointer is valid for the call; `buf.len()` is the buffer's size.
        let rc =
            unsafe { libc::getgrgid_r(gid, &mut gr, buf.as_mut_ptr(), buf.len(), &mut result) };
        if rc == 0 && !result.is_null() {
            let mut members = Vec::new();
            let mut m = gr.gr_mem;
            // SAFETY: gr_mem is a NULL-terminated array of strings inside `buf`.
            while !m.is_null() && !unsafe { *m }.is_null() {
                // SAFETY: as above.
                members.extend(unsafe { c_string(*m) });
                // SAFETY: still inside the NULL-terminated array.
                m = unsafe { m.add(1) };
            }
            // SAFETY: filled in by getgrgid_r, pointing into `buf`, alive here.
            out = unsafe { c_string(gr.gr_name) }.map(|n| (n, members));
        }
        if rc == 0 && result.is_null() {
            return libc::ENOENT;
        }
        rc
    })?;
    out
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
        let canonical = fs::canonicalize(dir.path()).unwrap();
        assert_eq!(resolve(&a).unwrap(), canonical.join("c"));
        let l1 = dir.path().join("l1");
        let l2 = dir.path().join("l2");
        symlink("l2", &l1).unwrap();
        symlink("l1", &l2).unwrap();
        assert!(resolve(&l1).is_err());
    }

    /// A dotfiles-style setup in a fresh temporary folder: `conf/x.conf -> ../dotfiles/x.conf`.
    struct Dotfiles {
        dir: tempfile::TempDir,
    }

    impl Dotfiles {
        fn new() -> Self {
            let dir = tempfile::tempdir().unwrap();
            for d in ["conf", "dotfiles"] {
                fs::create_dir(dir.path().join(d)).unwrap();
                fs::set_permissions(dir.path().join(d), fs::Permissions::from_mode(0o755)).unwrap();
            }
            fs::write(dir.path().join("dotfiles/x.conf"), "theirs\n").unwrap();
            symlink("../dotfiles/x.conf", dir.path().join("conf/x.conf")).unwrap();
            Self { dir }
        }
        fn at(&self, rel: &str) -> PathBuf {
            self.dir.path().join(rel)
        }
        fn link(&self) -> PathBuf {
            self.at("conf/x.conf")
        }
        fn target(&self) -> PathBuf {
            self.at("dotfiles/x.conf")
        }
        /// Every way of writing through the link is refused with `needle` in the message, and
        /// the target and the link stay as they were.
        fn assert_refused(&self, needle: &str) {
            let backup = self.at("backup");
            fs::write(&backup, "backup\n").unwrap();
            for (what, r) in [
                ("write_atomic", write_atomic(&self.link(), b"ours\n", 0o644)),
                ("restore", restore(&backup, &self.link())),
                ("remove", remove(&self.link())),
            ] {
                let e = r.expect_err(what);
                assert_eq!(e.kind(), io::ErrorKind::PermissionDenied, "{what}: {e}");
                assert!(e.to_string().contains(needle), "{what}: {e}");
                assert!(e.to_string().contains("nothing written"), "{what}: {e}");
            }
            assert_eq!(fs::read(self.target()).unwrap(), b"theirs\n");
            assert!(is_symlink(&self.link()));
            assert_eq!(names(&self.at("dotfiles")), ["x.conf"]);
            assert_eq!(names(&self.at("conf")), ["x.conf"]);
            fs::remove_file(backup).unwrap();
        }
        fn assert_followed(&self) {
            write_atomic(&self.link(), b"ours\n", 0o644).unwrap();
            assert_eq!(fs::read(self.target()).unwrap(), b"ours\n");
            assert!(is_symlink(&self.link()));
        }
    }

    // Tests that plant files as another user need root (chown): they are `#[ignore]`d, so that a
    // run without root shows them as ignored rather than passing them untested, and run as root
    // with `cargo test -- --include-ignored` (npm test does, as root; under CI an ignored test
    // fails the run).

    /// A uid that is neither root nor whoever runs the tests (`nobody`).
    const OTHER_UID: u32 = 65534;

    #[test]
    fn a_link_in_a_folder_others_can_write_is_not_followed() {
        for mode in [0o777, 0o1777, 0o757] {
            let d = Dotfiles::new();
            fs::set_permissions(d.at("conf"), fs::Permissions::from_mode(mode)).unwrap();
            d.assert_refused("can be written by everyone");
        }
        // The same folder, closed again: followed (the control).
        let d = Dotfiles::new();
        d.assert_followed();
    }

    #[test]
    fn a_link_into_a_folder_others_can_write_is_not_followed() {
        for mode in [0o777, 0o1777] {
            let d = Dotfiles::new();
            fs::set_permissions(d.at("dotfiles"), fs::Permissions::from_mode(mode)).unwrap();
            d.assert_refused("can be written by everyone");
        }
    }

    #[test]
    #[ignore = "needs root to chown files to another user: cargo test -- --include-ignored as root (npm test does)"]
    fn a_link_planted_by_another_user_is_not_followed() {
        let d = Dotfiles::new();
        std::os::unix::fs::lchown(d.link(), Some(OTHER_UID), None).unwrap();
        d.assert_refused(&format!("owned by uid {OTHER_UID}, not by root"));
        // A link further down the chain, planted by someone else, is refused too.
        let d = Dotfiles::new();
        fs::rename(d.target(), d.at("dotfiles/real.conf")).unwrap();
        symlink("real.conf", d.target()).unwrap();
        std::os::unix::fs::lchown(d.target(), Some(OTHER_UID), None).unwrap();
        let e = write_atomic(&d.link(), b"ours\n", 0o644).unwrap_err();
        assert!(e.to_string().contains("on its way is owned by uid"), "{e}");
        assert_eq!(fs::read(d.at("dotfiles/real.conf")).unwrap(), b"theirs\n");
    }

    #[test]
    #[ignore = "needs root to chown files to another user: cargo test -- --include-ignored as root (npm test does)"]
    fn a_link_to_a_file_or_folder_of_another_user_is_not_followed() {
        let d = Dotfiles::new();
        std::os::unix::fs::chown(d.target(), Some(OTHER_UID), None).unwrap();
        d.assert_refused("the file it points to");
        // Their folder (mode 0755, so only they can write it): outside where a file of root's
        // may live.
        let d = Dotfiles::new();
        std::os::unix::fs::chown(d.at("dotfiles"), Some(OTHER_UID), None).unwrap();
        d.assert_refused(&format!("is owned by uid {OTHER_UID}, not by root"));
        // Any folder above it, too.
        let d = Dotfiles::new();
        fs::create_dir(d.at("theirs")).unwrap();
        fs::create_dir(d.at("theirs/mine")).unwrap();
        fs::write(d.at("theirs/mine/x.conf"), "theirs\n").unwrap();
        std::os::unix::fs::chown(d.at("theirs"), Some(OTHER_UID), None).unwrap();
        fs::remove_file(d.link()).unwrap();
        symlink("../theirs/mine/x.conf", d.link()).unwrap();
        let e = write_atomic(&d.link(), b"ours\n", 0o644).unwrap_err();
        assert!(e.to_string().contains("theirs is owned by uid"), "{e}");
        assert_eq!(fs::read(d.at("theirs/mine/x.conf")).unwrap(), b"theirs\n");
    }

    #[test]
    #[ignore = "needs root to chown files to another user: cargo test -- --include-ignored as root (npm test does)"]
    fn a_group_writable_folder_counts_as_safe_only_for_the_owners_private_group() {
        // root:root 0775 (root's own group, no other members): followed.
        let d = Dotfiles::new();
        assert!(
            is_private_group(0, 0),
            "root's group has other members here"
        );
        fs::set_permissions(d.at("conf"), fs::Permissions::from_mode(0o775)).unwrap();
        d.assert_followed();
        // The same folder handed to a shared group: refused.
        let d = Dotfiles::new();
        fs::set_permissions(d.at("conf"), fs::Permissions::from_mode(0o775)).unwrap();
        std::os::unix::fs::chown(d.at("conf"), None, Some(OTHER_UID)).unwrap();
        d.assert_refused("other members of its group");
    }

    #[test]
    fn sha256_of_known_input() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
