//! `micoff-host install`: writes (or removes) the native messaging host manifest
//! `org.micoff.host.json` where each browser looks for it (docs: shared notes, "Native messaging").
//!
//! Every path goes through [`InstallEnv`] (home, config home, filesystem root, PATH, Flatpak apps)
//! so the tests run in temp dirs. Writes are atomic (temp file + rename) and idempotent.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::ValueEnum;

use crate::cli::{EXIT_ERROR, EXIT_NOT_FOUND, EXIT_OK, EXIT_PARTIAL, EXIT_USAGE};
use crate::{CHROME_EXTENSION_ID, FIREFOX_EXTENSION_ID, HOST_NAME};

#[derive(Debug, Clone, clap::Args)]
#[command(after_help = crate::cli::EXIT_CODES_HELP)]
pub struct InstallArgs {
    /// Browsers to install for, even if not detected (repeatable). Default: every detected browser.
    #[arg(long = "browser", value_enum)]
    pub browsers: Vec<Browser>,
    /// Install for every detected browser (the default when no --browser is given).
    #[arg(long, conflicts_with = "browsers")]
    pub all_detected: bool,
    /// Write the system-wide folders (/etc/..., /usr/lib/mozilla/...) instead of the user's.
    #[arg(long, conflicts_with = "target_dir")]
    pub system: bool,
    /// Write into this folder only (e.g. `<user-data-dir>/NativeMessagingHosts` for a browser
    /// started with --user-data-dir). Chromium-style manifest unless `--browser firefox`.
    #[arg(long, value_name = "DIR")]
    pub target_dir: Option<PathBuf>,
    /// Remove the manifests this command would write.
    #[arg(long)]
    pub uninstall: bool,
    /// Say what would be done, change nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// The host executable the manifest points to (default: this binary).
    #[arg(long, value_name = "PATH")]
    pub host_path: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, ValueEnum)]
pub enum Browser {
    Chrome,
    Chromium,
    Edge,
    Brave,
    Vivaldi,
    Firefox,
}

/// Where a browser keeps things.
struct BrowserSpec {
    /// User manifest folder relative to the config home (`~/.config`), or to home for Firefox.
    user_dir: &'static str,
    /// System manifest folder (absolute, under the root), when the browser has one.
    system_dir: Option<&'static str>,
    /// Config folder whose existence means "installed for this user" (same base as `user_dir`).
    config_dir: &'static str,
    binaries: &'static [&'static str],
    known_paths: &'static [&'static str],
    flatpak_id: &'static str,
}

