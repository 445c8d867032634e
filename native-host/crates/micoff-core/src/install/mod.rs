//! `micoff-host install`: writes (or removes) the native messaging host manifest
//! `org.micoff.host.json` where each browser looks for it (docs/test-rig.md, "Native messaging host
//! manifests"). It is the one writer of that manifest: the build and the e2e rig run it too.
//!
//! Every path goes through [`InstallEnv`] (home, config home, filesystem root, PATH, Flatpak apps)
//! so the tests run in temp dirs. Writes go through `micoff-files` (an exclusively created, randomly
//! named temporary file + rename, mode 0644 whatever the umask, through a symlink when the
//! manifest is one) and are idempotent. `--uninstall` removes only a manifest that is still what
//! micoff writes ([`is_as_written`]); one the user edited is left alone.

pub mod chromium;
pub mod firefox;
pub mod json_text;
pub mod zip;

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::ValueEnum;

use crate::{CHROME_EXTENSION_ID, FIREFOX_EXTENSION_ID, HOST_NAME};
use micoff_exit::{EXIT_ERROR, EXIT_NOT_FOUND, EXIT_OK, EXIT_PARTIAL, EXIT_USAGE};

/// micoff's own system-wide folder, relative to the root: the copies of the crx and the xpi that
/// the browsers install from, and the record of what micoff wrote into Firefox's policies.
pub const SYSTEM_DATA_DIR: &str = "usr/local/share/micoff";

#[derive(Debug, Clone, clap::Args)]
#[command(after_help = micoff_exit::EXIT_CODES_HELP)]
pub struct InstallArgs {
    /// Browsers to install for, even if not detected (repeatable). Default: every detected browser.
    #[arg(long = "browser", value_enum)]
    pub browsers: Vec<Browser>,
    /// Install for every detected browser (the default when no --browser is given). With
    /// --uninstall: every known folder, detected or not (also the default).
    #[arg(long, conflicts_with = "browsers")]
    pub all_detected: bool,
    /// Write the system-wide folders (/etc/..., /usr/lib/mozilla/...) instead of the user's.
    #[arg(long, conflicts_with = "target_dir")]
    pub system: bool,
    /// Write into this folder only (e.g. `<user-data-dir>/NativeMessagingHosts` for a browser
    /// started with --user-data-dir). Chromium-style manifest unless `--browser firefox`.
    #[arg(long, value_name = "DIR")]
    pub target_dir: Option<PathBuf>,
    /// Remove our manifest (only an `org.micoff.host.json` that points at a micoff-host) from
    /// every known folder (of the named browsers with --browser), detected or not.
    #[arg(long)]
    pub uninstall: bool,
    /// Say what would be done, change nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// The host executable the manifest points to (default: this binary).
    #[arg(long, value_name = "PATH")]
    pub host_path: Option<PathBuf>,
    /// Also switch on Firefox's own release of a disabled microphone
    /// (media.getusermedia.microphone.off_while_disabled.enabled and its delay): in each Firefox
    /// profile's user.js, or with --system in /etc/firefox/policies/policies.json. With
    /// --uninstall: removes what micoff added there, nothing else.
    #[arg(long)]
    pub firefox_release: bool,
    /// The delay before Firefox releases a disabled microphone (micoff's release delay), ms.
    #[arg(long, value_name = "MS", default_value_t = crate::install::firefox::DEFAULT_DELAY_MS,
          value_parser = clap::value_parser!(u32).range(0..=i64::from(crate::install::firefox::MAX_DELAY_MS)))]
    pub release_delay_ms: u32,
    /// Firefox profile folders for --firefox-release and --firefox-xpi (repeatable; default:
    /// every profile listed in ~/.mozilla/firefox/profiles.ini).
    #[arg(long = "firefox-profile", value_name = "DIR")]
    pub firefox_profiles: Vec<PathBuf>,
    /// Install micoff's add-on for good in Firefox ESR / Developer Edition / Nightly from this
    /// xpi (`npm run package` -> dist/micoff-<version>.xpi, unsigned): per user into each profile
    /// (a copy in <profile>/extensions and the prefs that let Firefox take it up, in user.js);
    /// with --system force-installed through policies.json from a copy in /usr/local/share/micoff.
    /// Release Firefox accepts only the add-on signed by addons.mozilla.org (said per profile).
    /// With --uninstall (no XPI needed): removes micoff's copy and those lines or entries; Firefox
    /// removes micoff at its next start (--system: micoff's policy entry blocks micoff until the
    /// next --uninstall, once every user's Firefox has started).
    #[arg(long, value_name = "XPI", num_args = 0..=1)]
    #[allow(clippy::option_option)]
    // absent / given without an XPI (uninstall) / given with one
    pub firefox_xpi: Option<Option<PathBuf>>,
    /// Install micoff into Chromium from this crx (`npm run package` with the release key ->
    /// dist/micoff-<version>.crx) through Chromium's external extensions: per user in
    /// ~/.config/chromium/External Extensions (no root), with --system for every user. Chromium
    /// installs it at its next start, enabled. With --uninstall (no CRX needed): removes that
    /// entry and micoff's copy of the crx; Chromium removes micoff at its next start.
    #[arg(long, value_name = "CRX", num_args = 0..=1, conflicts_with = "target_dir")]
    #[allow(clippy::option_option)]
    // absent / given without a CRX (uninstall) / given with one
    pub chromium_crx: Option<Option<PathBuf>>,
    /// With --chromium-crx: install a crx signed with another key than micoff's release key (a
    /// fork's own key, or a test key). Chromium installs it under that key's id; this host answers
    /// it only when built from that key (manifests/chrome.json `key`).
    #[arg(long, requires = "chromium_crx")]
    pub allow_other_key: bool,
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

