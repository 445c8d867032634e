//! Where the latency files go: the user's XDG folders (`$XDG_CONFIG_HOME`, `$XDG_DATA_HOME`,
//! `$XDG_DATA_DIRS`), `~/.local/bin`, and `$PATH`, where the browsers' own commands are found.
//! Read from an environment map, so tests and the host alike pass their own.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};

/// The drop-in's file name in `pipewire-pulse.conf.d/`.
pub const RULE_FILE_NAME: &str = "50-micoff-capture-latency.conf";

/// The folders the writers use (`$XDG_CONFIG_HOME`, `$XDG_DATA_HOME`, `$XDG_DATA_DIRS`,
/// `~/.local/bin`) and `$PATH`, where the browsers' own commands are found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Paths {
    pub config_home: PathBuf,
    pub data_home: PathBuf,
    pub data_dirs: Vec<PathBuf>,
    /// `$HOME/.local/bin` (the XDG base directory spec's place for a user's executables), where
    /// the PATH wrappers go; None without `$HOME`.
    pub bin_home: Option<PathBuf>,
    /// `$PATH`'s absolute folders, in order.
    pub path_dirs: Vec<PathBuf>,
    /// `$XDG_STATE_HOME`, else `$HOME/.local/state`: where micoff keeps its record of what it
    /// wrote (None without either: nothing is recorded).
    pub state_home: Option<PathBuf>,
}

impl Paths {
    /// From an environment: XDG variables (absolute paths only, as the spec says), else `$HOME`.
    pub fn from_env(env: &HashMap<String, String>) -> Result<Paths, String> {
        let abs = |k: &str| env.get(k).map(PathBuf::from).filter(|p| p.is_absolute());
        let home = abs("HOME");
        let under_home = |rel: &str| -> Result<PathBuf, String> {
            home.as_ref()
                .map(|h| h.join(rel))
                .ok_or_else(|| "neither XDG_CONFIG_HOME/XDG_DATA_HOME nor HOME is set".to_owned())
        };
        let config_home = match abs("XDG_CONFIG_HOME") {
            Some(p) => p,
            None => under_home(".config")?,
        };
        let data_home = match abs("XDG_DATA_HOME") {
            Some(p) => p,
            None => under_home(".local/share")?,
        };
        let data_dirs: Vec<PathBuf> = env
            .get("XDG_DATA_DIRS")
            .filter(|s| !s.trim().is_empty())
            .map_or("/usr/local/share:/usr/share", String::as_str)
            .split(':')
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
            .collect();
        let path_dirs = env
            .get("PATH")
            .map(|p| {
                p.split(':')
                    .map(PathBuf::from)
                    .filter(|p| p.is_absolute())
                    .collect()
            })
            .unwrap_or_default();
        Ok(Paths {
            config_home,
            data_home,
            data_dirs,
            state_home: abs("XDG_STATE_HOME")
                .or_else(|| home.as_ref().map(|h| h.join(".local/state"))),
            bin_home: home.map(|h| h.join(".local").join("bin")),
            path_dirs,
        })
    }

    /// From this process's environment. As root, the user's folders must be root's own
    /// (micoff-files' `user_dirs`: under `sudo -E` they are another user's, and root's files would
    /// land there).
    pub fn from_process_env() -> Result<Paths, String> {
        // SAFETY: geteuid has no preconditions and cannot fail.
        if unsafe { libc::geteuid() } == 0 {
            micoff_files::user_dirs::from_env(
                &|name| std::env::var_os(name),
                0,
                "micoff-host latency",
            )?;
        }
        Self::from_env(&std::env::vars().collect())
    }

    /// micoff's record of what it wrote (None: no state folder known).
    pub fn record(&self) -> Option<PathBuf> {
        self.state_home
            .as_deref()
            .map(micoff_files::record::user_record)
    }

    /// What micoff's record calls the latency file at `path`.
    pub fn role_of(&self, path: &Path) -> &'static str {
        if path == self.rule_file() {
            "latency rule (pipewire-pulse)"
        } else if path.parent() == Some(self.user_applications().as_path()) {
            "latency desktop entry"
        } else {
            "latency wrapper"
        }
    }

    pub fn rule_file(&self) -> PathBuf {
        self.config_home
            .join("pipewire")
            .join("pipewire-pulse.conf.d")
            .join(RULE_FILE_NAME)
    }

    pub fn user_applications(&self) -> PathBuf {
        self.data_home.join("applications")
    }

    /// micoff's wrapper of `command` (None without a home).
    pub fn wrapper(&self, command: &str) -> Option<PathBuf> {
        self.bin_home.as_ref().map(|b| b.join(command))
    }

    /// The browser's own `command`: the first executable file of that name in `$PATH` outside
    /// [`Paths::bin_home`] (the wrapper must never run itself), whose path the wrapper can hold
    /// ([`wrapper_can_hold`]).
    pub(super) fn real_command(&self, command: &str) -> Option<PathBuf> {
        use std::os::unix::fs::PermissionsExt;
        self.path_dirs
            .iter()
            .filter(|d| self.bin_home.as_deref() != Some(d.as_path()))
            .map(|d| d.join(command))
            .filter(|p| wrapper_can_hold(p))
            .find(|p| {
                fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
            })
    }

    /// Whether a command named like the wrapper is found in `~/.local/bin` before `target`'s
    /// folder (else the shell runs the browser's own command and the wrapper does nothing).
    pub(super) fn wrapper_first(&self, target: &Path) -> bool {
        let (Some(bin), Some(dir)) = (self.bin_home.as_deref(), target.parent()) else {
            return false;
        };
        let at = |d: &Path| self.path_dirs.iter().position(|p| p == d);
        match (at(bin), at(dir)) {
            (Some(b), Some(t)) => b < t,
            (Some(_), None) => true,
            _ => false,
        }
    }

    /// The system desktop entry `id` would override: the first in `$XDG_DATA_DIRS`.
    pub(super) fn system_desktop_entry(&self, id: &str) -> Option<PathBuf> {
        self.data_dirs
            .iter()
            .map(|d| d.join("applications").join(id))
            .find(|p| p.is_file())
    }
}

/// Whether a wrapper can name `target`: absolute (never taken for an option or looked up again),
/// UTF-8, and without a control character (it goes into a comment line, where a newline would
/// start a line of shell and an escape sequence would rewrite what `cat` shows; in the exec line
/// it is single-quoted, which holds every other character, `=`, quotes and `$` included).
pub(super) fn wrapper_can_hold(target: &Path) -> bool {
    target.is_absolute()
        && target
            .to_str()
            .is_some_and(|s| !s.chars().any(char::is_control))
}