impl Browser {
    pub const ALL: [Browser; 6] = [
        Browser::Chrome,
        Browser::Chromium,
        Browser::Edge,
        Browser::Brave,
        Browser::Vivaldi,
        Browser::Firefox,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Browser::Chrome => "Chrome",
            Browser::Chromium => "Chromium",
            Browser::Edge => "Edge",
            Browser::Brave => "Brave",
            Browser::Vivaldi => "Vivaldi",
            Browser::Firefox => "Firefox",
        }
    }

    pub fn is_firefox(self) -> bool {
        self == Browser::Firefox
    }

    fn spec(self) -> BrowserSpec {
        match self {
            Browser::Chrome => BrowserSpec {
                user_dir: "google-chrome/NativeMessagingHosts",
                system_dir: Some("etc/opt/chrome/native-messaging-hosts"),
                config_dir: "google-chrome",
                binaries: &["google-chrome", "google-chrome-stable"],
                known_paths: &["opt/google/chrome/chrome"],
                flatpak_id: "com.google.Chrome",
            },
            Browser::Chromium => BrowserSpec {
                user_dir: "chromium/NativeMessagingHosts",
                system_dir: Some("etc/chromium/native-messaging-hosts"),
                config_dir: "chromium",
                binaries: &["chromium", "chromium-browser"],
                known_paths: &["usr/lib/chromium/chromium"],
                flatpak_id: "org.chromium.Chromium",
            },
            Browser::Edge => BrowserSpec {
                user_dir: "microsoft-edge/NativeMessagingHosts",
                system_dir: Some("etc/opt/edge/native-messaging-hosts"),
                config_dir: "microsoft-edge",
                binaries: &["microsoft-edge", "microsoft-edge-stable"],
                known_paths: &["opt/microsoft/msedge/msedge"],
                flatpak_id: "com.microsoft.Edge",
            },
            // Brave and Vivaldi document no system-wide folder of their own.
            Browser::Brave => BrowserSpec {
                user_dir: "BraveSoftware/Brave-Browser/NativeMessagingHosts",
                system_dir: None,
                config_dir: "BraveSoftware/Brave-Browser",
                binaries: &["brave-browser", "brave"],
                known_paths: &["opt/brave.com/brave/brave"],
                flatpak_id: "com.brave.Browser",
            },
            Browser::Vivaldi => BrowserSpec {
                user_dir: "vivaldi/NativeMessagingHosts",
                system_dir: None,
                config_dir: "vivaldi",
                binaries: &["vivaldi", "vivaldi-stable"],
                known_paths: &["opt/vivaldi/vivaldi"],
                flatpak_id: "com.vivaldi.Vivaldi",
            },
            Browser::Firefox => BrowserSpec {
                user_dir: ".mozilla/native-messaging-hosts",
                system_dir: Some("usr/lib/mozilla/native-messaging-hosts"),
                config_dir: ".mozilla/firefox",
                binaries: &["firefox", "firefox-esr"],
                known_paths: &["usr/lib/firefox/firefox", "usr/lib/firefox-esr/firefox-esr"],
                flatpak_id: "org.mozilla.firefox",
            },
        }
    }
}

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
}

impl InstallEnv {
    /// The real machine, from the environment.
    pub fn from_system() -> Result<Self, String> {
        let home = std::env::var_os("HOME")
            .map(PathBuf::from)
            .filter(|h| h.is_absolute())
            .ok_or("$HOME is not set to an absolute path")?;
        let config_home = std::env::var_os("XDG_CONFIG_HOME")
            .map(PathBuf::from)
            .filter(|p| p.is_absolute());
        let path_dirs = std::env::var_os("PATH")
            .map(|p| std::env::split_paths(&p).collect())
            .unwrap_or_default();
        let mut env = Self {
            home,
            config_home,
            root: PathBuf::from("/"),
            path_dirs,
            flatpak_apps: Vec::new(),
        };
        if env.find_binary("flatpak").is_some() {
            env.flatpak_apps = flatpak_list();
        }
        Ok(env)
    }

    fn config_home(&self) -> PathBuf {
        self.config_home
            .clone()
            .unwrap_or_else(|| self.home.join(".config"))
    }

    fn user_base(&self, browser: Browser) -> PathBuf {
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
            .find(|p| p.is_file())
    }

    /// Why we think `browser` is installed (`None`: not found).
    pub fn detect(&self, browser: Browser) -> Option<String> {
        let spec = browser.spec();
        if let Some(bin) = spec.binaries.iter().find_map(|b| self.find_binary(b)) {
            return Some(format!("{} in PATH", bin.display()));
        }
        if let Some(p) = spec
            .known_paths
            .iter()
            .map(|p| self.root.join(p))
            .find(|p| p.is_file())
        {
            return Some(p.display().to_string());
        }
        let config = self.user_base(browser).join(spec.config_dir);
        if config.is_dir() {
            return Some(format!("{} exists", config.display()));
        }
        None
    }

    /// The Flatpak app folder (`~/.var/app/<id>`), when that browser is installed as a Flatpak.
    pub fn flatpak(&self, browser: Browser) -> Option<PathBuf> {
        let id = browser.spec().flatpak_id;
        let dir = self.home.join(".var/app").join(id);
        (dir.is_dir() || self.flatpak_apps.iter().any(|a| a == id)).then_some(dir)
    }

