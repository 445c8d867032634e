//! The machine as the installer sees it ([`InstallEnv`]: home, XDG folders, filesystem root,
//! `$PATH`, Flatpak apps) and which browsers are on it. Every path the installers use comes
//! through here, so the tests run in temp dirs; `from_system` is the one reader of the real
//! environment.

use std::path::{Path, PathBuf};

use micoff_browsers::Browser;

/// micoff's own system-wide folder, relative to the root: the copies of the crx and the xpi that
/// the browsers install from, and the record of what micoff wrote into Firefox's policies.
pub const SYSTEM_DATA_DIR: &str = "usr/local/share/micoff";

/// The legacy profile root, relative to the home: Firefox before 147 always, and any later one
/// while this folder exists.
pub const LEGACY_ROOT: &str = ".mozilla/firefox";
/// The XDG profile root, relative to the config home (`$XDG_CONFIG_HOME`, else `~/.config`):
/// Firefox 147 and later when [`LEGACY_ROOT`] does not exist (a new user's).
pub const XDG_ROOT: &str = "mozilla/firefox";
/// The snap Firefox's profile root, relative to the home (it runs with `HOME=$SNAP_USER_COMMON`,
/// docs/design/sandboxed-browsers.md).
pub const SNAP_ROOT: &str = "snap/firefox/common/.mozilla/firefox";

/// The machine as the installer sees it.
#[derive(Debug, Clone)]
pub struct InstallEnv {
    pub home: PathBuf,
    /// `$XDG_CONFIG_HOME`; `home/.config` when unset.
    pub config_home: Option<PathBuf>,
    /// Filesystem root for system folders and known binary paths (`/`, or a temp dir in tests).
    pub root: PathBuf,
    /// `$PATH` entries.
    pub path_dirs: Vec<PathBuf>,
    /// Installed Flatpak app ids (`flatpak list`); folders under `~/.var/app` count too.
    pub flatpak_apps: Vec<String>,
    /// `$XDG_DATA_HOME`; `home/.local/share` when unset.
    pub data_home: Option<PathBuf>,
    /// `$XDG_STATE_HOME`; `home/.local/state` when unset: micoff's record of what it wrote.
    pub state_home: Option<PathBuf>,
}

impl InstallEnv {
    /// The real machine, from the environment. As root, for a per-user install (`system` false),
    /// the user's folders must be root's own (micoff-files' `user_dirs`: `sudo -E` would hand root
    /// another user's folders); `--system` writes none of them.
    pub fn from_system(system: bool) -> Result<Self, String> {
        let euid = if system {
            // Only read there (a Flatpak's folder, a profile that makes a browser detected).
            u32::MAX
        } else {
            // SAFETY: geteuid has no preconditions and cannot fail.
            unsafe { libc::geteuid() }
        };
        let dirs = micoff_files::user_dirs::from_env(
            &|name| std::env::var_os(name),
            euid,
            "micoff-host install",
        )?;
        let path_dirs = std::env::var_os("PATH")
            .map(|p| std::env::split_paths(&p).collect())
            .unwrap_or_default();
        let mut env = Self {
            home: dirs.home,
            config_home: dirs.config_home,
            root: PathBuf::from("/"),
            path_dirs,
            flatpak_apps: Vec::new(),
            data_home: dirs.data_home,
            state_home: dirs.state_home,
        };
        if env.find_binary("flatpak").is_some() {
            env.flatpak_apps = flatpak_list();
        }
        Ok(env)
    }

    /// `$XDG_STATE_HOME`, else `~/.local/state`.
    pub fn state_home(&self) -> PathBuf {
        self.state_home
            .clone()
            .unwrap_or_else(|| self.home.join(".local/state"))
    }

    /// micoff's record of what it wrote: the user's, or with `system` the system's (under the
    /// root).
    pub fn record(&self, system: bool) -> PathBuf {
        if system {
            micoff_files::record::system_record(&self.root)
        } else {
            micoff_files::record::user_record(&self.state_home())
        }
    }

    /// Every folder a user's Firefox keeps its `profiles.ini` in, in Firefox's order: the legacy root
    /// (the one Firefox uses while it exists), the XDG one, the snap's. Duplicates (an
    /// `$XDG_CONFIG_HOME` that makes both the same) once.
    pub fn firefox_profile_roots(&self) -> Vec<PathBuf> {
        let mut roots = Vec::new();
        for root in [
            self.home.join(LEGACY_ROOT),
            self.config_home().join(XDG_ROOT),
            self.home.join(SNAP_ROOT),
        ] {
            if !roots.contains(&root) {
                roots.push(root);
            }
        }
        roots
    }

    /// `$XDG_CONFIG_HOME`, else `~/.config`.
    pub fn config_home(&self) -> PathBuf {
        self.config_home
            .clone()
            .unwrap_or_else(|| self.home.join(".config"))
    }

    /// `$XDG_DATA_HOME`, else `~/.local/share`.
    pub fn data_home(&self) -> PathBuf {
        self.data_home
            .clone()
            .unwrap_or_else(|| self.home.join(".local/share"))
    }

