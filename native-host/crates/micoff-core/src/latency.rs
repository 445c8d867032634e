//! Capture latency: what the audio server grants the browsers' record streams, what
//! micoff has configured, and the writers that configure it.
//!
//! Two mechanisms, one per server (docs/design/capture-latency.md):
//! - pipewire-pulse (0.3.44+): a `pulse.rules` drop-in in
//!   `$XDG_CONFIG_HOME/pipewire/pipewire-pulse.conf.d/` that sets `pulse.min.frag` on the browsers'
//!   capture clients only (Chromium's capture context "Chromium input" / "Google Chrome input";
//!   Firefox's one context by its binary: `pulse.min.frag` acts on record streams only). It applies
//!   to clients that connect after pipewire-pulse restarts.
//! - PulseAudio (and older PipeWire): `PULSE_LATENCY_MSEC` in the browser's launch environment,
//!   through a copy of the browser's desktop entry in `$XDG_DATA_HOME/applications` (which
//!   overrides the system one), and a wrapper of the browser's command in `~/.local/bin` (for a
//!   browser started by name: a terminal, a launcher). libpulse applies it to every stream of the
//!   process: playback too.
//!
//! Every file written here starts with [`MARKER`] (after a wrapper's `#!` line) and a [`META`]
//! line; nothing without them is ever changed or removed. Writes are atomic (temporary file + rename). Nothing is restarted:
//! the results say what needs a restart.
//!
//! The pure parts (status computation, file contents, planning) take their inputs as arguments
//! and are unit-tested with temporary directories; [`status`] and [`set`] glue them to the audio
//! server and the file system.

use std::collections::{BTreeSet, HashMap};
use std::fs;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

use crate::deps::{AudioServer, HostError};
use crate::protocol::{
    validate_capture_ms, AudioServerInfo, AudioServerKind, AudioStream, Browser, CaptureStream,
    Configured, HeldDownBy, LatencyServer, LatencySetResult, LatencyStatus, Mechanism, ServerKind,
    StreamKind,
};

/// First line of every file micoff writes (shared with the doctor's fixes).
pub use micoff_doctor::fix::MARKER;
/// Second line of every latency file micoff writes: what it configures, as `key=value` words.
pub const META: &str = "# micoff-latency:";
/// The drop-in's file name in `pipewire-pulse.conf.d/`.
pub const RULE_FILE_NAME: &str = "50-micoff-capture-latency.conf";
/// The environment variable libpulse reads (`patch_buffer_attr()` in libpulse's stream.c).
pub const LATENCY_ENV: &str = "PULSE_LATENCY_MSEC";
/// Slack between what was set and what counts as granted (servers round to their quantum).
pub const TOLERANCE_US: u64 = 5_000;
/// What Chromium's Pulse input asks for on the processed (echo-cancelled) path: 10 ms fragments.
pub const CHROMIUM_DEFAULT_CAPTURE_US: u64 = 10_000;
/// pipewire-pulse's first version with per-client `pulse.min.frag` (commit 4f57f3cda).
pub const PIPEWIRE_MIN_RULES: (u32, u32, u32) = (0, 3, 44);
/// The rate `pulse.min.frag` is written at (the fraction is a duration, any rate works).
const RULE_RATE: u32 = 48_000;

// ------------------------------------------------------------------------------------------------
// Browsers

// The browser table (the enum itself is the protocol's).
impl Browser {
    /// The name of Chromium's capture context (`PRODUCT_STRING " input"`, pulse_util.cc).
    fn capture_client_name(self) -> Option<&'static str> {
        match self {
            Browser::Chromium => Some("Chromium input"),
            Browser::Chrome => Some("Google Chrome input"),
            Browser::Firefox => None,
        }
    }

    /// Process binaries (`application.process.binary`) that mark this browser's client.
    fn binaries(self) -> &'static [&'static str] {
        match self {
            Browser::Chromium => &["chromium", "chromium-browser"],
            Browser::Chrome => &["chrome", "google-chrome"],
            Browser::Firefox => &["firefox", "firefox-esr", "firefox-bin"],
        }
    }

    /// The commands a terminal or a launcher runs the browser by (micoff's PATH wrappers take
    /// these names; each is written only where the browser's own command is on PATH).
    pub fn commands(self) -> &'static [&'static str] {
        match self {
            Browser::Chromium => &["chromium", "chromium-browser"],
            Browser::Chrome => &["google-chrome", "google-chrome-stable"],
            Browser::Firefox => &["firefox", "firefox-esr"],
        }
    }

    /// Desktop entry ids, first match wins per id (all that exist are configured).
    pub fn desktop_ids(self) -> &'static [&'static str] {
        match self {
            Browser::Chromium => &["chromium.desktop", "chromium-browser.desktop"],
            Browser::Chrome => &["google-chrome.desktop"],
            Browser::Firefox => &["firefox-esr.desktop", "firefox.desktop"],
        }
    }

    /// Which browser a record stream belongs to: Chromium's capture context by name, else the
    /// client's binary (Firefox has one context for capture and playback).
    pub fn of_stream(s: &AudioStream) -> Option<Browser> {
        let names = [s.client_name.as_deref(), s.application_name.as_deref()];
        if let Some(b) = Self::ALL.into_iter().find(|b| {
            b.capture_client_name()
                .is_some_and(|n| names.contains(&Some(n)))
        }) {
            return Some(b);
        }
        let binary = s.application_process_binary.as_deref()?;
        let binary = binary.rsplit('/').next().unwrap_or(binary);
        Self::ALL
            .into_iter()
            .find(|b| b.binaries().contains(&binary))
    }
}

fn browser_list(browsers: &[Browser]) -> String {
    browsers
        .iter()
        .map(|b| b.name())
        .collect::<Vec<_>>()
        .join(",")
}

fn parse_browser_list(s: &str) -> Vec<Browser> {
    s.split(',').filter_map(Browser::from_name).collect()
}