    /// The manifest folder for `browser` (user or system).
    pub fn manifest_dir(&self, browser: Browser, system: bool) -> Option<PathBuf> {
        let spec = browser.spec();
        if !system {
            return Some(self.user_base(browser).join(spec.user_dir));
        }
        let dir = spec.system_dir?;
        if browser.is_firefox()
            && !self.root.join(dir).is_dir()
            && self.root.join("usr/lib64/mozilla").is_dir()
        {
            return Some(self.root.join("usr/lib64/mozilla/native-messaging-hosts"));
        }
        Some(self.root.join(dir))
    }
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

/// The manifest for a browser family, as written (pretty JSON, trailing newline).
pub fn manifest_json(firefox: bool, host_path: &Path) -> String {
    let mut manifest = serde_json::json!({
        "name": HOST_NAME,
        "description": "micoff native host: CPU of the browser's audio threads and the audio server",
        "path": host_path.to_string_lossy(),
        "type": "stdio",
    });
    if let Some(object) = manifest.as_object_mut() {
        if firefox {
            object.insert(
                "allowed_extensions".into(),
                serde_json::json!([FIREFOX_EXTENSION_ID]),
            );
        } else {
            object.insert(
                "allowed_origins".into(),
                serde_json::json!([format!("chrome-extension://{CHROME_EXTENSION_ID}/")]),
            );
        }
    }
    let mut text = serde_json::to_string_pretty(&manifest).unwrap_or_default();
    text.push('\n');
    text
}

/// One manifest file to write or remove.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub label: String,
    pub firefox: bool,
    pub path: PathBuf,
}

/// What happened to one target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Wrote,
    Updated,
    Unchanged,
    Removed,
    Absent,
    Failed(String),
}

/// Works out the targets and the notes (skipped browsers, Flatpak advice) for `args`.
pub fn plan(args: &InstallArgs, env: &InstallEnv) -> Result<(Vec<Target>, Vec<String>), String> {
    let file = format!("{HOST_NAME}.json");
    let mut notes = Vec::new();
    if let Some(dir) = &args.target_dir {
        let firefox = match args.browsers.as_slice() {
            [] => false,
            list if list.iter().all(|b| b.is_firefox()) => true,
            list if list.iter().all(|b| !b.is_firefox()) => false,
            _ => return Err("--target-dir takes one manifest: either Firefox or Chromium-family browsers, not both".into()),
        };
        let label = if firefox {
            "Firefox"
        } else {
            "Chromium family"
        };
        return Ok((
            vec![Target {
                label: format!("{label} ({})", dir.display()),
                firefox,
                path: dir.join(file),
            }],
            notes,
        ));
    }
    let explicit = !args.browsers.is_empty();
    let mut browsers = if explicit {
        args.browsers.clone()
    } else {
        Browser::ALL.to_vec()
    };
    browsers.sort();
    browsers.dedup();
    let mut targets = Vec::new();
    for browser in browsers {
        let detected = env.detect(browser);
        let flatpak = env.flatpak(browser);
        if let Some(app_dir) = &flatpak {
            notes.push(flatpak_note(browser, app_dir));
        }
        if !explicit && detected.is_none() {
            continue;
        }
        match env.manifest_dir(browser, args.system) {
            Some(dir) => targets.push(Target {
                label: browser.name().to_owned(),
                firefox: browser.is_firefox(),
                path: dir.join(&file),
            }),
            None => notes.push(format!(
                "{}: no system-wide manifest folder is known; install per user instead",
                browser.name()
            )),
        }
    }
    Ok((targets, notes))
}

fn flatpak_note(browser: Browser, app_dir: &Path) -> String {
    let id = browser.spec().flatpak_id;
    if browser.is_firefox() {
        format!(
            "Flatpak {} ({id}) found: it starts native hosts outside its sandbox through the desktop \
             portal (xdg-desktop-portal with the WebExtensions portal), using the regular \
             ~/.mozilla/native-messaging-hosts manifest; allow it when the portal asks",
            browser.name()
        )
    } else {
        let dir = app_dir.join("config").join(browser.spec().user_dir);
        format!(
            "Flatpak {} ({id}) found: it reads manifests only from {} and runs the host inside its \
             sandbox, so the host binary must be reachable there too (e.g. copy it under {} and \
             run `micoff-host install --target-dir {} --host-path <that copy>`); the sandboxed host \
             cannot see other processes' threads unless the Flatpak shares the host's pid namespace",
            browser.name(),
            dir.display(),
            app_dir.display(),
            dir.display()
        )
    }
}

