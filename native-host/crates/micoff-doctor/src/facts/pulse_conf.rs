//! Shared memory as PulseAudio's client.conf and daemon.conf set it ([`ShmConf`]), read the way
//! PulseAudio reads them: the first file found, then its `.d` drop-ins.

use std::fmt;
use std::path::PathBuf;

use serde::Serialize;

use crate::facts::user::UserEnv;
use crate::parse;
use crate::root::Root;

/// A `key = value` line of a PulseAudio config file; shown as `file: key = value`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ConfLine {
    pub file: String,
    pub key: String,
    pub value: String,
}

impl fmt::Display for ConfLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {} = {}", self.file, self.key, self.value)
    }
}

/// `lines` as `file: key = value; file: key = value`.
fn join_lines(lines: &[ConfLine]) -> String {
    lines
        .iter()
        .map(ConfLine::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

/// enable-shm / enable-memfd as one client or daemon would see them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct ShmConf {
    /// The config file that applies (PulseAudio reads only the first it finds, plus its `.d`).
    pub file: Option<String>,
    /// Whether `file` is the one `$PULSE_CLIENTCONFIG` names.
    pub from_env: bool,
    pub enable_shm: Option<bool>,
    pub enable_memfd: Option<bool>,
    /// `enable-shm = no` lines that turned shared memory off.
    pub disabled_by: Vec<ConfLine>,
    /// `enable-memfd = no` lines (memfd off only falls back to POSIX shared memory).
    pub memfd_disabled_by: Vec<ConfLine>,
}

impl ShmConf {
    /// Shared memory (and so srbchannel) is on. Only `enable-shm = no` turns it off: with
    /// `enable-memfd = no` PulseAudio uses POSIX shared memory instead (`pa_mempool_new` with
    /// `PA_MEM_TYPE_SHARED_POSIX`), and `setup_srbchannel()` still sets the channel up.
    pub fn shm_on(&self) -> bool {
        self.enable_shm != Some(false)
    }

    pub fn memfd_off(&self) -> bool {
        self.enable_memfd == Some(false)
    }

    /// The lines that turned shared memory off, for a message (`file: enable-shm = no; ...`).
    pub fn shm_off_lines(&self) -> String {
        join_lines(&self.disabled_by)
    }

    /// The lines that turned memfd off, for a message.
    pub fn memfd_off_lines(&self) -> String {
        join_lines(&self.memfd_disabled_by)
    }

    /// The files of the lines that turned shared memory off.
    pub fn disabled_in(&self) -> impl Iterator<Item = &str> {
        self.disabled_by.iter().map(|l| l.file.as_str())
    }

    /// Whether `fix client-shm` (which writes the user's `~/.config/pulse/client.conf`, starting
    /// from the system file and its `.d` when the user has none) can turn it back on: not when
    /// `$PULSE_CLIENTCONFIG` picks another file, nor when the line is in the `.d` directory of
    /// the user's own file (micoff does not edit those).
    pub fn fixable_by_user_conf(&self) -> bool {
        let file = self.file.as_deref().unwrap_or(SYSTEM_CLIENT_CONF);
        !self.from_env
            && self
                .disabled_in()
                .all(|p| p == file || p.starts_with(&format!("{SYSTEM_CLIENT_CONF}.d/")))
    }
}

pub const SYSTEM_CLIENT_CONF: &str = "/etc/pulse/client.conf";

/// What PulseAudio's pa_open_config_file + pa_config_parse would read: the first existing of
/// `candidates`, then `<that file>.d/*.conf`. `env_file`: the candidate `$PULSE_CLIENTCONFIG`
/// names, if any.
fn read_shm_conf(root: &Root, candidates: &[PathBuf], env_file: Option<&PathBuf>) -> ShmConf {
    let Some(file) = candidates.iter().find(|p| root.exists(p)) else {
        return ShmConf::default();
    };
    let mut conf = ShmConf {
        file: Some(file.display().to_string()),
        from_env: env_file == Some(file),
        ..ShmConf::default()
    };
    let dot_d = PathBuf::from(format!("{}.d", file.display()));
    let mut paths = vec![file.clone()];
    paths.extend(
        root.list(&dot_d)
            .into_iter()
            .filter(|n| n.ends_with(".conf"))
            .map(|n| dot_d.join(n)),
    );
    for p in paths {
        for (k, v) in parse::pulse_conf(&root.read(&p).unwrap_or_default()) {
            let b = parse::pulse_bool(&v);
            let (slot, off_lines) = match k.as_str() {
                "enable-shm" => (&mut conf.enable_shm, &mut conf.disabled_by),
                "enable-memfd" => (&mut conf.enable_memfd, &mut conf.memfd_disabled_by),
                _ => continue,
            };
            *slot = b;
            // The last line wins: a later `yes` makes the earlier `no`s moot.
            if b == Some(true) {
                off_lines.clear();
            } else if b == Some(false) {
                off_lines.push(ConfLine {
                    file: p.display().to_string(),
                    key: k,
                    value: v,
                });
            }
        }
    }
    conf
}

/// The client.conf settings a client of `env` gets.
pub fn read_client_conf(root: &Root, env: &UserEnv) -> ShmConf {
    let mut candidates = Vec::new();
    candidates.extend(env.pulse_clientconfig.clone());
    candidates.extend(env.user_client_conf());
    candidates.push(PathBuf::from(SYSTEM_CLIENT_CONF));
    read_shm_conf(root, &candidates, env.pulse_clientconfig.as_ref())
}

pub(crate) fn read_daemon_conf(root: &Root, env: &UserEnv) -> ShmConf {
    let mut candidates = Vec::new();
    candidates.extend(env.config_dir().map(|c| c.join("pulse/daemon.conf")));
    candidates.push(PathBuf::from("/etc/pulse/daemon.conf"));
    read_shm_conf(root, &candidates, None)
}