// ------------------------------------------------------------------------------------------------
// Where the files go

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
            bin_home: home.map(|h| h.join(".local").join("bin")),
            path_dirs,
        })
    }

    pub fn from_process_env() -> Result<Paths, String> {
        Self::from_env(&std::env::vars().collect())
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
    /// [`Paths::bin_home`] (the wrapper must never run itself).
    fn real_command(&self, command: &str) -> Option<PathBuf> {
        use std::os::unix::fs::PermissionsExt;
        self.path_dirs
            .iter()
            .filter(|d| self.bin_home.as_deref() != Some(d.as_path()))
            .map(|d| d.join(command))
            // The path goes into a shell line and a comment: nothing a line could not hold.
            .filter(|p| p.to_str().is_some_and(|s| !s.contains('\n')))
            .find(|p| {
                fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
            })
    }

    /// Whether a command named like the wrapper is found in `~/.local/bin` before `target`'s
    /// folder (else the shell runs the browser's own command and the wrapper does nothing).
    fn wrapper_first(&self, target: &Path) -> bool {
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
    fn system_desktop_entry(&self, id: &str) -> Option<PathBuf> {
        self.data_dirs
            .iter()
            .map(|d| d.join("applications").join(id))
            .find(|p| p.is_file())
    }
}

// ------------------------------------------------------------------------------------------------
// File contents

/// `pulse.min.frag` for `ms`: a fraction of [`RULE_RATE`].
pub fn min_frag(ms: u32) -> String {
    format!(
        "{}/{RULE_RATE}",
        u64::from(ms) * u64::from(RULE_RATE) / 1000
    )
}

/// The pipewire-pulse drop-in: `pulse.min.frag` for the browsers' capture clients only.
pub fn rule_content(capture_ms: u32, browsers: &[Browser]) -> String {
    let mut matches = Vec::new();
    for b in browsers {
        if let Some(name) = b.capture_client_name() {
            matches.push(format!("            {{ application.name = \"{name}\" }}"));
        } else {
            for bin in b.binaries() {
                matches.push(format!(
                    "            {{ application.process.binary = \"{bin}\" }}"
                ));
            }
        }
    }
    format!(
        "{MARKER}\n{META} capture_ms={capture_ms} browsers={}\n\
# Capture latency for the browsers' record streams only: pulse.min.frag raises the record\n\
# fragment pipewire-pulse delivers to them; playback and the graph are left as they are.\n\
# Takes effect for clients that connect after pipewire-pulse restarts.\n\
# Remove with `micoff-host latency reset` (this file is micoff's; it rewrites or deletes it).\n\
pulse.rules = [\n    {{\n        matches = [\n{}\n        ]\n        actions = {{\n            \
update-props = {{\n                pulse.min.frag = {}\n            }}\n        }}\n    }}\n]\n",
        browser_list(browsers),
        matches.join("\n"),
        min_frag(capture_ms),
    )
}

/// A copy of a system desktop entry whose every `Exec=` runs through `env PULSE_LATENCY_MSEC=N`.
pub fn desktop_entry_content(
    system: &str,
    source: &Path,
    capture_ms: u32,
    browser: Browser,
) -> String {
    let mut out = format!(
        "{MARKER}\n{META} capture_ms={capture_ms} browser={} source={}\n\
# A copy of the system entry with {LATENCY_ENV}={capture_ms} in the launch environment: libpulse\n\
# then asks {capture_ms} ms for every stream of the browser (capture AND playback).\n\
# Remove with `micoff-host latency reset` (this file is micoff's; it rewrites or deletes it).\n",
        browser.name(),
        source.display(),
    );
    for line in system.lines() {
        match line.strip_prefix("Exec=") {
            Some(cmd) => {
                out.push_str(&format!("Exec=env {LATENCY_ENV}={capture_ms} {cmd}\n"));
            }
            None => {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    out
}

/// Single-quoted for sh (a path from `$PATH` may hold spaces or quotes).
fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// micoff's wrapper of a browser command: runs the browser's own `target` with
/// `PULSE_LATENCY_MSEC=N`, for a browser started by name (a terminal, a launcher's run dialog, a
/// window manager's key binding) rather than from its menu entry.
pub fn wrapper_content(capture_ms: u32, browser: Browser, command: &str, target: &Path) -> String {
    format!(
        "#!/bin/sh\n{MARKER}\n{META} capture_ms={capture_ms} browser={} command={command}\n\
# `{command}` with {LATENCY_ENV}={capture_ms} in its environment: libpulse then asks\n\
# {capture_ms} ms for every stream of the browser (capture AND playback). It runs the browser's own\n\
# command, {}, found in PATH after this folder.\n\
# Remove with `micoff-host latency reset` (this file is micoff's; it rewrites or deletes it).\n\
exec env {LATENCY_ENV}={capture_ms} {} \"$@\"\n",
        browser.name(),
        target.display(),
        sh_quote(&target.to_string_lossy()),
    )
}

/// The `key=value` words of a file of ours (its [`META`] line), or None for a foreign file. A
/// wrapper's `#!` line comes before the marker.
pub fn read_meta(content: &str) -> Option<HashMap<String, String>> {
    let mut lines = content.lines().peekable();
    if lines.peek().is_some_and(|l| l.starts_with("#!")) {
        lines.next();
    }
    if lines.next()? != MARKER {
        return None;
    }
    let meta = lines.next()?.strip_prefix(META)?;
    Some(
        meta.split_whitespace()
            .filter_map(|w| w.split_once('='))
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect(),
    )
}

// ------------------------------------------------------------------------------------------------
// What is configured

/// A file of ours on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OurFile {
    pub path: PathBuf,
    pub mechanism: Mechanism,
    pub capture_ms: Option<u32>,
    pub browsers: Vec<Browser>,
    pub modified: Option<SystemTime>,
}

fn our_file(path: &Path, mechanism: Mechanism) -> Option<OurFile> {
    let content = fs::read_to_string(path).ok()?;
    let meta = read_meta(&content)?;
    let browsers = match mechanism {
        Mechanism::PipewirePulseRule => parse_browser_list(meta.get("browsers")?),
        Mechanism::LaunchEnvironment => vec![Browser::from_name(meta.get("browser")?)?],
    };
    Some(OurFile {
        path: path.to_owned(),
        mechanism,
        capture_ms: meta.get("capture_ms").and_then(|v| v.parse().ok()),
        browsers,
        modified: fs::metadata(path).and_then(|m| m.modified()).ok(),
    })
}

/// Every latency file of ours: the drop-in, the desktop entries in the user's folder and the
/// PATH wrappers.
pub fn our_files(paths: &Paths) -> Vec<OurFile> {
    let mut files: Vec<OurFile> = our_file(&paths.rule_file(), Mechanism::PipewirePulseRule)
        .into_iter()
        .collect();
    let mut ids: Vec<&str> = Browser::ALL
        .iter()
        .flat_map(|b| b.desktop_ids().iter().copied())
        .collect();
    ids.sort_unstable();
    for id in ids {
        if let Some(f) = our_file(
            &paths.user_applications().join(id),
            Mechanism::LaunchEnvironment,
        ) {
            files.push(f);
        }
    }
    for b in Browser::ALL {
        for cmd in b.commands() {
            if let Some(f) = paths
                .wrapper(cmd)
                .and_then(|w| our_file(&w, Mechanism::LaunchEnvironment))
            {
                files.push(f);
            }
        }
    }
    files
}

/// The browser a launch-environment file of micoff's configures: a desktop entry copy in the
/// user's applications folder or a wrapper in `~/.local/bin`, by its name.
fn launch_file_browser(paths: &Paths, path: &Path) -> Option<Browser> {
    let name = path.file_name()?.to_str()?;
    let parent = path.parent()?;
    Browser::ALL.into_iter().find(|b| {
        (parent == paths.user_applications() && b.desktop_ids().contains(&name))
            || (paths.bin_home.as_deref() == Some(parent) && b.commands().contains(&name))
    })
}

/// The wrappers among `actions` that are written or already there.
fn wrappers_in<'a>(paths: &'a Paths, actions: &'a [Action]) -> impl Iterator<Item = &'a Path> {
    actions.iter().filter_map(move |a| match a {
        Action::Write { path, .. } | Action::Unchanged { path }
            if paths.bin_home.as_deref() == path.parent() =>
        {
            Some(path.as_path())
        }
        _ => None,
    })
}

/// Makes micoff's wrappers executable (the atomic write leaves them 0644).
fn make_executable(paths: &Paths, actions: &[Action]) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    for w in wrappers_in(paths, actions) {
        fs::set_permissions(w, fs::Permissions::from_mode(0o755))
            .map_err(|e| format!("cannot make {} executable: {e}", w.display()))?;
    }
    Ok(())
}

/// The configuration the files say (the drop-in wins if both kinds are there).
pub fn configured_from(files: &[OurFile]) -> Option<(u32, Mechanism, Vec<Browser>, Vec<String>)> {
    let first = files
        .iter()
        .find(|f| f.mechanism == Mechanism::PipewirePulseRule)
        .or_else(|| files.first())?;
    let ms = first.capture_ms?;
    let mut browsers = BTreeSet::new();
    let mut paths = Vec::new();
    for f in files.iter().filter(|f| f.mechanism == first.mechanism) {
        browsers.extend(f.browsers.iter().copied());
        paths.push(f.path.display().to_string());
    }
    Some((ms, first.mechanism, browsers.into_iter().collect(), paths))
}

// ------------------------------------------------------------------------------------------------
// Server facts

/// `0.3.65` -> (0, 3, 65).
pub fn parse_version(v: &str) -> Option<(u32, u32, u32)> {
    let mut parts = v
        .trim()
        .split(|c: char| !c.is_ascii_digit())
        .filter(|p| !p.is_empty());
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
    let micro = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
    Some((major, minor, micro))
}

pub fn server_of(info: Option<&AudioServerInfo>) -> LatencyServer {
    let Some(info) = info else {
        return LatencyServer {
            kind: ServerKind::Unknown,
            version: None,
            mechanism: Mechanism::LaunchEnvironment,
        };
    };
    match info.kind {
        AudioServerKind::Pipewire => {
            let version = info.server.pipewire_version.clone();
            let rules = version
                .as_deref()
                .and_then(parse_version)
                .is_some_and(|v| v >= PIPEWIRE_MIN_RULES);
            LatencyServer {
                kind: ServerKind::PipewirePulse,
                version,
                mechanism: if rules {
                    Mechanism::PipewirePulseRule
                } else {
                    Mechanism::LaunchEnvironment
                },
            }
        }
        AudioServerKind::Pulseaudio => LatencyServer {
            kind: ServerKind::Pulseaudio,
            version: Some(info.server.server_version.clone()),
            mechanism: Mechanism::LaunchEnvironment,
        },
        AudioServerKind::Unknown => LatencyServer {
            kind: ServerKind::Unknown,
            version: Some(info.server.server_version.clone()),
            mechanism: Mechanism::LaunchEnvironment,
        },
    }
}

/// What the status computation needs besides the server's lists (from /proc in real use).
pub trait World {
    /// `PULSE_LATENCY_MSEC` in the environment of `pid` (None: unset or unreadable).
    fn latency_env(&self, pid: u32) -> Option<u32>;
    /// When the audio server (pipewire-pulse itself) started.
    fn server_started(&self, info: &AudioServerInfo) -> Option<SystemTime>;
}

/// The real machine: /proc.
pub struct ProcWorld;

impl World for ProcWorld {
    fn latency_env(&self, pid: u32) -> Option<u32> {
        tree_env(pid, &[LATENCY_ENV])
            .get(LATENCY_ENV)
            .and_then(|v| v.trim().parse().ok())
    }

    fn server_started(&self, info: &AudioServerInfo) -> Option<SystemTime> {
        let comm = |pid: u32| fs::read_to_string(format!("/proc/{pid}/comm")).ok();
        let pid = info
            .pids
            .iter()
            .copied()
            .find(|p| comm(*p).is_some_and(|c| c.trim() == "pipewire-pulse"))
            .or_else(|| info.pids.first().copied())?;
        process_start(pid)
    }
}

/// `names` from the environment `pid` inherited. Chromium's zygote children reuse their
/// environment block for the process title (setproctitle), so their `/proc/<pid>/environ` no longer
/// shows it: walk up through the parents running the same binary (the browser's own processes)
/// and take the first environment that shows any of `names`.
fn tree_env(pid: u32, names: &[&str]) -> HashMap<String, String> {
    let exe = |p: u32| fs::read_link(format!("/proc/{p}/exe")).ok();
    let first = exe(pid);
    let mut p = pid;
    for _ in 0..16 {
        if let Ok(environ) = fs::read(format!("/proc/{p}/environ")) {
            let found: HashMap<String, String> = environ
                .split(|b| *b == 0)
                .filter_map(|kv| std::str::from_utf8(kv).ok())
                .filter_map(|kv| kv.split_once('='))
                .filter(|(k, _)| names.contains(k))
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .collect();
            if !found.is_empty() {
                return found;
            }
        }
        let Some(parent) = fs::read_to_string(format!("/proc/{p}/stat"))
            .ok()
            .and_then(|st| micoff_proc::parse::parse_stat(&st).map(|s| s.ppid))
        else {
            break;
        };
        if parent <= 1 || first.is_none() || exe(parent) != first {
            break;
        }
        p = parent;
    }
    HashMap::new()
}

/// Whether `pid` is `ancestor` or runs under it.
fn descends_from(pid: u32, ancestor: u32) -> bool {
    let mut p = pid;
    for _ in 0..64 {
        if p == ancestor {
            return true;
        }
        match fs::read_to_string(format!("/proc/{p}/stat"))
            .ok()
            .and_then(|st| micoff_proc::parse::parse_stat(&st).map(|s| s.ppid))
        {
            Some(parent) if parent > 1 => p = parent,
            _ => return false,
        }
    }
    false
}

/// The unix socket `pid`'s libpulse connects to by default, from the environment it inherited,
/// resolved as every other part of micoff resolves it (micoff-audio-server).
fn server_socket_of(pid: u32) -> Option<String> {
    let env = tree_env(
        pid,
        &["PULSE_SERVER", "PULSE_RUNTIME_PATH", "XDG_RUNTIME_DIR"],
    );
    let env = micoff_audio_server::ServerEnv::from_map(&env);
    micoff_audio_server::first_socket(&env, |p| p.exists()).map(|p| p.display().to_string())
}

/// When `pid` started: its `starttime` (clock ticks of the boot-time clock) after the boot,
/// the boot placed on the wall clock from `CLOCK_BOOTTIME` now (exact to the tick; `/proc/stat`
/// `btime` is whole seconds, too coarse to compare with a file written a moment earlier).
fn process_start(pid: u32) -> Option<SystemTime> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let ticks = micoff_proc::parse::parse_stat(&stat)?.starttime;
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; sysconf has no preconditions.
    let (rc, hz) = unsafe {
        (
            libc::clock_gettime(libc::CLOCK_BOOTTIME, &mut ts),
            libc::sysconf(libc::_SC_CLK_TCK),
        )
    };
    if rc != 0 {
        return None;
    }
    let since_boot = std::time::Duration::new(
        u64::try_from(ts.tv_sec).ok()?,
        u32::try_from(ts.tv_nsec).ok()?,
    );
    let boot = SystemTime::now().checked_sub(since_boot)?;
    let hz = u64::try_from(hz).ok().filter(|h| *h > 0)?;
    Some(boot + std::time::Duration::from_micros(ticks * 1_000_000 / hz))
}

// ------------------------------------------------------------------------------------------------
// Status

/// A latency in microseconds as the status lines show it (`12.3 ms`).
pub(crate) fn ms(us: u64) -> String {
    format!("{:.1} ms", us as f64 / 1000.0)
}

impl HeldDownBy {
    /// `#index name (pid P) at L ms`, as both the status notes and `micoff-host latency` show it.
    pub(crate) fn describe(&self) -> String {
        format!(
            "#{} {} (pid {}) at {}",
            self.index,
            self.application_name
                .as_deref()
                .or(self.client_name.as_deref())
                .unwrap_or("?"),
            self.application_process_id
                .map_or_else(|| "?".to_owned(), |p| p.to_string()),
            ms(self.latency_us)
        )
    }
}

fn holders(stream: &AudioStream, all: &[AudioStream], below_us: u64) -> Vec<HeldDownBy> {
    let mut found: Vec<HeldDownBy> = all
        .iter()
        .filter(|o| {
            o.kind == StreamKind::Record
                && o.index != stream.index
                && o.device_index == stream.device_index
                && !o.is_module_stream()
                && o.buffer_latency_us > 0
                && o.buffer_latency_us + TOLERANCE_US <= below_us
        })
        .map(|o| HeldDownBy {
            index: o.index,
            client_name: o.client_name.clone(),
            application_name: o.application_name.clone(),
            application_process_id: o.application_process_id,
            application_process_binary: o.application_process_binary.clone(),
            latency_us: o.buffer_latency_us,
        })
        .collect();
    found.sort_by_key(|h| (h.latency_us, h.index));
    found
}

/// The capture streams of browsers, with what they asked, got, and what holds them down.
pub fn capture_streams(
    server: &LatencyServer,
    streams: &[AudioStream],
    world: &dyn World,
) -> Vec<CaptureStream> {
    let mut out = Vec::new();
    for s in streams.iter().filter(|s| s.kind == StreamKind::Record) {
        let Some(browser) = Browser::of_stream(s) else {
            continue;
        };
        let launch_env = s.application_process_id.and_then(|p| world.latency_env(p));
        let requested = launch_env
            .map(|m| u64::from(m) * 1000)
            .or(
                (browser != Browser::Firefox && server.kind != ServerKind::PipewirePulse)
                    .then_some(CHROMIUM_DEFAULT_CAPTURE_US),
            );
        let fragment = s.fragment_latency_us;
        let capture = fragment.unwrap_or(s.buffer_latency_us);
        // Only PulseAudio lowers a reader to its source's latency after the fact.
        let held_down_by = match requested {
            Some(req) if server.kind == ServerKind::Pulseaudio && capture + TOLERANCE_US <= req => {
                holders(s, streams, req)
            }
            _ => Vec::new(),
        };
        out.push(CaptureStream {
            index: s.index,
            browser,
            client_name: s.client_name.clone(),
            application_process_id: s.application_process_id,
            source_name: s.device_name.clone(),
            launch_env_latency_ms: launch_env,
            requested_latency_us: requested,
            granted_latency_us: s.buffer_latency_us,
            granted_fragment_us: fragment,
            capture_latency_us: capture,
            source_configured_latency_us: s.device_configured_latency_us,
            rule_min_frag: s.props.get("pulse.min.frag").cloned(),
            held_down_by,
        });
    }
    out
}

fn push_unique(list: &mut Vec<String>, item: &str) {
    if !list.iter().any(|x| x == item) {
        list.push(item.to_owned());
    }
}

/// Everything `latency status` reports. `info` is None when the server is unreachable.
pub fn compute_status(
    info: Option<&AudioServerInfo>,
    streams: &[AudioStream],
    files: &[OurFile],
    world: &dyn World,
) -> LatencyStatus {
    let server = server_of(info);
    let captures = capture_streams(&server, streams, world);
    let mut needs_restart = Vec::new();
    let mut notes = Vec::new();
    if info.is_none() {
        notes.push("the audio server is not reachable: nothing granted can be shown".into());
    }
    let configured = configured_from(files).map(|(capture_ms, mechanism, browsers, file_paths)| {
        let ours: Vec<&CaptureStream> = captures
            .iter()
            .filter(|c| browsers.contains(&c.browser))
            .collect();
        let want_us = u64::from(capture_ms) * 1000;
        let granted = |c: &CaptureStream| c.capture_latency_us + TOLERANCE_US >= want_us;
        let in_effect = (!ours.is_empty()).then(|| ours.iter().all(|c| granted(c)));
        if ours.is_empty() {
            notes.push(format!(
                "no capture stream of {} is open: start a call to see what the server grants",
                browser_list(&browsers)
            ));
        }
        match mechanism {
            Mechanism::PipewirePulseRule => {
                if server.kind == ServerKind::Pulseaudio {
                    notes.push(
                        "the configuration is a pipewire-pulse rule but the server is PulseAudio: \
                         run `micoff-host latency set` again to use the launch environment"
                            .into(),
                    );
                } else if server.kind == ServerKind::PipewirePulse {
                    let written = files_modified(files, Mechanism::PipewirePulseRule);
                    let started = info.and_then(|i| world.server_started(i));
                    let stale_server = match (written, started) {
                        (Some(w), Some(s)) => s < w,
                        // Unknown start: judge by the streams.
                        _ => ours.iter().any(|c| c.rule_min_frag.is_none()),
                    };
                    if stale_server {
                        push_unique(&mut needs_restart, "pipewire-pulse");
                        notes.push(
                            "pipewire-pulse started before the rule was written: restart it \
                             (`systemctl --user restart pipewire-pulse`) when no stream is open"
                                .into(),
                        );
                    } else {
                        for c in ours.iter().filter(|c| !granted(c)) {
                            push_unique(&mut needs_restart, c.browser.name());
                            notes.push(format!(
                                "stream #{} of {} connected before the rule applied (granted {}): \
                                 restart the browser's audio service",
                                c.index,
                                c.browser.name(),
                                ms(c.capture_latency_us)
                            ));
                        }
                    }
                }
            }
            Mechanism::LaunchEnvironment => {
                for c in &ours {
                    if c.launch_env_latency_ms != Some(capture_ms) {
                        push_unique(&mut needs_restart, c.browser.name());
                        notes.push(format!(
                            "{} runs without {LATENCY_ENV}={capture_ms} (stream #{}): quit it and \
                             start it again from its menu entry",
                            c.browser.name(),
                            c.index
                        ));
                    }
                }
            }
        }
        if server.kind == ServerKind::Pulseaudio {
            // Granted less than asked, and no other reader of the source asks less: the source
            // itself runs faster (measured: a mic that is the monitor of a sink, at that sink's
            // playback latency).
            for c in ours.iter().filter(|c| {
                c.held_down_by.is_empty()
                    && c.launch_env_latency_ms == Some(capture_ms)
                    && !granted(c)
            }) {
                notes.push(format!(
                    "stream #{} gets {} instead of {}, and no other recorder of {} asks less: the \
                     source's device runs at a lower latency (a monitor source follows its sink's \
                     playback latency)",
                    c.index,
                    ms(c.capture_latency_us),
                    ms(want_us),
                    c.source_name.as_deref().unwrap_or("its source")
                ));
            }
        }
        for c in ours.iter().filter(|c| !c.held_down_by.is_empty()) {
            let names: Vec<String> = c.held_down_by.iter().map(HeldDownBy::describe).collect();
            notes.push(format!(
                "stream #{} gets {} instead of {}: PulseAudio grants every reader of a source its \
                 lowest requested latency, held down by {}",
                c.index,
                ms(c.capture_latency_us),
                ms(want_us),
                names.join(", ")
            ));
        }
        Configured {
            capture_ms,
            mechanism,
            browsers,
            files: file_paths,
            in_effect,
        }
    });
    if configured.is_none() && server.kind == ServerKind::PipewirePulse {
        // A rule micoff removed stays in force until pipewire-pulse restarts.
        if let Some(c) = captures.iter().find(|c| c.rule_min_frag.is_some()) {
            push_unique(&mut needs_restart, "pipewire-pulse");
            notes.push(format!(
                "stream #{} still has pulse.min.frag = {} from a rule no longer configured by \
                 micoff (or one of your own): restart pipewire-pulse when no stream is open",
                c.index,
                c.rule_min_frag.as_deref().unwrap_or("?")
            ));
        }
    }
    LatencyStatus {
        server,
        configured,
        streams: captures,
        needs_restart,
        notes,
    }
}

fn files_modified(files: &[OurFile], mechanism: Mechanism) -> Option<SystemTime> {
    files
        .iter()
        .filter(|f| f.mechanism == mechanism)
        .filter_map(|f| f.modified)
        .max()
}

/// `latency status` against the audio server and the file system.
pub async fn status(audio: &dyn AudioServer, paths: &Paths) -> LatencyStatus {
    let info = audio.server_info().await;
    let streams = match &info {
        Ok(_) => audio.streams().await.unwrap_or_default(),
        Err(_) => Vec::new(),
    };
    let files = our_files(paths);
    let mut st = compute_status(info.as_ref().ok(), &streams, &files, &ProcWorld);
    if let Err(e) = info {
        st.notes.push(e.to_string());
    }
    st
}

// ------------------------------------------------------------------------------------------------
// Set / reset

/// What `latency set` / `latency reset` is asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetRequest {
    /// None: reset (remove micoff's files).
    pub capture_ms: Option<u32>,
    /// Empty: every browser micoff knows.
    pub browsers: Vec<Browser>,
    /// None: the server's ([`LatencyServer::mechanism`]).
    pub mechanism: Option<Mechanism>,
    pub dry_run: bool,
}

