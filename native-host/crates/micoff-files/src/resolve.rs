//! Which symlinks micoff follows when it writes, restores or removes a file: [`resolve`], and the
//! trust it rests on (the user running micoff or root, folders nobody else can write).

use std::collections::VecDeque;
use std::ffi::OsString;
use std::fs;
use std::io;
use std::path::{Component, Path, PathBuf};

use crate::shown::shown;

/// Symlinks followed at most (as the kernel's own limit, `MAXSYMLINKS`).
const MAX_LINKS: usize = 40;

/// The file `path` stands for: `path` itself, or where the symlinks on its way lead (which may
/// not exist yet: a dangling link, a folder still to be made). The whole path is walked here as
/// the kernel would walk it, folders included, so micoff checks what the kernel's
/// `protected_symlinks` would not see, and refuses (`PermissionDenied`, naming the link and why)
/// to follow a link, at the file or in any folder on its way, that someone else could have planted
/// or redirected:
///
/// - each link must be owned by a trusted user: the one running micoff (effective uid) or root;
///   as root only root-owned links are followed;
/// - each link must sit in a safe folder, and the file the path ends at must be in one (that is
///   where such a file may live; when that folder does not exist yet, the nearest one above it
///   that does);
/// - the file it ends at, when it exists, must be owned by a trusted user.
///
/// A safe folder is owned by a trusted user and not writable by others (group or world, sticky
/// or not), unless the group is the owner's private group (same name, the owner's primary group,
/// no other members: what Debian/Ubuntu give every user, whose umask 002 makes the user's own
/// folders group-writable); every folder above it is owned by a trusted user too and not writable
/// by others unless sticky (like `/tmp`, where no one else can rename the entry below it, which
/// must itself be trusted). A path with no link on its way is returned as it is; the returned path
/// of a followed one is the end's folder made canonical plus its name: the folder that was checked
/// is the one written in.
pub fn resolve(path: &Path) -> io::Result<PathBuf> {
    let trust = Trust::current();
    let mut todo: VecDeque<OsString> = path
        .components()
        .map(|c| c.as_os_str().to_owned())
        .collect();
    let mut done = PathBuf::new();
    let mut links = 0usize;
    while let Some(part) = todo.pop_front() {
        match Path::new(&part).components().next() {
            Some(Component::RootDir) => done = PathBuf::from("/"),
            Some(Component::CurDir) | None => {}
            Some(Component::ParentDir) => {
                if done.as_os_str().is_empty() || done.ends_with("..") {
                    done.push("..");
                } else {
                    done.pop();
                }
            }
            Some(Component::Normal(name)) => {
                let next = done.join(name);
                match fs::symlink_metadata(&next) {
                    Ok(m) if m.file_type().is_symlink() => {
                        links += 1;
                        if links > MAX_LINKS {
                            return Err(io::Error::other(format!(
                                "{}: more than {MAX_LINKS} symlinks on its way",
                                shown(path)
                            )));
                        }
                        trust.check_link(path, &next, &m)?;
                        let target = fs::read_link(&next)?;
                        // The link's target takes its place, walked the same way.
                        for c in target.components().rev() {
                            todo.push_front(c.as_os_str().to_owned());
                        }
                    }
                    _ => done = next,
                }
            }
            Some(Component::Prefix(_)) => {}
        }
    }
    if links == 0 {
        return Ok(path.to_path_buf());
    }
    let found = fs::symlink_metadata(&done).ok();
    trust.check_target(path, &done, found.as_ref())
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
                shown(path)
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
            // Folders still to be made (the writer makes them, unless the file itself is a
            // link: nothing is created at the end of one): the nearest folder that exists is
            // where they will be, and it must be safe.
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                if let Some(existing) = folder_of(end).ancestors().find(|a| a.is_dir()) {
                    self.check_folder(path, &fs::canonicalize(existing)?)?;
                }
                return Ok(end.to_path_buf());
            }
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