/// Applies one target (write or remove), honouring `dry_run`.
pub fn apply(target: &Target, host_path: &Path, uninstall: bool, dry_run: bool) -> Outcome {
    let existing = std::fs::read(&target.path).ok();
    if uninstall {
        return match existing {
            None => Outcome::Absent,
            Some(_) if dry_run => Outcome::Removed,
            Some(_) => match std::fs::remove_file(&target.path) {
                Ok(()) => Outcome::Removed,
                Err(e) => Outcome::Failed(e.to_string()),
            },
        };
    }
    let content = manifest_json(target.firefox, host_path);
    let outcome = match &existing {
        Some(old) if old == content.as_bytes() => return Outcome::Unchanged,
        Some(_) => Outcome::Updated,
        None => Outcome::Wrote,
    };
    if dry_run {
        return outcome;
    }
    match write_atomic(&target.path, content.as_bytes()) {
        Ok(()) => outcome,
        Err(e) => Outcome::Failed(e.to_string()),
    }
}

fn write_atomic(path: &Path, content: &[u8]) -> std::io::Result<()> {
    let dir = path
        .parent()
        .ok_or_else(|| std::io::Error::other("manifest path has no folder"))?;
    std::fs::create_dir_all(dir)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    let result = (|| {
        let mut file = std::fs::File::create(&tmp)?;
        file.write_all(content)?;
        file.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

fn host_path(args: &InstallArgs) -> Result<PathBuf, String> {
    let path = match &args.host_path {
        Some(p) => p.clone(),
        None => std::env::current_exe().map_err(|e| format!("cannot find this binary: {e}"))?,
    };
    if path.is_absolute() {
        return Ok(path);
    }
    std::path::absolute(&path).map_err(|e| format!("{}: {e}", path.display()))
}

/// Runs `install` against `env`, reporting to `out`. Returns the exit code.
pub fn run(args: &InstallArgs, env: &InstallEnv, out: &mut dyn Write) -> i32 {
    let host = match host_path(args) {
        Ok(p) => p,
        Err(e) => {
            let _ = writeln!(out, "error: {e}");
            return EXIT_ERROR;
        }
    };
    let (targets, notes) = match plan(args, env) {
        Ok(plan) => plan,
        Err(e) => {
            let _ = writeln!(out, "error: {e}");
            return EXIT_USAGE;
        }
    };
    for note in &notes {
        let _ = writeln!(out, "note: {note}");
    }
    if targets.is_empty() {
        let _ = writeln!(
            out,
            "no supported browser found (looked for {}); name one with --browser",
            Browser::ALL.map(Browser::name).join(", ")
        );
        return EXIT_NOT_FOUND;
    }
    let would = if args.dry_run { "would be " } else { "" };
    let mut failed = 0;
    for target in &targets {
        let outcome = apply(target, &host, args.uninstall, args.dry_run);
        let what = match &outcome {
            Outcome::Wrote => format!("{would}written"),
            Outcome::Updated => format!("{would}updated"),
            Outcome::Unchanged => "unchanged".to_owned(),
            Outcome::Removed => format!("{would}removed"),
            Outcome::Absent => "not present".to_owned(),
            Outcome::Failed(e) => {
                failed += 1;
                format!("FAILED: {e}")
            }
        };
        let _ = writeln!(out, "{}: {} {what}", target.label, target.path.display());
    }
    if !args.uninstall && failed < targets.len() {
        let _ = writeln!(out, "host: {}", host.display());
    }
    match failed {
        0 => EXIT_OK,
        n if n == targets.len() => EXIT_ERROR,
        _ => EXIT_PARTIAL,
    }
}