/// One file operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    Write {
        path: PathBuf,
        content: String,
    },
    Remove {
        path: PathBuf,
    },
    /// Already as wanted.
    Unchanged {
        path: PathBuf,
    },
    /// A file micoff did not write is in the way: left alone.
    Skip {
        path: PathBuf,
        why: String,
    },
}

/// The file operations for `req` (pure but for reading the files involved).
pub fn plan(paths: &Paths, req: &SetRequest, mechanism: Mechanism) -> Vec<Action> {
    let browsers: Vec<Browser> = if req.browsers.is_empty() {
        Browser::ALL.to_vec()
    } else {
        let set: BTreeSet<Browser> = req.browsers.iter().copied().collect();
        set.into_iter().collect()
    };
    let mut wanted: Vec<(PathBuf, String)> = Vec::new();
    let mut actions = Vec::new();
    if let Some(ms) = req.capture_ms {
        match mechanism {
            Mechanism::PipewirePulseRule => {
                wanted.push((paths.rule_file(), rule_content(ms, &browsers)));
            }
            Mechanism::LaunchEnvironment => {
                for b in &browsers {
                    for id in b.desktop_ids() {
                        let Some(system) = paths.system_desktop_entry(id) else {
                            continue;
                        };
                        match fs::read_to_string(&system) {
                            Ok(text) => wanted.push((
                                paths.user_applications().join(id),
                                desktop_entry_content(&text, &system, ms, *b),
                            )),
                            Err(e) => actions.push(Action::Skip {
                                path: system.clone(),
                                why: format!("cannot read {}: {e}", system.display()),
                            }),
                        }
                    }
                    for cmd in b.commands() {
                        if let (Some(wrapper), Some(target)) =
                            (paths.wrapper(cmd), paths.real_command(cmd))
                        {
                            wanted.push((wrapper, wrapper_content(ms, *b, cmd, &target)));
                        }
                    }
                }
            }
        }
    }
    for (path, content) in wanted.iter() {
        match fs::read_to_string(path) {
            Ok(existing) if read_meta(&existing).is_none() => actions.push(Action::Skip {
                path: path.clone(),
                why: format!(
                    "{} is not micoff's (your own): left alone; add it yourself or remove it",
                    path.display()
                ),
            }),
            Ok(existing) if existing == *content => {
                actions.push(Action::Unchanged { path: path.clone() })
            }
            Err(e) if e.kind() != std::io::ErrorKind::NotFound && path.exists() => {
                actions.push(Action::Skip {
                    path: path.clone(),
                    why: format!("cannot read {}: {e}", path.display()),
                })
            }
            _ => actions.push(Action::Write {
                path: path.clone(),
                content: content.clone(),
            }),
        }
    }
    // Every other file of ours goes (a reset, another mechanism, a browser no longer chosen).
    for f in our_files(paths) {
        if !wanted.iter().any(|(p, _)| *p == f.path) {
            actions.push(Action::Remove { path: f.path });
        }
    }
    actions
}

