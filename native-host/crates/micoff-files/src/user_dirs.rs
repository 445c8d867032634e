//! The user's folders micoff writes in (`$HOME`, `$XDG_CONFIG_HOME`, `$XDG_DATA_HOME`,
//! `$XDG_STATE_HOME`), from an environment, and whom to believe about them. The XDG variables count
//! only when absolute (as the XDG base directory spec says). As root they are not believed blindly:
//! `sudo -E` keeps the invoking user's environment, and root would then write root's files into
//! that user's folders (files the user can no longer change or remove, through links the user
//! controls). So as root every one of them must be a folder of root's (or under one); else the
//! command is refused with what to run instead. Without `$HOME`, root's home comes from the
//! password database.

use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::shown::shown;

/// The user's folders.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserDirs {
    pub home: PathBuf,
    /// `$XDG_CONFIG_HOME` (`None`: `~/.config`).
    pub config_home: Option<PathBuf>,
    /// `$XDG_DATA_HOME` (`None`: `~/.local/share`).
    pub data_home: Option<PathBuf>,
    /// `$XDG_STATE_HOME` (`None`: `~/.local/state`), where micoff keeps its record.
    pub state_home: Option<PathBuf>,
}

impl UserDirs {
    /// `$XDG_STATE_HOME`, else `~/.local/state`.
    pub fn state_home(&self) -> PathBuf {
        self.state_home
            .clone()
            .unwrap_or_else(|| self.home.join(".local/state"))
    }
}

/// The variables read, in the order they are checked.
const VARS: [&str; 4] = ["HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"];

/// The user's folders from `var` (the process environment, or a test's), for a process running
/// with effective uid `euid`; `command` names the command in the refusal (`micoff-host install`).
pub fn from_env(
    var: &dyn Fn(&str) -> Option<OsString>,
    euid: u32,
    command: &str,
) -> Result<UserDirs, String> {
    let abs = |name: &str| var(name).map(PathBuf::from).filter(|p| p.is_absolute());
    let home = match abs("HOME") {
        Some(h) => h,
        None if euid == 0 => root_home().ok_or("$HOME is not set, and root has no home folder")?,
        None => return Err("$HOME is not set to an absolute path".to_owned()),
    };
    if euid == 0 {
        for name in VARS {
            let Some(p) = (if name == "HOME" {
                Some(home.clone())
            } else {
                abs(name)
            }) else {
                continue;
            };
            if let Some(uid) = owner_of_nearest(&p).filter(|uid| *uid != 0) {
                return Err(format!(
                    "{command} runs as root, but ${name} is {}, a folder of uid {uid} (sudo -E \
                     keeps your environment): root's files would land in another user's folders. \
                     Run it as that user, without sudo (or for every user with --system where the \
                     command has it)",
                    shown(&p)
                ));
            }
        }
    }
    Ok(UserDirs {
        home,
        config_home: abs("XDG_CONFIG_HOME"),
        data_home: abs("XDG_DATA_HOME"),
        state_home: abs("XDG_STATE_HOME"),
    })
}

/// The owner of `p`, or of the nearest folder above it that exists.
fn owner_of_nearest(p: &Path) -> Option<u32> {
    p.ancestors()
        .find_map(|a| std::fs::metadata(a).ok())
        .map(|m| m.uid())
}

/// Root's home folder from the password database.
fn root_home() -> Option<PathBuf> {
    // SAFETY: getpwuid returns a pointer into static storage or null; read at once.
    let pw = unsafe { libc::getpwuid(0) };
    if pw.is_null() {
        return None;
    }
    // SAFETY: pw is valid here; pw_dir is null or NUL-terminated.
    let dir = unsafe { (*pw).pw_dir };
    if dir.is_null() {
        return None;
    }
    // SAFETY: as above.
    let s = unsafe { std::ffi::CStr::from_ptr(dir) };
    Some(PathBuf::from(std::ffi::OsStr::from_bytes(s.to_bytes())))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::collections::HashMap;
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn env(pairs: &[(&str, &Path)]) -> impl Fn(&str) -> Option<OsString> {
        let map: HashMap<String, OsString> = pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.as_os_str().to_owned()))
            .collect();
        move |k| map.get(k).cloned()
    }

    #[test]
    fn xdg_folders_count_only_when_absolute() {
        let tmp = tempfile::tempdir().unwrap();
        let d = from_env(
            &env(&[
                ("HOME", tmp.path()),
                ("XDG_CONFIG_HOME", Path::new("relative/config")),
                ("XDG_STATE_HOME", &tmp.path().join("state")),
            ]),
            1000,
            "x",
        )
        .unwrap();
        assert_eq!(d.config_home, None);
        assert_eq!(d.state_home(), tmp.path().join("state"));
        assert!(from_env(&env(&[]), 1000, "x").is_err());
    }

    #[test]
    #[ignore = "needs root to chown a folder to another user: cargo test -- --include-ignored as root (npm test does)"]
    fn as_root_another_users_folders_are_refused() {
        // Before: XDG variables were taken as they came under sudo -E, and root wrote its files
        // into the user's folders.
        let tmp = tempfile::tempdir().unwrap();
        std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let theirs = tmp.path().join("home-u");
        std::fs::create_dir(&theirs).unwrap();
        std::os::unix::fs::chown(&theirs, Some(1000), Some(1000)).unwrap();
        let e = from_env(&env(&[("HOME", &theirs)]), 0, "micoff-host install").unwrap_err();
        assert!(
            e.contains("$HOME is") && e.contains("a folder of uid 1000"),
            "{e}"
        );
        assert!(e.contains("sudo -E"), "{e}");
        // A folder still to be made below theirs: theirs all the same.
        let e = from_env(
            &env(&[
                ("HOME", tmp.path()),
                ("XDG_STATE_HOME", &theirs.join(".local/state")),
            ]),
            0,
            "micoff-host install",
        )
        .unwrap_err();
        assert!(e.contains("$XDG_STATE_HOME"), "{e}");
        // Root's own folders are root's to write.
        assert!(from_env(&env(&[("HOME", tmp.path())]), 0, "x").is_ok());
        // Not root: nothing to check.
        assert!(from_env(&env(&[("HOME", &theirs)]), 1000, "x").is_ok());
    }
}
