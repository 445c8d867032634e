//! Who the doctor is looking at ([`UserEnv`]: limits.conf and client.conf depend on the user),
//! and that user's groups from /etc/passwd and /etc/group under the root.

use std::path::PathBuf;

use crate::root::Root;
use crate::uid::current_uid;

/// Who the doctor is looking at (limits.conf and client.conf depend on the user).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UserEnv {
    pub user: Option<String>,
    /// Home directory as seen on the real machine (`/home/tommi`); read under the root.
    pub home: Option<PathBuf>,
    /// `$XDG_CONFIG_HOME` when set.
    pub xdg_config_home: Option<PathBuf>,
    /// `$XDG_STATE_HOME` when set: micoff's record of what it wrote is below it.
    pub xdg_state_home: Option<PathBuf>,
    /// `$PULSE_CLIENTCONFIG` when set.
    pub pulse_clientconfig: Option<PathBuf>,
}

impl UserEnv {
    /// From the process environment; under sudo, the invoking user (`$SUDO_USER`).
    pub fn from_process(root: &Root) -> Self {
        let sudo_user = std::env::var("SUDO_USER").ok().filter(|u| !u.is_empty());
        let user = sudo_user
            .clone()
            .or_else(|| std::env::var("USER").ok().filter(|u| !u.is_empty()))
            .or_else(|| passwd_name_for_uid(root, current_uid()));
        let home = match &sudo_user {
            Some(u) => passwd_home(root, u),
            None => std::env::var_os("HOME").map(PathBuf::from),
        };
        let xdg = |name: &str| {
            if sudo_user.is_some() {
                None
            } else {
                std::env::var_os(name)
                    .map(PathBuf::from)
                    .filter(|p| p.is_absolute())
            }
        };
        Self {
            user,
            home,
            xdg_config_home: xdg("XDG_CONFIG_HOME"),
            xdg_state_home: xdg("XDG_STATE_HOME"),
            pulse_clientconfig: std::env::var_os("PULSE_CLIENTCONFIG").map(PathBuf::from),
        }
    }

    /// `~/.config` (or `$XDG_CONFIG_HOME`).
    pub fn config_dir(&self) -> Option<PathBuf> {
        self.xdg_config_home
            .clone()
            .or_else(|| self.home.as_ref().map(|h| h.join(".config")))
    }

    /// `~/.local/state` (or `$XDG_STATE_HOME`).
    pub fn state_dir(&self) -> Option<PathBuf> {
        self.xdg_state_home
            .clone()
            .or_else(|| self.home.as_ref().map(|h| h.join(".local/state")))
    }

    /// `~/.config/pulse/client.conf`.
    pub fn user_client_conf(&self) -> Option<PathBuf> {
        self.config_dir().map(|c| c.join("pulse/client.conf"))
    }
}

fn passwd_entries(root: &Root) -> Vec<Vec<String>> {
    root.read("/etc/passwd")
        .unwrap_or_default()
        .lines()
        .map(|l| l.split(':').map(str::to_owned).collect::<Vec<_>>())
        .filter(|f| f.len() >= 7)
        .collect()
}

fn passwd_name_for_uid(root: &Root, uid: u32) -> Option<String> {
    passwd_entries(root)
        .into_iter()
        .find(|f| f[2] == uid.to_string())
        .map(|f| f[0].clone())
}

fn passwd_home(root: &Root, user: &str) -> Option<PathBuf> {
    passwd_entries(root)
        .into_iter()
        .find(|f| f[0] == user)
        .map(|f| PathBuf::from(&f[5]))
}

/// Groups of `user` from /etc/passwd (primary) and /etc/group.
pub fn user_groups(root: &Root, user: &str) -> Vec<String> {
    let mut groups = Vec::new();
    let primary_gid = passwd_entries(root)
        .into_iter()
        .find(|f| f[0] == user)
        .map(|f| f[3].clone());
    for line in root.read("/etc/group").unwrap_or_default().lines() {
        let f: Vec<&str> = line.split(':').collect();
        if f.len() < 4 {
            continue;
        }
        let member = f[3].split(',').any(|m| m == user);
        if member || primary_gid.as_deref() == Some(f[2]) {
            groups.push(f[0].to_owned());
        }
    }
    groups
}