/// What was at a path before [`apply`] changed it, to put back exactly.
enum Before {
    /// Nothing (a write created the file; through a dangling link, the file it points to).
    Absent,
    /// A file (or, for a write, the file a link points to): its bytes and permission bits.
    File { content: Vec<u8>, mode: u32 },
    /// A symlink that a removal took away, with what it pointed to.
    Link(PathBuf),
}

impl Before {
    /// The state a write to `path` replaces (through a link: the file it points to).
    fn of_write(path: &Path) -> Result<Self, String> {
        match micoff_files::read_with_mode(path) {
            Ok((content, mode)) => Ok(Self::File { content, mode }),
            // No file there (a part of the path missing, or a file where a folder would be).
            Err(e)
                if e.kind() == std::io::ErrorKind::NotFound
                    || e.raw_os_error() == Some(libc::ENOTDIR) =>
            {
                Ok(Self::Absent)
            }
            Err(e) => Err(format!("cannot read {} first: {e}", path.display())),
        }
    }

    /// The state a removal of `path` (the entry itself, a link included) replaces.
    fn of_remove(path: &Path) -> Result<Self, String> {
        if micoff_files::is_symlink(path) {
            return fs::read_link(path)
                .map(Self::Link)
                .map_err(|e| format!("cannot read the link {}: {e}", path.display()));
        }
        Self::of_write(path)
    }

    /// Puts it back at `path`; `wrote` says whether the change was a write (through links) or a
    /// removal (of the entry).
    fn put_back(&self, path: &Path, wrote: bool) -> std::io::Result<()> {
        match self {
            Self::Absent if wrote => micoff_files::remove(path),
            Self::Absent => Ok(()),
            Self::File { content, mode } => micoff_files::write_atomic(path, content, *mode),
            Self::Link(target) => std::os::unix::fs::symlink(target, path),
        }
    }
}

/// Carries out `actions`, all or nothing: when one fails, what this run already changed is put
/// back as it was (contents and permission bits exactly, a removed link as a link), and the error
/// says so (and names anything that could not be put back).
pub fn apply(actions: &[Action]) -> Result<(), String> {
    let mut done: Vec<(&Path, Before, bool)> = Vec::new();
    let mut failure = None;
    for a in actions {
        let step = match a {
            Action::Write { path, content } => Before::of_write(path).and_then(|before| {
                micoff_files::write_atomic(path, content.as_bytes(), 0o644)
                    .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
                Ok(Some((path.as_path(), before, true)))
            }),
            Action::Remove { path } => {
                // Check again right before: only a file that still is ours goes.
                let ours = fs::read_to_string(path)
                    .ok()
                    .is_some_and(|c| read_meta(&c).is_some());
                if ours {
                    Before::of_remove(path).and_then(|before| {
                        fs::remove_file(path)
                            .map_err(|e| format!("cannot remove {}: {e}", path.display()))?;
                        Ok(Some((path.as_path(), before, false)))
                    })
                } else {
                    Ok(None)
                }
            }
            Action::Unchanged { .. } | Action::Skip { .. } => Ok(None),
        };
        match step {
            Ok(Some(change)) => done.push(change),
            Ok(None) => {}
            Err(e) => {
                failure = Some(e);
                break;
            }
        }
    }
    let Some(error) = failure else {
        return Ok(());
    };
    if done.is_empty() {
        return Err(format!("{error}; nothing was changed"));
    }
    let mut not_back = Vec::new();
    for (path, before, wrote) in done.iter().rev() {
        if let Err(e) = before.put_back(path, *wrote) {
            not_back.push(format!("{}: {e}", path.display()));
        }
    }
    if not_back.is_empty() {
        Err(format!(
            "{error}; the {} file(s) this run had already changed were put back as they were",
            done.len()
        ))
    } else {
        Err(format!(
            "{error}; putting back what this run had changed failed for: {}",
            not_back.join("; ")
        ))
    }
}