/// Where a browser keeps things, and how to tell it is installed.
struct BrowserSpec {
    /// User manifest folder relative to the config home (`~/.config`), or to home for Firefox.
    user_dir: &'static str,
    /// System manifest folder (absolute, under the root), when the browser has one.
    system_dir: Option<&'static str>,
    /// A file the browser itself writes once it has run for this user (same base as `user_dir`):
    /// Chromium's `Local State`, Firefox's `profiles.ini`. Never a folder: `install` creates the
    /// folders above the manifest, which must not make a browser count as installed.
    profile_marker: &'static str,
    /// Executable names looked up in `$PATH`.
    binaries: &'static [&'static str],
    /// Executables at the usual install locations (relative to the root).
    known_paths: &'static [&'static str],
    /// `<dir>*/<name>*` executables under these (relative to the root; `<name>` is the last part),
    /// e.g. Firefox's `/usr/lib/firefox-esr/firefox-esr` or `/usr/lib64/firefox/firefox`.
    known_dir_prefixes: &'static [&'static str],
    /// The snap's name (`/snap/bin/<name>`), when there is one.
    snap: Option<&'static str>,
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
                profile_marker: "google-chrome/Local State",
                binaries: &[
                    "google-chrome",
                    "google-chrome-stable",
                    "google-chrome-beta",
                    "google-chrome-unstable",
                ],
                known_paths: &[
                    "opt/google/chrome/chrome",
                    "opt/google/chrome/google-chrome",
                ],
                known_dir_prefixes: &[],
                snap: None,
                flatpak_id: "com.google.Chrome",
            },
            Browser::Chromium => BrowserSpec {
                user_dir: "chromium/NativeMessagingHosts",
                system_dir: Some("etc/chromium/native-messaging-hosts"),
                profile_marker: "chromium/Local State",
                binaries: &["chromium", "chromium-browser"],
                known_paths: &[
                    "usr/bin/chromium",
                    "usr/lib/chromium/chromium",
                    "usr/lib/chromium-browser/chromium-browser",
                    "usr/lib64/chromium-browser/chromium-browser",
                ],
                known_dir_prefixes: &[],
                snap: Some("chromium"),
                flatpak_id: "org.chromium.Chromium",
            },
            Browser::Edge => BrowserSpec {
                user_dir: "microsoft-edge/NativeMessagingHosts",
                system_dir: Some("etc/opt/edge/native-messaging-hosts"),
                profile_marker: "microsoft-edge/Local State",
                binaries: &[
                    "microsoft-edge",
                    "microsoft-edge-stable",
                    "microsoft-edge-beta",
                    "microsoft-edge-dev",
                ],
                known_paths: &["opt/microsoft/msedge/msedge"],
                known_dir_prefixes: &[],
                snap: None,
                flatpak_id: "com.microsoft.Edge",
            },
            // Brave and Vivaldi document no system-wide folder of their own.
            Browser::Brave => BrowserSpec {
                user_dir: "BraveSoftware/Brave-Browser/NativeMessagingHosts",
                system_dir: None,
                profile_marker: "BraveSoftware/Brave-Browser/Local State",
                binaries: &["brave-browser", "brave", "brave-browser-stable"],
                known_paths: &[
                    "opt/brave.com/brave/brave",
                    "opt/brave.com/brave/brave-browser",
                ],
                known_dir_prefixes: &[],
                snap: Some("brave"),
                flatpak_id: "com.brave.Browser",
            },
            Browser::Vivaldi => BrowserSpec {
                user_dir: "vivaldi/NativeMessagingHosts",
                system_dir: None,
                profile_marker: "vivaldi/Local State",
                binaries: &["vivaldi", "vivaldi-stable"],
                known_paths: &["opt/vivaldi/vivaldi", "opt/vivaldi/vivaldi-bin"],
                known_dir_prefixes: &[],
                snap: Some("vivaldi"),
                flatpak_id: "com.vivaldi.Vivaldi",
            },
            Browser::Firefox => BrowserSpec {
                user_dir: ".mozilla/native-messaging-hosts",
                system_dir: Some("usr/lib/mozilla/native-messaging-hosts"),
                profile_marker: ".mozilla/firefox/profiles.ini",
                binaries: &["firefox", "firefox-esr"],
                known_paths: &[
                    "usr/bin/firefox",
                    "usr/bin/firefox-esr",
                    "opt/firefox/firefox",
                ],
                known_dir_prefixes: &["usr/lib/firefox", "usr/lib64/firefox"],
                snap: Some("firefox"),
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
    /// `$XDG_DATA_HOME`; `home/.local/share` when unset.
    pub data_home: Option<PathBuf>,
}