    /// The folder a browser's per-user paths (`user_dir`, `profile_marker`) are relative to: home
    /// for Firefox, the config home for the others.
    pub fn user_base(&self, browser: Browser) -> PathBuf {
        if browser.is_firefox() {
            self.home.clone()
        } else {
            self.config_home()
        }
    }

    fn find_binary(&self, name: &str) -> Option<PathBuf> {
        self.path_dirs
            .iter()
            .map(|d| d.join(name))
            .find(|p| is_executable(p))
    }

    /// Why we think `browser` is installed (`None`: not found): its executable in `$PATH` or at a
    /// usual install location, its snap, or the profile state it writes when it runs. Never a
    /// folder (this command creates the folders above the manifests itself).
    pub fn detect(&self, browser: Browser) -> Option<String> {
        let facts = browser.facts();
        if let Some(bin) = browser.commands().find_map(|b| self.find_binary(b)) {
            return Some(format!("{} in PATH", bin.display()));
        }
        if let Some(p) = browser
            .install_paths()
            .map(|p| self.root.join(p))
            .find(|p| is_executable(p))
        {
            return Some(p.display().to_string());
        }
        if let Some(p) = facts
            .install_dir_prefixes
            .iter()
            .find_map(|prefix| self.find_under_prefix(prefix))
        {
            return Some(p.display().to_string());
        }
        if let (Some(name), Some(link)) = (facts.snap, self.snap(browser)) {
            return Some(format!("snap {name} ({})", link.display()));
        }
        let markers = if browser.is_firefox() {
            self.firefox_profile_roots()
                .into_iter()
                .map(|r| r.join("profiles.ini"))
                .collect()
        } else {
            vec![self.user_base(browser).join(browser.profile_marker())]
        };
        markers
            .into_iter()
            .find(|m| m.is_file())
            .map(|m| format!("profile {}", m.display()))
    }

    /// Every Firefox executable found (PATH, the usual install locations), links not resolved.
    pub fn firefox_executables(&self) -> Vec<PathBuf> {
        let firefox = Browser::Firefox;
        let mut out: Vec<PathBuf> = firefox
            .commands()
            .filter_map(|b| self.find_binary(b))
            .collect();
        out.extend(
            firefox
                .install_paths()
                .map(|p| self.root.join(p))
                .filter(|p| is_executable(p)),
        );
        out.extend(
            firefox
                .facts()
                .install_dir_prefixes
                .iter()
                .flat_map(|prefix| self.find_all_under_prefix(prefix)),
        );
        out
    }

    /// An executable `<prefix>*/<stem>*` where `<stem>` is the prefix's last part
    /// (`usr/lib/firefox` matches `/usr/lib/firefox-esr/firefox-esr`).
    fn find_under_prefix(&self, prefix: &str) -> Option<PathBuf> {
        self.find_all_under_prefix(prefix).into_iter().next()
    }

    /// Every executable `<prefix>*/<stem>*`, sorted.
    fn find_all_under_prefix(&self, prefix: &str) -> Vec<PathBuf> {
        let full = self.root.join(prefix);
        let Some(stem) = full.file_name().map(|s| s.to_string_lossy().into_owned()) else {
            return Vec::new();
        };
        let sorted_matches = |dir: &Path| -> Vec<PathBuf> {
            let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
                .map(|rd| {
                    rd.filter_map(|e| e.ok())
                        .filter(|e| e.file_name().to_string_lossy().starts_with(&stem))
                        .map(|e| e.path())
                        .collect()
                })
                .unwrap_or_default();
            found.sort();
            found
        };
        let Some(parent) = full.parent() else {
            return Vec::new();
        };
        sorted_matches(parent)
            .iter()
            .flat_map(|dir| sorted_matches(dir))
            .filter(|p| is_executable(p))
            .collect()
    }

    /// The snap's command (`/snap/bin/<name>`), when that browser is installed as a snap: the
    /// link to `/usr/bin/snap` existing is the fact.
    pub fn snap(&self, browser: Browser) -> Option<PathBuf> {
        let link = self.root.join("snap/bin").join(browser.facts().snap?);
        std::fs::symlink_metadata(&link).is_ok().then_some(link)
    }

    /// The Flatpak app folder (`~/.var/app/<id>`), when that browser is installed as a Flatpak.
    pub fn flatpak(&self, browser: Browser) -> Option<PathBuf> {
        let id = browser.facts().flatpak_id;
        let dir = self.home.join(".var/app").join(id);
        (dir.is_dir() || self.flatpak_apps.iter().any(|a| a == id)).then_some(dir)
    }
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

fn flatpak_list() -> Vec<String> {
    match std::process::Command::new("flatpak")
        .args(["list", "--app", "--columns=application"])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
    {
        Ok(out) if out.status.success() => String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| l.trim().to_owned())
            .filter(|l| !l.is_empty())
            .collect(),
        _ => Vec::new(),
    }
}