/// Plans, applies (unless `dry_run`) and explains. `server` picks the mechanism when the request
/// does not name one.
pub fn set_with(
    paths: &Paths,
    req: &SetRequest,
    server: &LatencyServer,
    streams: &[AudioStream],
) -> Result<LatencySetResult, HostError> {
    if let Some(ms) = req.capture_ms {
        validate_capture_ms(ms).map_err(HostError::Internal)?;
    }
    let mechanism = req.mechanism.unwrap_or(server.mechanism);
    if req.capture_ms.is_some()
        && mechanism == Mechanism::PipewirePulseRule
        && server.kind == ServerKind::Pulseaudio
    {
        return Err(HostError::Internal(
            "a pipewire-pulse rule has no effect on PulseAudio: use the launch environment".into(),
        ));
    }
    let actions = plan(paths, req, mechanism);
    if !req.dry_run {
        apply(&actions).map_err(HostError::Internal)?;
        make_executable(paths, &actions).map_err(HostError::Internal)?;
    }
    let mut changed = Vec::new();
    let mut skipped = Vec::new();
    let mut lines = Vec::new();
    let verb = |now: &str, later: &str| if req.dry_run { later } else { now }.to_owned();
    let mut removed_rule = false;
    let mut env_changed: BTreeSet<Browser> = BTreeSet::new();
    for a in &actions {
        match a {
            Action::Write { path, .. } => {
                changed.push(path.display().to_string());
                lines.push(format!(
                    "{} {}",
                    verb("wrote", "would write"),
                    path.display()
                ));
            }
            Action::Remove { path } => {
                changed.push(path.display().to_string());
                if *path == paths.rule_file() {
                    removed_rule = true;
                }
                lines.push(format!(
                    "{} {}",
                    verb("removed", "would remove"),
                    path.display()
                ));
            }
            Action::Unchanged { path } => {
                lines.push(format!("{} is already as wanted", path.display()))
            }
            Action::Skip { path, why } => {
                skipped.push(path.display().to_string());
                lines.push(format!("skipped: {why}"));
            }
        }
        if let Action::Write { path, .. } | Action::Remove { path } = a {
            if let Some(b) = launch_file_browser(paths, path) {
                env_changed.insert(b);
            }
        }
    }
    let wrote_rule = actions
        .iter()
        .any(|a| matches!(a, Action::Write { path, .. } if *path == paths.rule_file()));
    let mut needs_restart = Vec::new();
    let open = streams.len();
    if wrote_rule || removed_rule {
        push_unique(&mut needs_restart, "pipewire-pulse");
        lines.push(if server.kind == ServerKind::Unknown {
            "pipewire-pulse reads its rules when it starts: the server could not be reached to \
             tell whether a stream is open; restart it only while none is \
             (`systemctl --user restart pipewire-pulse`)"
                .to_owned()
        } else if open == 0 {
            "pipewire-pulse reads its rules when it starts: no stream is open, so restarting it \
             now is safe (`systemctl --user restart pipewire-pulse`)"
                .to_owned()
        } else {
            format!(
                "pipewire-pulse reads its rules when it starts: {open} stream(s) are open, and \
                 restarting it cuts them; restart it after the call \
                 (`systemctl --user restart pipewire-pulse`)"
            )
        });
        for b in Browser::ALL.into_iter().filter(|b| *b != Browser::Firefox) {
            if req.browsers.is_empty() || req.browsers.contains(&b) {
                push_unique(&mut needs_restart, b.name());
            }
        }
        lines.push(
            "then restart the browser's audio service so its capture context reconnects (until \
             then a running Chromium cannot capture at all): \
             `micoff-host latency restart-audio-service` ends Chromium's/Chrome's when it has no \
             stream open (it comes back by itself; or Shift+Esc, end \"Utility: Audio Service\"); \
             Firefox: restart Firefox"
                .into(),
        );
    }
    for b in &env_changed {
        push_unique(&mut needs_restart, b.name());
    }
    if !env_changed.is_empty() {
        lines.push(format!(
            "quit and start {} again (from its menu entry, or by its command) for the launch \
             environment to change",
            env_changed
                .iter()
                .map(|b| b.name())
                .collect::<Vec<_>>()
                .join(", ")
        ));
        if req.capture_ms.is_some() {
            lines.extend(wrapper_notes(paths, &actions));
        }
        if req.capture_ms.is_some() {
            lines.push(format!(
                "note: {LATENCY_ENV} sets the latency of every stream of the browser: playback \
                 latency changes too (mouth-to-ear latency grows)"
            ));
        }
    }
    if req.capture_ms.is_some()
        && mechanism == Mechanism::LaunchEnvironment
        && !actions
            .iter()
            .any(|a| matches!(a, Action::Write { .. } | Action::Unchanged { .. }))
    {
        lines.push(format!(
            "no desktop entry of {} was found in {}: start the browser with `env {LATENCY_ENV}={} \
             <browser>` yourself",
            if req.browsers.is_empty() {
                browser_list(&Browser::ALL)
            } else {
                browser_list(&req.browsers)
            },
            paths
                .data_dirs
                .iter()
                .map(|d| d.join("applications").display().to_string())
                .collect::<Vec<_>>()
                .join(":"),
            req.capture_ms.unwrap_or_default()
        ));
    }
    if changed.is_empty() && skipped.is_empty() && req.capture_ms.is_none() {
        lines.push("nothing of micoff's is configured".into());
    }
    Ok(LatencySetResult {
        capture_ms: req.capture_ms,
        mechanism: req.capture_ms.map(|_| mechanism),
        dry_run: req.dry_run,
        changed_files: changed,
        skipped_files: skipped,
        needs_restart,
        message: lines.join("\n"),
    })
}

/// What the user needs to know about the PATH wrappers among `actions`: a shell finds them only
/// when `~/.local/bin` comes before the browser's own command in `$PATH`.
fn wrapper_notes(paths: &Paths, actions: &[Action]) -> Vec<String> {
    let mut notes = Vec::new();
    for w in wrappers_in(paths, actions) {
        let Some(cmd) = w.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let Some(target) = paths.real_command(cmd) else {
            continue;
        };
        let bin = w
            .parent()
            .map_or_else(String::new, |p| p.display().to_string());
        notes.push(if paths.wrapper_first(&target) {
            format!(
                "`{cmd}` started by name (a terminal, a launcher) runs {} through it",
                w.display()
            )
        } else {
            format!(
                "{} is not in PATH before {}: `{cmd}` started by name still runs {} without \
                 {LATENCY_ENV}; put {bin} first in PATH (e.g. `export PATH=\"{bin}:$PATH\"` in \
                 your shell profile) or start the browser from its menu entry",
                bin,
                target
                    .parent()
                    .map_or_else(String::new, |p| p.display().to_string()),
                target.display(),
            )
        });
    }
    notes
}

/// `latency set` / `reset` against the audio server (for the mechanism) and the file system.
pub async fn set(
    audio: &dyn AudioServer,
    paths: &Paths,
    req: &SetRequest,
) -> Result<LatencySetResult, HostError> {
    let info = audio.server_info().await;
    if req.capture_ms.is_some() && req.mechanism.is_none() {
        if let Err(e) = &info {
            let why = match e {
                HostError::AudioServerUnavailable(m) => m.clone(),
                other => other.to_string(),
            };
            return Err(HostError::AudioServerUnavailable(format!(
                "{why}; cannot tell which mechanism applies (`micoff-host latency set --mechanism` \
                 chooses one)"
            )));
        }
    }
    let streams = match &info {
        Ok(_) => audio.streams().await.unwrap_or_default(),
        Err(_) => Vec::new(),
    };
    let server = server_of(info.as_ref().ok());
    set_with(paths, req, &server, &streams)
}

// ------------------------------------------------------------------------------------------------
// The safe restart micoff offers: Chromium's audio service

/// The command-line switch of Chromium's audio service process.
pub const AUDIO_SERVICE_SWITCH: &str = "--utility-sub-type=audio.mojom.AudioService";

/// A Chromium-family audio service process.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AudioService {
    pub pid: u32,
    pub browser: Browser,
    /// Streams of this process open at the server (ending it would cut them).
    pub open_streams: Vec<u32>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RestartResult {
    pub dry_run: bool,
    /// Audio services ended (or that would be): the browser starts a new one when audio is next
    /// used, which connects with the server's current rules.
    pub ended: Vec<AudioService>,
    /// Audio services left running because they have streams open.
    pub kept: Vec<AudioService>,
    pub message: String,
}

/// The browser an audio service belongs to, from its binary's name.
fn browser_of_exe(exe: &Path) -> Option<Browser> {
    let name = exe.file_name()?.to_str()?;
    Browser::ALL
        .into_iter()
        .filter(|b| *b != Browser::Firefox)
        .find(|b| b.binaries().contains(&name))
}

/// This user's Chromium-family audio service processes under `proc_root`, of `browsers` (all
/// Chromium-family ones when empty).
pub fn audio_services(proc_root: &Path, browsers: &[Browser]) -> Vec<(u32, Browser)> {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    let mut found = Vec::new();
    let Ok(dir) = fs::read_dir(proc_root) else {
        return found;
    };
    for e in dir.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        let base = e.path();
        if fs::metadata(&base).map(|m| m.uid()).ok() != Some(me) {
            continue;
        }
        let Ok(cmdline) = fs::read(base.join("cmdline")) else {
            continue;
        };
        // Chromium's children rewrite their command line as one space-separated title.
        let text = String::from_utf8_lossy(&cmdline);
        let args: Vec<&str> = text.split(['\0', ' ']).filter(|a| !a.is_empty()).collect();
        if !args.contains(&AUDIO_SERVICE_SWITCH) {
            continue;
        }
        let Some(browser) = fs::read_link(base.join("exe"))
            .ok()
            .and_then(|exe| browser_of_exe(&exe))
            .or_else(|| args.first().and_then(|a| browser_of_exe(Path::new(a))))
        else {
            continue;
        };
        if browsers.is_empty() || browsers.contains(&browser) {
            found.push((pid, browser));
        }
    }
    found.sort_unstable();
    found
}