impl InstallEnv {
    /// The real machine, from the environment.
    pub fn from_system() -> Result<Self, String> {
        let home = std::env::var_os("HOME")
            .map(PathBuf::from)
            .filter(|h| h.is_absolute())
            .ok_or("$HOME is not set to an absolute path")?;
        let xdg = |name: &str| {
            std::env::var_os(name)
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
        };
        let config_home = xdg("XDG_CONFIG_HOME");
        let data_home = xdg("XDG_DATA_HOME");
        let path_dirs = std::env::var_os("PATH")
            .map(|p| std::env::split_paths(&p).collect())
            .unwrap_or_default();
        let mut env = Self {
            home,
            config_home,
            root: PathBuf::from("/"),
            path_dirs,
            flatpak_apps: Vec::new(),
            data_home,
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

    /// `$XDG_DATA_HOME`, else `~/.local/share`.
    pub fn data_home(&self) -> PathBuf {
        self.data_home
            .clone()
            .unwrap_or_else(|| self.home.join(".local/share"))
    }

    /// Chromium's default user data dir (`~/.config/chromium`): the folder above its
    /// `NativeMessagingHosts`.
    pub fn chromium_user_data_dir(&self) -> PathBuf {
        let manifests = self.config_home().join(Browser::Chromium.spec().user_dir);
        manifests
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or(manifests)
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
            .find(|p| is_executable(p))
    }

    /// Why we think `browser` is installed (`None`: not found): its executable in `$PATH` or at a
    /// usual install location, its snap, or the profile state it writes when it runs. Never a
    /// folder (this command creates the folders above the manifests itself).
    pub fn detect(&self, browser: Browser) -> Option<String> {
        let spec = browser.spec();
        if let Some(bin) = spec.binaries.iter().find_map(|b| self.find_binary(b)) {
            return Some(format!("{} in PATH", bin.display()));
        }
        if let Some(p) = spec
            .known_paths
            .iter()
            .map(|p| self.root.join(p))
            .find(|p| is_executable(p))
        {
            return Some(p.display().to_string());
        }
        if let Some(p) = spec
            .known_dir_prefixes
            .iter()
            .find_map(|prefix| self.find_under_prefix(prefix))
        {
            return Some(p.display().to_string());
        }
        if let Some(name) = spec.snap {
            let link = self.root.join("snap/bin").join(name);
            // `/snap/bin/<name>` is a symlink to `/usr/bin/snap`: that it exists is the fact.
            if std::fs::symlink_metadata(&link).is_ok() {
                return Some(format!("snap {name} ({})", link.display()));
            }
        }
        let marker = self.user_base(browser).join(spec.profile_marker);
        if marker.is_file() {
            return Some(format!("profile {}", marker.display()));
        }
        None
    }

    /// Every Firefox executable found (PATH, the usual install locations), links not resolved.
    pub fn firefox_executables(&self) -> Vec<PathBuf> {
        let spec = Browser::Firefox.spec();
        let mut out: Vec<PathBuf> = spec
            .binaries
            .iter()
            .filter_map(|b| self.find_binary(b))
            .collect();
        out.extend(
            spec.known_paths
                .iter()
                .map(|p| self.root.join(p))
                .filter(|p| is_executable(p)),
        );
        out.extend(
            spec.known_dir_prefixes
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

    /// The Flatpak app folder (`~/.var/app/<id>`), when that browser is installed as a Flatpak.
    pub fn flatpak(&self, browser: Browser) -> Option<PathBuf> {
        let id = browser.spec().flatpak_id;
        let dir = self.home.join(".var/app").join(id);
        (dir.is_dir() || self.flatpak_apps.iter().any(|a| a == id)).then_some(dir)
    }

    /// Every folder where our manifest for `browser` may be (user or system): the one `install`
    /// writes, Firefox's other system folder (lib vs lib64), and a Flatpak browser's own folder.
    pub fn known_manifest_dirs(&self, browser: Browser, system: bool) -> Vec<PathBuf> {
        let spec = browser.spec();
        let mut dirs: Vec<PathBuf> = self.manifest_dir(browser, system).into_iter().collect();
        if system && browser.is_firefox() {
            for d in [
                "usr/lib/mozilla/native-messaging-hosts",
                "usr/lib64/mozilla/native-messaging-hosts",
            ] {
                dirs.push(self.root.join(d));
            }
        }
        if !system && !browser.is_firefox() {
            let app = self.home.join(".var/app").join(spec.flatpak_id);
            dirs.push(app.join("config").join(spec.user_dir));
        }
        let mut unique = Vec::new();
        for d in dirs {
            if !unique.contains(&d) {
                unique.push(d);
            }
        }
        unique
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
    /// (uninstall) A file of that name that is not ours: left alone.
    NotOurs(String),
    /// (uninstall) Ours, but edited since micoff wrote it: left alone.
    Edited(String),
    Failed(String),
}

/// What `install` will do.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    pub targets: Vec<Target>,
    /// Skipped browsers, Flatpak advice.
    pub notes: Vec<String>,
    /// Why each browser installed for was picked (`Chromium: /usr/bin/chromium in PATH`).
    pub detected: Vec<String>,
    /// Named browsers (`--browser`) that have no folder for this request (`--system` for Brave
    /// or Vivaldi): work asked for that cannot be done.
    pub impossible: Vec<Browser>,
    /// Uninstall over the known folders: report only the files found there.
    pub sweep: bool,
}

/// Works out the targets and the notes (skipped browsers, Flatpak advice) for `args`.
///
/// Install: the named browsers, else the detected ones. Uninstall: every known folder of the named
/// browsers, else of all of them, detected or not (a browser removed since, or never detected,
/// may still have our manifest).
pub fn plan(args: &InstallArgs, env: &InstallEnv) -> Result<Plan, String> {
    let file = format!("{HOST_NAME}.json");
    let mut plan = Plan::default();
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
        plan.targets.push(Target {
            label: format!("{label} ({})", dir.display()),
            firefox,
            path: dir.join(file),
        });
        return Ok(plan);
    }
    let explicit = !args.browsers.is_empty();
    plan.sweep = args.uninstall;
    let mut browsers = if explicit {
        args.browsers.clone()
    } else {
        Browser::ALL.to_vec()
    };
    browsers.sort();
    browsers.dedup();
    for browser in browsers {
        if args.uninstall {
            let dirs = env.known_manifest_dirs(browser, args.system);
            if dirs.is_empty() && explicit {
                plan.notes.push(format!(
                    "{}: no system-wide manifest folder exists, so there is nothing to remove there",
                    browser.name()
                ));
            }
            plan.targets.extend(dirs.into_iter().map(|dir| Target {
                label: browser.name().to_owned(),
                firefox: browser.is_firefox(),
                path: dir.join(&file),
            }));
            continue;
        }
        let detected = env.detect(browser);
        if let Some(app_dir) = &env.flatpak(browser) {
            plan.notes.push(flatpak_note(browser, app_dir));
        }
        if !explicit && detected.is_none() {
            continue;
        }
        match env.manifest_dir(browser, args.system) {
            Some(dir) => {
                if let Some(why) = &detected {
                    plan.detected.push(format!("{}: {why}", browser.name()));
                }
                plan.targets.push(Target {
                    label: browser.name().to_owned(),
                    firefox: browser.is_firefox(),
                    path: dir.join(&file),
                });
            }
            None if explicit => plan.impossible.push(browser),
            None => plan.notes.push(format!(
                "{}: no system-wide manifest folder is known; install per user instead (without --system)",
                browser.name()
            )),
        }
    }
    Ok(plan)
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

/// Whether a manifest file is ours: our host name, pointing at a `micoff-host` binary.
pub fn is_our_manifest(text: &[u8]) -> Result<(), String> {
    let value: serde_json::Value =
        serde_json::from_slice(text).map_err(|_| "not a JSON manifest".to_owned())?;
    if value.get("name").and_then(|n| n.as_str()) != Some(HOST_NAME) {
        return Err(format!("its `name` is not {HOST_NAME}"));
    }
    let path = value.get("path").and_then(|p| p.as_str()).unwrap_or("");
    let binary = Path::new(path)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if binary != "micoff-host" {
        return Err(format!("its `path` ({path}) is not a micoff-host"));
    }
    Ok(())
}

/// Whether a manifest of ours is still what micoff writes: the manifest is a pure function of
/// the browser family and the host path it names, so what was written is recomputed (either
/// family: `--target-dir` does not always say which) and compared as JSON. The `description`
/// may differ (it changes between versions); anything else differing is an edit, and names it.
pub fn is_as_written(text: &[u8]) -> Result<(), String> {
    let without_description = |mut v: serde_json::Value| {
        if let Some(o) = v.as_object_mut() {
            o.remove("description");
        }
        v
    };
    let found: serde_json::Value =
        serde_json::from_slice(text).map_err(|_| "not a JSON manifest".to_owned())?;
    let path = found.get("path").and_then(|p| p.as_str()).unwrap_or("");
    let found = without_description(found.clone());
    let mut differ = Vec::new();
    for firefox in [false, true] {
        let written: serde_json::Value =
            serde_json::from_str(&manifest_json(firefox, Path::new(path)))
                .map_err(|e| e.to_string())?;
        let written = without_description(written);
        if written == found {
            return Ok(());
        }
        if let (Some(w), Some(f)) = (written.as_object(), found.as_object()) {
            let mut keys: Vec<&String> = w.keys().chain(f.keys()).collect();
            keys.sort();
            keys.dedup();
            differ.push(
                keys.into_iter()
                    .filter(|k| w.get(*k) != f.get(*k))
                    .map(|k| format!("`{k}`"))
                    .collect::<Vec<_>>()
                    .join(", "),
            );
        }
    }
    let least = differ
        .into_iter()
        .min_by_key(|d| d.len())
        .unwrap_or_default();
    Err(format!("changed since micoff wrote it ({least})"))
}

/// Applies one target (write or remove), honouring `dry_run`. Removes only manifests that are ours
/// ([`is_our_manifest`]) and unedited ([`is_as_written`]); a symlinked manifest is written
/// through the link, and on removal the link goes (what it points to is left alone).
pub fn apply(target: &Target, host_path: &Path, uninstall: bool, dry_run: bool) -> Outcome {
    let existing = std::fs::read(&target.path).ok();
    if uninstall {
        return match existing {
            None => Outcome::Absent,
            Some(text) => match is_our_manifest(&text) {
                Err(why) => Outcome::NotOurs(why),
                Ok(()) => match is_as_written(&text) {
                    Err(why) => Outcome::Edited(why),
                    Ok(()) if dry_run => Outcome::Removed,
                    Ok(()) => match std::fs::remove_file(&target.path) {
                        Ok(()) => Outcome::Removed,
                        Err(e) => Outcome::Failed(e.to_string()),
                    },
                },
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
    // 0644: browsers run as the user, system folders are read by everyone.
    match micoff_files::write_atomic(&target.path, content.as_bytes(), 0o644) {
        Ok(()) => outcome,
        Err(e) => Outcome::Failed(e.to_string()),
    }
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

/// Runs `install` (the host manifests, then with `--chromium-crx` micoff into Chromium, then with
/// `--firefox-release` / `--firefox-xpi` Firefox's parts) against `env`, reporting to `out`.
/// Returns the worst exit code of the parts (`EXIT_PARTIAL` when they differ).
pub fn run_all(args: &InstallArgs, env: &InstallEnv, out: &mut dyn Write) -> i32 {
    // Firefox's part is checked first: a bad xpi, or a policy file that would be refused, stops
    // the install before anything is written.
    let firefox = match firefox_request(args, env, out) {
        Ok(req) => req,
        Err(code) => return code,
    };
    if let Some(code) = firefox
        .as_ref()
        .and_then(|req| crate::install::firefox::refuse_before_writing(req, out))
    {
        return code;
    }
    let mut code = run(args, env, out);
    if let Some(crx) = &args.chromium_crx {
        let req = crate::install::chromium::Request {
            crx: crx.as_deref(),
            allow_other_key: args.allow_other_key,
            system: args.system,
            uninstall: args.uninstall,
            dry_run: args.dry_run,
        };
        code = worst(code, crate::install::chromium::run(&req, env, out));
    }
    match firefox {
        Some(req) => worst(code, crate::install::firefox::run(&req, out)),
        None => code,
    }
}

/// Firefox's part of `install` (`--firefox-release` / `--firefox-xpi`), `None` when not asked
/// for; `Err` with the exit code on a usage error (said to `out`).
fn firefox_request<'a>(
    args: &InstallArgs,
    env: &'a InstallEnv,
    out: &mut dyn Write,
) -> Result<Option<crate::install::firefox::Request<'a>>, i32> {
    if !args.firefox_release && args.firefox_xpi.is_none() {
        return Ok(None);
    }
    let addon = match &args.firefox_xpi {
        None => None,
        Some(_) if args.uninstall => Some(crate::install::firefox::Addon {
            id: FIREFOX_EXTENSION_ID.to_owned(),
            xpi: None,
        }),
        Some(None) => {
            let _ = writeln!(
                out,
                "error: --firefox-xpi needs the xpi to install (npm run package writes \
                 dist/micoff-<version>.xpi)"
            );
            return Err(EXIT_USAGE);
        }
        Some(Some(path)) => match read_xpi(path) {
            Ok(xpi) => Some(crate::install::firefox::Addon {
                id: FIREFOX_EXTENSION_ID.to_owned(),
                xpi: Some(xpi),
            }),
            Err(e) => {
                let _ = writeln!(out, "error: --firefox-xpi {}: {e}", path.display());
                return Err(EXIT_USAGE);
            }
        },
    };
    Ok(Some(crate::install::firefox::Request {
        profiles: if args.system {
            Vec::new()
        } else if args.firefox_profiles.is_empty() {
            crate::install::firefox::profiles(&env.home)
        } else {
            args.firefox_profiles.clone()
        },
        system_root: args.system.then_some(env.root.as_path()),
        delay_ms: args.release_delay_ms,
        release_prefs: args.firefox_release,
        addon,
        builds: crate::install::firefox::build::builds_of(&env.firefox_executables()),
        uninstall: args.uninstall,
        dry_run: args.dry_run,
    }))
}

/// The xpi to install: an add-on whose id is micoff's (the id this host answers).
fn read_xpi(path: &Path) -> Result<(Vec<u8>, crate::install::firefox::XpiInfo), String> {
    let bytes = std::fs::read(path).map_err(|e| e.to_string())?;
    let info = crate::install::firefox::inspect_xpi(&bytes)?;
    if info.id != FIREFOX_EXTENSION_ID {
        return Err(format!(
            "add-on id {}, but this micoff-host answers only {FIREFOX_EXTENSION_ID}: not micoff's \
             add-on (use the xpi `npm run package` writes)",
            info.id
        ));
    }
    Ok((bytes, info))
}

/// Two parts' exit codes as one: either when the other is OK, else `EXIT_PARTIAL`.
fn worst(a: i32, b: i32) -> i32 {
    match (a, b) {
        (EXIT_OK, b) => b,
        (a, EXIT_OK) => a,
        _ => EXIT_PARTIAL,
    }
}

/// What the user still has to do for the extension itself, per browser family installed for:
/// the browsers whose extension side `install` cannot do (docs/design/firefox-install.md).
fn extension_steps(plan: &Plan, args: &InstallArgs) -> Vec<String> {
    let mut steps = Vec::new();
    if plan.targets.iter().any(|t| !t.firefox) && args.chromium_crx.is_none() {
        steps.push(
            "extension (Chrome/Chromium family): Chromium: run this again with --chromium-crx \
             <micoff-<version>.crx> (the release crx) to install micoff for good. Google Chrome \
             and the other Chromium browsers take extensions from the Chrome Web Store only, or \
             unpacked in developer mode: open chrome://extensions, switch on Developer mode, Load \
             unpacked, pick dist/chrome."
                .to_owned(),
        );
    }
    if plan.targets.iter().any(|t| t.firefox) && args.firefox_xpi.is_none() {
        steps.push(
            "extension (Firefox): Firefox ESR / Developer Edition / Nightly: run this again with \
             --firefox-xpi <micoff-<version>.xpi> to install micoff for good in each profile \
             (--system: for every user, by policy). Release Firefox accepts only add-ons signed \
             by addons.mozilla.org: install micoff from there."
                .to_owned(),
        );
    }
    steps
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
    let plan = match plan(args, env) {
        Ok(plan) => plan,
        Err(e) => {
            let _ = writeln!(out, "error: {e}");
            return EXIT_USAGE;
        }
    };
    for note in &plan.notes {
        let _ = writeln!(out, "note: {note}");
    }
    for why in &plan.detected {
        let _ = writeln!(out, "found {why}");
    }
    for browser in &plan.impossible {
        let _ = writeln!(
            out,
            "{}: has no system-wide manifest folder; install it per user instead (without --system)",
            browser.name()
        );
    }
    if plan.targets.is_empty() {
        if !plan.impossible.is_empty() {
            return EXIT_USAGE; // only impossible requests: a usage error, said above
        }
        if args.uninstall {
            let _ = writeln!(out, "nothing to remove");
            return EXIT_OK;
        }
        let _ = writeln!(
            out,
            "no supported browser found (looked for {} by their executables in PATH and the \
             usual install folders, snaps, and their profiles); name one with --browser",
            Browser::ALL.map(Browser::name).join(", ")
        );
        return EXIT_NOT_FOUND;
    }
    let would = if args.dry_run { "would be " } else { "" };
    let mut failed = 0;
    let mut edited = 0;
    let mut found = 0;
    for target in &plan.targets {
        let outcome = apply(target, &host, args.uninstall, args.dry_run);
        let what = match &outcome {
            Outcome::Wrote => format!("{would}written"),
            Outcome::Updated => format!("{would}updated"),
            Outcome::Unchanged => "unchanged".to_owned(),
            Outcome::Removed => format!("{would}removed"),
            // A sweep over every known folder lists only what it found.
            Outcome::Absent if plan.sweep => continue,
            Outcome::Absent => "not present".to_owned(),
            Outcome::NotOurs(why) => format!("left alone, not ours: {why}"),
            Outcome::Edited(why) => {
                edited += 1;
                format!("left alone: {why}; remove it yourself if you do not need it")
            }
            Outcome::Failed(e) => {
                failed += 1;
                format!("FAILED: {e}")
            }
        };
        found += 1;
        let _ = writeln!(out, "{}: {} {what}", target.label, target.path.display());
    }
    if plan.sweep && found == 0 {
        let _ = writeln!(
            out,
            "nothing to remove: no {HOST_NAME}.json in the {} known folders",
            plan.targets.len()
        );
    }
    if !args.uninstall && failed < plan.targets.len() {
        let _ = writeln!(out, "host: {}", host.display());
        if args.target_dir.is_none() {
            for step in extension_steps(&plan, args) {
                let _ = writeln!(out, "{step}");
            }
        }
    }
    match failed {
        0 if plan.impossible.is_empty() && edited == 0 => EXIT_OK,
        n if n == plan.targets.len() => EXIT_ERROR,
        _ => EXIT_PARTIAL,
    }
}