/// Ends the browsers' audio services that use this server and have no stream open at it (SIGTERM
/// by pid); keeps the others and says why. With `browser_pid`, only that browser's. Refuses
/// without a reachable server (it could not tell).
pub async fn restart_audio_services(
    audio: &dyn AudioServer,
    browsers: &[Browser],
    browser_pid: Option<u32>,
    dry_run: bool,
) -> Result<RestartResult, HostError> {
    let info = audio.server_info().await?;
    let streams = audio.streams().await?;
    // Only audio services that talk to this server (by the socket their environment names):
    // another session's browser is none of our business.
    let Some(ours) = info.server.socket_path.clone() else {
        return Err(HostError::AudioServerUnavailable(
            "the audio server is not on a local socket: cannot tell which audio services use it"
                .into(),
        ));
    };
    let mut ended = Vec::new();
    let mut kept = Vec::new();
    for (pid, browser) in audio_services(Path::new("/proc"), browsers) {
        if browser_pid.is_some_and(|b| !descends_from(pid, b)) {
            continue;
        }
        if server_socket_of(pid).as_deref() != Some(ours.as_str()) {
            continue;
        }
        let open_streams: Vec<u32> = streams
            .iter()
            .filter(|s| s.application_process_id == Some(pid))
            .map(|s| s.index)
            .collect();
        let service = AudioService {
            pid,
            browser,
            open_streams,
        };
        if !service.open_streams.is_empty() {
            kept.push(service);
            continue;
        }
        if !dry_run {
            // SAFETY: kill has no memory preconditions; the pid was just read from /proc and
            // checked to be this user's audio service.
            let rc = unsafe { libc::kill(pid as libc::pid_t, libc::SIGTERM) };
            if rc != 0 {
                let e = std::io::Error::last_os_error();
                if e.raw_os_error() != Some(libc::ESRCH) {
                    return Err(HostError::Internal(format!("cannot end pid {pid}: {e}")));
                }
            }
        }
        ended.push(service);
    }
    let mut lines = Vec::new();
    for s in &ended {
        lines.push(format!(
            "{} {}'s audio service (pid {}); the browser starts a new one when audio is next used",
            if dry_run { "would end" } else { "ended" },
            s.browser.name(),
            s.pid
        ));
    }
    for s in &kept {
        lines.push(format!(
            "kept {}'s audio service (pid {}): stream(s) {} open, ending it would cut them; \
             run this again after the call",
            s.browser.name(),
            s.pid,
            s.open_streams
                .iter()
                .map(|i| format!("#{i}"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if ended.is_empty() && kept.is_empty() {
        lines.push(format!(
            "no Chromium-family audio service using the audio server at {ours} is running"
        ));
    }
    Ok(RestartResult {
        dry_run,
        ended,
        kept,
        message: lines.join("\n"),
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn env(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn temp_paths() -> (tempfile::TempDir, Paths) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let paths = Paths {
            config_home: root.join("config"),
            data_home: root.join("data"),
            data_dirs: vec![root.join("system")],
            bin_home: Some(root.join("home/.local/bin")),
            // No browser command on PATH: no wrappers unless a test puts one there.
            path_dirs: Vec::new(),
        };
        (dir, paths)
    }

    /// An executable `name` in `dir` that prints its arguments and PULSE_LATENCY_MSEC (a stand-in for
    /// the browser's own command).
    fn fake_command(dir: &Path, name: &str) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        fs::create_dir_all(dir).unwrap();
        let p = dir.join(name);
        fs::write(&p, "#!/bin/sh\necho \"${PULSE_LATENCY_MSEC:-unset} $*\"\n").unwrap();
        fs::set_permissions(&p, fs::Permissions::from_mode(0o755)).unwrap();
        p
    }

    fn system_entry(paths: &Paths, id: &str) -> PathBuf {
        let p = paths.data_dirs[0].join("applications").join(id);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(
            &p,
            "[Desktop Entry]\nName=Chromium\nExec=/usr/bin/chromium %U\nType=Application\n\n\
             [Desktop Action new-window]\nName=New Window\nExec=/usr/bin/chromium --new-window\n",
        )
        .unwrap();
        p
    }

    fn info(pipewire: Option<&str>) -> AudioServerInfo {
        let server = micoff_pulse::ServerInfo {
            server_string: None,
            socket_path: None,
            server_name: match pipewire {
                Some(v) => format!("PulseAudio (on PipeWire {v})"),
                None => "pulseaudio".into(),
            },
            server_version: if pipewire.is_some() { "15.0.0" } else { "16.1" }.into(),
            is_pipewire: pipewire.is_some(),
            pipewire_version: pipewire.map(str::to_owned),
            host_name: None,
            user_name: None,
            default_sink_name: None,
            default_source_name: None,
            sample_format: "s16le".into(),
            sample_rate_hz: 48_000,
            channels: 2,
            server_protocol_version: None,
            client_protocol_version: 35,
            is_local: Some(true),
        };
        AudioServerInfo::new(server, vec![4242])
    }

    fn record(index: u32, app: &str, pid: u32, buffer_us: u64) -> AudioStream {
        AudioStream {
            kind: StreamKind::Record,
            index,
            name: Some("RecordStream".into()),
            media_name: None,
            client_index: Some(index + 100),
            client_name: Some(app.into()),
            application_name: Some(app.into()),
            application_process_id: Some(pid),
            application_process_binary: Some(if app.contains("Chromium") {
                "chromium".into()
            } else {
                "pacat".into()
            }),
            device_index: 3,
            device_name: Some("mic".into()),
            device_description: None,
            device_bus: None,
            device_class: None,
            device_props: Default::default(),
            device_configured_latency_us: Some(10_000),
            media_role: None,
            sample_format: "s16le".into(),
            sample_rate_hz: 48_000,
            channels: 2,
            buffer_latency_us: buffer_us,
            device_latency_us: 0,
            fragment_size_bytes: None,
            fragment_latency_us: None,
            requested_latency_us: None,
            corked: false,
            muted: false,
            driver: None,
            resample_method: None,
            owner_module: None,
            props: Default::default(),
        }
    }

    struct FakeWorld {
        env: HashMap<u32, u32>,
        started: Option<SystemTime>,
    }

    impl World for FakeWorld {
        fn latency_env(&self, pid: u32) -> Option<u32> {
            self.env.get(&pid).copied()
        }
        fn server_started(&self, _: &AudioServerInfo) -> Option<SystemTime> {
            self.started
        }
    }

    fn world(env: &[(u32, u32)], started: Option<SystemTime>) -> FakeWorld {
        FakeWorld {
            env: env.iter().copied().collect(),
            started,
        }
    }

    fn set_req(ms: Option<u32>, mechanism: Option<Mechanism>) -> SetRequest {
        SetRequest {
            capture_ms: ms,
            browsers: Vec::new(),
            mechanism,
            dry_run: false,
        }
    }

    #[test]
    fn paths_honour_xdg_and_fall_back_to_home() {
        let p = Paths::from_env(&env(&[
            ("HOME", "/home/u"),
            ("XDG_CONFIG_HOME", "/cfg"),
            ("XDG_DATA_DIRS", "/a:relative:/b"),
        ]))
        .unwrap();
        assert_eq!(
            p.rule_file(),
            PathBuf::from("/cfg/pipewire/pipewire-pulse.conf.d/50-micoff-capture-latency.conf")
        );
        assert_eq!(p.data_home, PathBuf::from("/home/u/.local/share"));
        assert_eq!(p.data_dirs, vec![PathBuf::from("/a"), PathBuf::from("/b")]);
        // A relative XDG value is ignored (XDG spec), the default data dirs apply.
        let p = Paths::from_env(&env(&[("HOME", "/h"), ("XDG_CONFIG_HOME", "rel")])).unwrap();
        assert_eq!(p.config_home, PathBuf::from("/h/.config"));
        assert_eq!(p.data_dirs[1], PathBuf::from("/usr/share"));
        assert!(Paths::from_env(&env(&[])).is_err());
    }

    #[test]
    fn rule_is_scoped_to_capture_clients_and_sets_min_frag_only() {
        let rule = rule_content(40, &Browser::ALL);
        assert!(rule.starts_with(&format!(
            "{MARKER}\n{META} capture_ms=40 browsers=chromium,chrome,firefox\n"
        )));
        assert!(rule.contains("{ application.name = \"Chromium input\" }"));
        assert!(rule.contains("{ application.name = \"Google Chrome input\" }"));
        assert!(rule.contains("{ application.process.binary = \"firefox-esr\" }"));
        assert!(rule.contains("pulse.min.frag = 1920/48000"));
        assert!(!rule.contains("quantum"), "never a quantum: {rule}");
        assert!(!rule.contains("application.process.binary = \"chromium\""));
        assert_eq!(min_frag(20), "960/48000");
        let only = rule_content(60, &[Browser::Chromium]);
        assert!(!only.contains("Google Chrome") && !only.contains("firefox"));
        let meta = read_meta(&only).unwrap();
        assert_eq!(meta["capture_ms"], "60");
        assert_eq!(meta["browsers"], "chromium");
    }

    #[test]
    fn desktop_entry_copy_runs_every_exec_through_env() {
        let sys = "[Desktop Entry]\nExec=/usr/bin/chromium %U\nTryExec=chromium\n[Desktop Action x]\nExec=/usr/bin/chromium --incognito\n";
        let out = desktop_entry_content(
            sys,
            Path::new("/usr/share/applications/chromium.desktop"),
            40,
            Browser::Chromium,
        );
        assert!(out.starts_with(MARKER));
        assert!(out.contains("\nExec=env PULSE_LATENCY_MSEC=40 /usr/bin/chromium %U\n"));
        assert!(out.contains("\nExec=env PULSE_LATENCY_MSEC=40 /usr/bin/chromium --incognito\n"));
        assert!(out.contains("\nTryExec=chromium\n"));
        assert_eq!(out.matches("Exec=env").count(), 2);
        let meta = read_meta(&out).unwrap();
        assert_eq!(meta["browser"], "chromium");
        assert_eq!(meta["source"], "/usr/share/applications/chromium.desktop");
        assert!(read_meta("[Desktop Entry]\nExec=x\n").is_none());
        assert!(read_meta(&format!("{MARKER}\nsomething else\n")).is_none());
    }

    #[test]
    fn rule_set_is_idempotent_and_reset_removes_only_ours() {
        let (_d, paths) = temp_paths();
        let rule = paths.rule_file();
        let pw = server_of(Some(&info(Some("0.3.65"))));
        assert_eq!(pw.mechanism, Mechanism::PipewirePulseRule);

        let dry = SetRequest {
            dry_run: true,
            ..set_req(Some(40), None)
        };
        let r = set_with(&paths, &dry, &pw, &[]).unwrap();
        assert_eq!(r.changed_files, vec![rule.display().to_string()]);
        assert!(!rule.exists(), "a dry run writes nothing");

        let r = set_with(&paths, &set_req(Some(40), None), &pw, &[]).unwrap();
        assert_eq!(r.mechanism, Some(Mechanism::PipewirePulseRule));
        assert!(r.needs_restart.contains(&"pipewire-pulse".to_owned()));
        assert!(r.message.contains("no stream is open"), "{}", r.message);
        let first = fs::read_to_string(&rule).unwrap();
        assert_eq!(first, rule_content(40, &Browser::ALL));
        // No temporary file left behind.
        assert_eq!(fs::read_dir(rule.parent().unwrap()).unwrap().count(), 1);

        let again = set_with(&paths, &set_req(Some(40), None), &pw, &[]).unwrap();
        assert!(again.changed_files.is_empty(), "{again:?}");
        assert!(again.needs_restart.is_empty());

        let r = set_with(&paths, &set_req(Some(60), None), &pw, &[]).unwrap();
        assert_eq!(r.changed_files.len(), 1);
        assert!(fs::read_to_string(&rule).unwrap().contains("2880/48000"));

        // A user's own file next to ours is never touched.
        let theirs = rule.with_file_name("10-mine.conf");
        fs::write(&theirs, "pulse.rules = []\n").unwrap();
        let r = set_with(&paths, &set_req(None, None), &pw, &[record(1, "x", 1, 0)]).unwrap();
        assert_eq!(r.changed_files, vec![rule.display().to_string()]);
        assert!(r.message.contains("1 stream(s) are open"), "{}", r.message);
        assert!(!rule.exists());
        assert!(theirs.exists());
        let r = set_with(&paths, &set_req(None, None), &pw, &[]).unwrap();
        assert!(r.changed_files.is_empty());
        assert!(r.message.contains("nothing of micoff's"));
    }

    #[test]
    fn apply_is_all_or_nothing_and_puts_back_exactly_what_it_changed() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o7777;
        // A file of ours that a write replaces (mode 0600, not what apply writes).
        let replaced = d.join("replaced.conf");
        let old = rule_content(40, &[Browser::Chromium]);
        fs::write(&replaced, &old).unwrap();
        fs::set_permissions(&replaced, fs::Permissions::from_mode(0o600)).unwrap();
        // A file of ours that a removal takes away, and a link of ours to one.
        let removed = d.join("removed.conf");
        fs::write(&removed, &old).unwrap();
        fs::set_permissions(&removed, fs::Permissions::from_mode(0o640)).unwrap();
        let real = d.join("dotfiles.conf");
        fs::write(&real, &old).unwrap();
        let removed_link = d.join("removed-link.conf");
        std::os::unix::fs::symlink("dotfiles.conf", &removed_link).unwrap();
        // A write through a link, and a write that creates a file.
        let through = d.join("through.conf");
        let through_real = d.join("through-real.conf");
        fs::write(&through_real, "mine\n").unwrap();
        std::os::unix::fs::symlink("through-real.conf", &through).unwrap();
        let created = d.join("created.conf");
        // The last write fails: its folder is a file.
        fs::write(d.join("not-a-folder"), "x").unwrap();
        let failing = d.join("not-a-folder/x.conf");
        let new = rule_content(20, &[Browser::Chromium]);
        let write = |p: &Path| Action::Write {
            path: p.to_path_buf(),
            content: new.clone(),
        };
        let actions = vec![
            write(&replaced),
            Action::Remove {
                path: removed.clone(),
            },
            Action::Remove {
                path: removed_link.clone(),
            },
            write(&through),
            write(&created),
            write(&failing),
        ];
        let err = apply(&actions).unwrap_err();
        assert!(err.contains("cannot write"), "{err}");
        assert!(err.contains("were put back as they were"), "{err}");
        assert_eq!(fs::read_to_string(&replaced).unwrap(), old);
        assert_eq!(mode(&replaced), 0o600);
        assert_eq!(fs::read_to_string(&removed).unwrap(), old);
        assert_eq!(mode(&removed), 0o640);
        assert_eq!(
            fs::read_link(&removed_link).unwrap(),
            PathBuf::from("dotfiles.conf")
        );
        assert_eq!(fs::read_to_string(&real).unwrap(), old);
        assert_eq!(
            fs::read_link(&through).unwrap(),
            PathBuf::from("through-real.conf")
        );
        assert_eq!(fs::read_to_string(&through_real).unwrap(), "mine\n");
        assert!(!created.exists());
        let mut names: Vec<String> = fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(
            names,
            [
                "dotfiles.conf",
                "not-a-folder",
                "removed-link.conf",
                "removed.conf",
                "replaced.conf",
                "through-real.conf",
                "through.conf"
            ]
        );
        // Without the failing write, everything is applied.
        apply(&actions[..5]).unwrap();
        assert_eq!(fs::read_to_string(&replaced).unwrap(), new);
        assert!(!removed.exists() && !removed_link.exists());
        assert_eq!(fs::read_to_string(&through_real).unwrap(), new);
        assert_eq!(fs::read_to_string(&created).unwrap(), new);
    }

    #[test]
    fn a_foreign_file_at_our_path_is_left_alone() {
        let (_d, paths) = temp_paths();
        let rule = paths.rule_file();
        fs::create_dir_all(rule.parent().unwrap()).unwrap();
        fs::write(&rule, "# the user's own\n").unwrap();
        let pw = server_of(Some(&info(Some("1.0.5"))));
        let r = set_with(&paths, &set_req(Some(40), None), &pw, &[]).unwrap();
        assert_eq!(r.skipped_files, vec![rule.display().to_string()]);
        assert!(r.changed_files.is_empty());
        assert_eq!(fs::read_to_string(&rule).unwrap(), "# the user's own\n");
        set_with(&paths, &set_req(None, None), &pw, &[]).unwrap();
        assert_eq!(fs::read_to_string(&rule).unwrap(), "# the user's own\n");
    }

    #[test]
    fn launch_environment_copies_desktop_entries_and_switching_cleans_up() {
        let (_d, paths) = temp_paths();
        let sys = system_entry(&paths, "chromium.desktop");
        let pa = server_of(Some(&info(None)));
        assert_eq!(pa.kind, ServerKind::Pulseaudio);
        assert_eq!(pa.mechanism, Mechanism::LaunchEnvironment);
        // The user's own Firefox entry is in the way: skipped, untouched.
        system_entry(&paths, "firefox-esr.desktop");
        let own_ff = paths.user_applications().join("firefox-esr.desktop");
        fs::create_dir_all(own_ff.parent().unwrap()).unwrap();
        fs::write(&own_ff, "[Desktop Entry]\nExec=my-firefox\n").unwrap();

        let r = set_with(&paths, &set_req(Some(40), None), &pa, &[]).unwrap();
        let copy = paths.user_applications().join("chromium.desktop");
        assert_eq!(r.changed_files, vec![copy.display().to_string()]);
        assert_eq!(r.skipped_files, vec![own_ff.display().to_string()]);
        assert!(
            r.message.contains("playback latency changes too"),
            "{}",
            r.message
        );
        assert_eq!(r.needs_restart, vec!["chromium".to_owned()]);
        let text = fs::read_to_string(&copy).unwrap();
        assert!(text.contains("Exec=env PULSE_LATENCY_MSEC=40 /usr/bin/chromium %U"));
        assert!(text.contains(&format!("source={}", sys.display())));
        assert_eq!(
            fs::read_to_string(&own_ff).unwrap(),
            "[Desktop Entry]\nExec=my-firefox\n"
        );

        let files = our_files(&paths);
        let (ms, mech, browsers, _) = configured_from(&files).unwrap();
        assert_eq!(
            (ms, mech, browsers),
            (40, Mechanism::LaunchEnvironment, vec![Browser::Chromium])
        );

        // Switching to the rule removes the desktop entry copy (ours), keeps the user's.
        let r = set_with(
            &paths,
            &set_req(Some(40), Some(Mechanism::PipewirePulseRule)),
            &server_of(Some(&info(Some("0.3.65")))),
            &[],
        )
        .unwrap();
        assert!(r.changed_files.contains(&copy.display().to_string()));
        assert!(!copy.exists() && own_ff.exists() && paths.rule_file().exists());
        // A rule is refused on PulseAudio.
        assert!(set_with(
            &paths,
            &set_req(Some(40), Some(Mechanism::PipewirePulseRule)),
            &pa,
            &[]
        )
        .is_err());
        // Out of range.
        assert!(set_with(&paths, &set_req(Some(5), None), &pa, &[]).is_err());
    }

    #[test]
    fn pulseaudio_status_reports_granted_and_who_holds_it_down() {
        let i = info(None);
        let chromium = record(7, "Chromium input", 1234, 40_000);
        let files = {
            let (_d, paths) = temp_paths();
            system_entry(&paths, "chromium.desktop");
            set_with(&paths, &set_req(Some(40), None), &server_of(Some(&i)), &[]).unwrap();
            our_files(&paths)
        };
        let w = world(&[(1234, 40)], None);
        let st = compute_status(Some(&i), std::slice::from_ref(&chromium), &files, &w);
        assert_eq!(st.server.kind, ServerKind::Pulseaudio);
        assert_eq!(st.server.version.as_deref(), Some("16.1"));
        let s = &st.streams[0];
        assert_eq!(
            (s.browser, s.capture_latency_us, s.requested_latency_us),
            (Browser::Chromium, 40_000, Some(40_000))
        );
        assert!(s.held_down_by.is_empty());
        assert_eq!(st.configured.as_ref().unwrap().in_effect, Some(true));
        assert!(st.needs_restart.is_empty());

        // A parec at 10 ms on the same source: Chromium is granted 10 ms, parec named.
        let mut held = chromium.clone();
        held.buffer_latency_us = 10_000;
        let parec = record(9, "parec", 99, 10_000);
        let mut module = record(2, "remap", 0, 0);
        module.client_index = None;
        module.owner_module = Some(5);
        let st = compute_status(Some(&i), &[held.clone(), parec, module], &files, &w);
        let s = &st.streams[0];
        assert_eq!(s.capture_latency_us, 10_000);
        assert_eq!(s.held_down_by.len(), 1);
        assert_eq!(s.held_down_by[0].index, 9);
        assert_eq!(s.held_down_by[0].application_name.as_deref(), Some("parec"));
        assert_eq!(s.held_down_by[0].application_process_id, Some(99));
        assert_eq!(st.configured.as_ref().unwrap().in_effect, Some(false));
        assert!(
            st.notes.iter().any(|n| n.contains("held down by #9 parec")),
            "{:?}",
            st.notes
        );

        // Granted 10 ms with nobody else asking less (a monitor source at its sink's latency): said so.
        let mut alone = chromium.clone();
        alone.buffer_latency_us = 10_000;
        let st = compute_status(Some(&i), &[alone], &files, &w);
        assert!(st.streams[0].held_down_by.is_empty());
        assert_eq!(st.configured.as_ref().unwrap().in_effect, Some(false));
        assert!(
            st.notes
                .iter()
                .any(|n| n.contains("no other recorder of mic asks less")),
            "{:?}",
            st.notes
        );

        // The browser started without the environment: it needs a restart.
        let st = compute_status(Some(&i), &[held], &files, &world(&[], None));
        assert_eq!(st.streams[0].requested_latency_us, Some(10_000));
        assert!(
            st.streams[0].held_down_by.is_empty(),
            "asked 10 ms, got 10 ms"
        );
        assert_eq!(st.needs_restart, vec!["chromium".to_owned()]);

        // Nothing open: in_effect unknown.
        let st = compute_status(Some(&i), &[], &files, &w);
        assert_eq!(st.configured.unwrap().in_effect, None);
    }

    #[test]
    fn pipewire_status_uses_the_fragment_and_names_restarts() {
        let i = info(Some("0.3.65"));
        let (_d, paths) = temp_paths();
        set_with(&paths, &set_req(Some(40), None), &server_of(Some(&i)), &[]).unwrap();
        let files = our_files(&paths);
        let written = files[0].modified.unwrap();

        let mut old = record(68, "Chromium input", 1234, 0);
        old.fragment_latency_us = Some(10_000);
        // Server started before the rule was written.
        let w = world(&[], Some(written - Duration::from_secs(60)));
        let st = compute_status(Some(&i), &[old.clone()], &files, &w);
        assert_eq!(st.server.kind, ServerKind::PipewirePulse);
        assert_eq!(st.server.version.as_deref(), Some("0.3.65"));
        assert_eq!(st.streams[0].capture_latency_us, 10_000);
        assert_eq!(st.streams[0].granted_latency_us, 0);
        assert!(st.streams[0].held_down_by.is_empty());
        assert_eq!(st.configured.as_ref().unwrap().in_effect, Some(false));
        assert_eq!(st.needs_restart, vec!["pipewire-pulse".to_owned()]);

        // Server restarted after, but the browser's context is older than the restart... it
        // lacks the rule: the browser needs its audio service restarted.
        let w = world(&[], Some(written + Duration::from_secs(60)));
        let st = compute_status(Some(&i), &[old], &files, &w);
        assert_eq!(st.needs_restart, vec!["chromium".to_owned()]);

        let mut new = record(70, "Chromium input", 1234, 0);
        new.fragment_latency_us = Some(40_000);
        new.props
            .insert("pulse.min.frag".into(), "1920/48000".into());
        let st = compute_status(Some(&i), &[new.clone()], &files, &w);
        assert_eq!(st.configured.as_ref().unwrap().in_effect, Some(true));
        assert_eq!(st.streams[0].rule_min_frag.as_deref(), Some("1920/48000"));
        assert!(st.needs_restart.is_empty());

        // After a reset the rule stays in force until pipewire-pulse restarts.
        let st = compute_status(Some(&i), &[new], &[], &w);
        assert!(st.configured.is_none());
        assert_eq!(st.needs_restart, vec!["pipewire-pulse".to_owned()]);
    }

    #[test]
    fn audio_service_browser_from_its_binary() {
        assert_eq!(
            browser_of_exe(Path::new("/usr/lib/chromium/chromium")),
            Some(Browser::Chromium)
        );
        assert_eq!(
            browser_of_exe(Path::new("/opt/google/chrome/chrome")),
            Some(Browser::Chrome)
        );
        assert_eq!(
            browser_of_exe(Path::new("/usr/lib/firefox-esr/firefox-esr")),
            None
        );
        // The pids listed are this user's processes whose command line has the switch: none here.
        assert!(audio_services(Path::new("/proc"), &[])
            .iter()
            .all(|(pid, _)| *pid != std::process::id()));
    }

    #[test]
    fn wrappers_on_path_run_the_browser_with_the_environment() {
        use std::os::unix::fs::PermissionsExt;
        let (d, mut paths) = temp_paths();
        let usr_bin = d.path().join("usr/bin");
        let bin_home = paths.bin_home.clone().unwrap();
        let real = fake_command(&usr_bin, "chromium");
        // Not executable: not a command, no wrapper for it.
        fs::write(usr_bin.join("firefox"), "not a program").unwrap();
        // ~/.local/bin first, as Debian's ~/.profile puts it.
        paths.path_dirs = vec![bin_home.clone(), usr_bin.clone()];
        let pa = server_of(Some(&info(None)));

        let dry = SetRequest {
            dry_run: true,
            ..set_req(Some(40), None)
        };
        let r = set_with(&paths, &dry, &pa, &[]).unwrap();
        let wrapper = bin_home.join("chromium");
        assert_eq!(r.changed_files, vec![wrapper.display().to_string()]);
        assert!(!wrapper.exists(), "a dry run writes nothing");

        let r = set_with(&paths, &set_req(Some(40), None), &pa, &[]).unwrap();
        assert_eq!(r.changed_files, vec![wrapper.display().to_string()]);
        assert_eq!(r.needs_restart, vec!["chromium".to_owned()]);
        assert!(r.message.contains("started by name"), "{}", r.message);
        assert!(r.message.contains("playback latency changes too"));
        let text = fs::read_to_string(&wrapper).unwrap();
        assert_eq!(
            text,
            wrapper_content(40, Browser::Chromium, "chromium", &real)
        );
        assert!(text.starts_with(&format!("#!/bin/sh\n{MARKER}\n")));
        let mode = fs::metadata(&wrapper).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o755);
        // It runs: the browser's own command gets the environment and every argument.
        let out = std::process::Command::new(&wrapper)
            .args(["--new-window", "a b"])
            .env_remove("PULSE_LATENCY_MSEC")
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "40 --new-window a b\n"
        );

        // It counts as the configuration (status reads it back), and the same request is a no-op.
        let (ms, mech, browsers, files) = configured_from(&our_files(&paths)).unwrap();
        assert_eq!(
            (ms, mech, browsers),
            (40, Mechanism::LaunchEnvironment, vec![Browser::Chromium])
        );
        assert_eq!(files, vec![wrapper.display().to_string()]);
        let again = set_with(&paths, &set_req(Some(40), None), &pa, &[]).unwrap();
        assert!(again.changed_files.is_empty(), "{again:?}");

        // A changed latency rewrites it; reset removes it.
        set_with(&paths, &set_req(Some(60), None), &pa, &[]).unwrap();
        assert!(fs::read_to_string(&wrapper)
            .unwrap()
            .contains("PULSE_LATENCY_MSEC=60 '"));
        let r = set_with(&paths, &set_req(None, None), &pa, &[]).unwrap();
        assert_eq!(r.changed_files, vec![wrapper.display().to_string()]);
        assert!(!wrapper.exists());
        assert!(real.exists(), "the browser's own command is never touched");
    }

    #[test]
    fn wrappers_never_replace_a_users_file_and_say_when_path_hides_them() {
        let (d, mut paths) = temp_paths();
        let usr_bin = d.path().join("usr/bin");
        let bin_home = paths.bin_home.clone().unwrap();
        fake_command(&usr_bin, "chromium");
        fake_command(&usr_bin, "firefox-esr");
        // The user's own chromium in ~/.local/bin: left alone.
        let theirs = fake_command(&bin_home, "chromium");
        let theirs_text = fs::read_to_string(&theirs).unwrap();
        // ~/.local/bin after /usr/bin: a shell never finds the wrapper.
        paths.path_dirs = vec![usr_bin.clone(), bin_home.clone()];
        let pa = server_of(Some(&info(None)));
        let r = set_with(&paths, &set_req(Some(40), None), &pa, &[]).unwrap();
        let ff = bin_home.join("firefox-esr");
        assert_eq!(r.changed_files, vec![ff.display().to_string()]);
        assert_eq!(r.skipped_files, vec![theirs.display().to_string()]);
        assert_eq!(fs::read_to_string(&theirs).unwrap(), theirs_text);
        assert!(r.message.contains("is not in PATH before"), "{}", r.message);
        // The user's file is never taken for the browser's own command either.
        assert!(!fs::read_to_string(&ff).unwrap().contains(".local/bin"));

        // Switching to the rule removes the wrapper (ours), keeps theirs.
        set_with(
            &paths,
            &set_req(Some(40), Some(Mechanism::PipewirePulseRule)),
            &server_of(Some(&info(Some("0.3.65")))),
            &[],
        )
        .unwrap();
        assert!(!ff.exists());
        assert_eq!(fs::read_to_string(&theirs).unwrap(), theirs_text);

        // No home: no wrappers, the desktop entries still work.
        paths.bin_home = None;
        system_entry(&paths, "chromium.desktop");
        let r = set_with(&paths, &set_req(Some(40), None), &pa, &[]).unwrap();
        assert_eq!(
            r.changed_files,
            vec![
                paths
                    .user_applications()
                    .join("chromium.desktop")
                    .display()
                    .to_string(),
                paths.rule_file().display().to_string(),
            ]
        );
    }

    #[test]
    fn paths_find_path_and_bin_home() {
        let p = Paths::from_env(&env(&[
            ("HOME", "/home/u"),
            ("PATH", "/home/u/.local/bin:relative:/usr/bin:/bin"),
        ]))
        .unwrap();
        assert_eq!(p.bin_home, Some(PathBuf::from("/home/u/.local/bin")));
        assert_eq!(
            p.path_dirs,
            vec![
                PathBuf::from("/home/u/.local/bin"),
                PathBuf::from("/usr/bin"),
                PathBuf::from("/bin")
            ]
        );
        assert!(p.wrapper_first(Path::new("/usr/bin/chromium")));
        let later = Paths::from_env(&env(&[
            ("HOME", "/home/u"),
            ("PATH", "/usr/bin:/home/u/.local/bin"),
        ]))
        .unwrap();
        assert!(!later.wrapper_first(Path::new("/usr/bin/chromium")));
        let q =
            Paths::from_env(&env(&[("XDG_CONFIG_HOME", "/c"), ("XDG_DATA_HOME", "/d")])).unwrap();
        assert_eq!(q.bin_home, None);
        assert!(q.path_dirs.is_empty());
        assert_eq!(sh_quote("/a b/it's"), r"'/a b/it'\''s'");
        let meta = read_meta(&wrapper_content(
            20,
            Browser::Firefox,
            "firefox",
            Path::new("/usr/bin/firefox"),
        ))
        .unwrap();
        assert_eq!(meta["browser"], "firefox");
        assert_eq!(meta["capture_ms"], "20");
        assert!(read_meta("#!/bin/sh\nexec chromium\n").is_none());
    }

    #[test]
    fn small_parsers() {
        assert_eq!(parse_version("0.3.65"), Some((0, 3, 65)));
        assert_eq!(parse_version("1.0"), Some((1, 0, 0)));
        assert!(parse_version("0.3.43").unwrap() < PIPEWIRE_MIN_RULES);
        assert_eq!(
            server_of(Some(&info(Some("0.3.40")))).mechanism,
            Mechanism::LaunchEnvironment
        );
        assert_eq!(server_of(None).kind, ServerKind::Unknown);
        let mut ff = record(1, "Firefox", 5, 25_000);
        ff.client_name = Some("Firefox".into());
        ff.application_process_binary = Some("firefox-esr".into());
        assert_eq!(Browser::of_stream(&ff), Some(Browser::Firefox));
        assert_eq!(
            Browser::of_stream(&record(1, "Google Chrome input", 5, 0)),
            Some(Browser::Chrome)
        );
        assert_eq!(Browser::of_stream(&record(1, "parec", 5, 0)), None);
    }
}
