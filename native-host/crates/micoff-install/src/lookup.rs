//! Which native messaging manifest each browser will use when there are several (the user's, the
//! system's, micoff-host's package's), by each browser's own lookup
//! (docs/design/sandboxed-browsers.md, "Which manifest a browser uses"). Chromium browsers: the
//! user's folder first unless the `NativeMessagingUserLevelHosts` policy is false, then the
//! system's; the first FILE that exists wins, valid or not. Firefox: the user's folder, then the
//! system's; the first manifest VALID for the add-on wins. Snap Firefox: the portal's search path,
//! the same rule. Snap Chromium: none. [`finding`] puts it into one doctor finding.

use std::path::{Path, PathBuf};

use micoff_browsers::Browser;
use micoff_doctor::{Finding, Status};
use micoff_files::{read_regular, shown, MAX_TEXT_BYTES};

use crate::check::host::check_host;
use crate::env::InstallEnv;
use crate::package::owned_by_package;
use crate::sandboxed::snap_note;
use micoff_native::{CHROME_EXTENSION_ID, FIREFOX_EXTENSION_ID, HOST_NAME};

/// One manifest a browser looks at, in its order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    pub path: PathBuf,
    /// `user`, `system`, `package`.
    pub whose: &'static str,
    /// Why a browser would pass over it or fail on it (`None`: it works for micoff).
    pub problem: Option<String>,
}

/// What a browser does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lookup {
    pub browser: Browser,
    /// Why we think it is installed ([`InstallEnv::detect`]); `None`: only a manifest for it is
    /// here (the package's for Google Chrome, say), which then works for nothing.
    pub installed: Option<String>,
    /// `snap`, when it is the snap.
    pub snap: bool,
    /// The manifests it may read, in its order, those that exist.
    pub found: Vec<Candidate>,
    /// The one it uses (index into `found`), if any.
    pub used: Option<usize>,
    /// Said instead (a snap Chromium, a policy that keeps it from the user's folder).
    pub notes: Vec<String>,
}

/// The folders `browser` reads, in its order, each with whose it is; and whether only the first
/// file found counts (Chromium) or the first valid one (Firefox).
fn folders(
    env: &InstallEnv,
    browser: Browser,
    snap: bool,
) -> (Vec<(PathBuf, &'static str)>, Vec<String>) {
    let mut notes = Vec::new();
    let mut out = Vec::new();
    let facts = browser.facts();
    if browser.is_firefox() {
        out.push((
            env.user_base(browser).join(browser.user_manifest_dir()),
            "user",
        ));
        if snap {
            out.push((
                env.config_home().join("mozilla/native-messaging-hosts"),
                "user",
            ));
        }
    } else if user_level_allowed(env, browser) {
        out.push((
            env.user_base(browser).join(browser.user_manifest_dir()),
            "user",
        ));
    } else {
        notes.push(
            "the NativeMessagingUserLevelHosts policy is false: per-user manifests are not read"
                .to_owned(),
        );
    }
    out.extend(
        facts
            .system_manifest_dirs
            .iter()
            .map(|d| (env.root.join(d), "system")),
    );
    (out, notes)
}

/// Whether a Chromium-family browser reads the user's folder: not when its managed policy sets
/// `NativeMessagingUserLevelHosts` to false (`/etc/chromium/policies/managed/*.json`: the
/// policies folder next to its system manifest folder).
fn user_level_allowed(env: &InstallEnv, browser: Browser) -> bool {
    let Some(system) = browser.facts().system_manifest_dirs.first() else {
        return true;
    };
    let Some(base) = Path::new(system).parent() else {
        return true;
    };
    let dir = env.root.join(base).join("policies/managed");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return true;
    };
    !entries.flatten().any(|e| {
        read_regular(&e.path(), MAX_TEXT_BYTES)
            .ok()
            .flatten()
            .and_then(|t| serde_json::from_slice::<serde_json::Value>(&t).ok())
            .and_then(|v| v.get("NativeMessagingUserLevelHosts")?.as_bool())
            == Some(false)
    })
}

/// What is wrong with a manifest for micoff in `browser` (`None`: it works).
fn problem(path: &Path, browser: Browser) -> Option<String> {
    let text = match read_regular(path, MAX_TEXT_BYTES) {
        Ok(Some(t)) => t,
        Ok(None) => return Some("not there".to_owned()),
        Err(e) => return Some(e.to_string()),
    };
    let Ok(v) = serde_json::from_slice::<serde_json::Value>(&text) else {
        return Some("not JSON".to_owned());
    };
    if v.get("name").and_then(|n| n.as_str()) != Some(HOST_NAME) {
        return Some(format!("its name is not {HOST_NAME}"));
    }
    if v.get("type").and_then(|n| n.as_str()) != Some("stdio") {
        return Some("its type is not stdio".to_owned());
    }
    let (key, id) = if browser.is_firefox() {
        ("allowed_extensions", FIREFOX_EXTENSION_ID.to_owned())
    } else {
        (
            "allowed_origins",
            format!("chrome-extension://{CHROME_EXTENSION_ID}/"),
        )
    };
    let allowed = v
        .get(key)
        .and_then(|a| a.as_array())
        .is_some_and(|a| a.iter().any(|x| x.as_str() == Some(id.as_str())));
    if !allowed {
        return Some(format!("its {key} does not list micoff ({id})"));
    }
    let host = v.get("path").and_then(|p| p.as_str()).unwrap_or("");
    if !Path::new(host).is_absolute() {
        return Some(format!("its path ({host}) is not absolute"));
    }
    check_host(Path::new(host)).err()
}

/// How `browser` finds its manifest on this machine (`None`: not installed, and no manifest of
/// ours for it either).
pub fn lookup(env: &InstallEnv, browser: Browser) -> Option<Lookup> {
    let snap = env.snap(browser).is_some();
    let file = format!("{HOST_NAME}.json");
    let (dirs, mut notes) = folders(env, browser, snap);
    let found: Vec<Candidate> = dirs
        .into_iter()
        .map(|(d, whose)| (d.join(&file), whose))
        .filter(|(p, _)| std::fs::symlink_metadata(p).is_ok())
        .map(|(path, whose)| Candidate {
            whose: if owned_by_package(&env.root, &path).is_some() {
                "package"
            } else {
                whose
            },
            problem: problem(&path, browser),
            path,
        })
        .collect();
    let installed = env.detect(browser);
    if installed.is_none() && found.is_empty() {
        return None;
    }
    if snap && !browser.is_firefox() {
        notes.extend(snap_note(browser));
        return Some(Lookup {
            browser,
            installed,
            snap,
            found,
            used: None,
            notes,
        });
    }
    let used = if browser.is_firefox() {
        found.iter().position(|c| c.problem.is_none())
    } else if found.is_empty() {
        None
    } else {
        Some(0)
    };
    Some(Lookup {
        browser,
        installed,
        snap,
        found,
        used,
        notes,
    })
}

impl Lookup {
    /// Whether micoff's extension reaches micoff-host in this browser by its manifest: the browser
    /// is installed and the manifest it uses is valid.
    pub fn works(&self) -> bool {
        self.installed.is_some()
            && self
                .used
                .and_then(|i| self.found.get(i))
                .is_some_and(|c| c.problem.is_none())
    }

    /// One line for a person.
    pub fn line(&self) -> String {
        let name = format!(
            "{}{}",
            self.browser.name(),
            if self.snap { " (snap)" } else { "" }
        );
        if self.installed.is_none() {
            return self.line_not_installed(&name);
        }
        let mut s = match self.used.and_then(|i| self.found.get(i)) {
            Some(c) => {
                let how = match &c.problem {
                    None => "works".to_owned(),
                    Some(p) => format!("BROKEN: {p}"),
                };
                format!("{name}: uses {} ({}): {how}", shown(&c.path), c.whose)
            }
            None if self.snap && !self.browser.is_firefox() => {
                format!("{name}: cannot use a native messaging host")
            }
            None => format!("{name}: no manifest it can use"),
        };
        for (i, c) in self.found.iter().enumerate() {
            if Some(i) != self.used {
                s.push_str(&format!(
                    "; also {} ({}), not used{}",
                    shown(&c.path),
                    c.whose,
                    c.problem
                        .as_ref()
                        .map(|p| format!(": {p}"))
                        .unwrap_or_default()
                ));
            }
        }
        for n in &self.notes {
            s.push_str(&format!("; {n}"));
        }
        s
    }

    /// The line of a browser that is not installed: the manifests waiting for it, none "works".
    fn line_not_installed(&self, name: &str) -> String {
        let manifests: Vec<String> = self
            .found
            .iter()
            .map(|c| {
                format!(
                    "{} ({}{})",
                    shown(&c.path),
                    c.whose,
                    c.problem
                        .as_ref()
                        .map(|p| format!(", would not work: {p}"))
                        .unwrap_or_default()
                )
            })
            .collect();
        format!(
            "{name}: not installed (a manifest for it is ready: {})",
            manifests.join("; ")
        )
    }
}

/// The doctor's finding: which manifest each browser on this machine uses, whether it works.
pub fn finding(env: &InstallEnv) -> Finding {
    let all: Vec<Lookup> = Browser::ALL
        .iter()
        .filter_map(|b| lookup(env, *b))
        .collect();
    // A browser that is not installed neither works nor is broken: its line says so.
    let lookups: Vec<&Lookup> = all.iter().filter(|l| l.installed.is_some()).collect();
    let broken: Vec<&&Lookup> = lookups.iter().filter(|l| !l.works()).collect();
    let status = if lookups.is_empty() {
        Status::NotApplicable
    } else if broken.is_empty() {
        Status::Ok
    } else {
        Status::WorthChanging
    };
    let current = if lookups.is_empty() {
        "no supported browser found".to_owned()
    } else if broken.is_empty() {
        format!(
            "every browser found reaches micoff-host: {}",
            lookups
                .iter()
                .map(|l| l.browser.name())
                .collect::<Vec<_>>()
                .join(", ")
        )
    } else {
        format!(
            "{} cannot reach micoff-host through a manifest",
            broken
                .iter()
                .map(|l| l.browser.name())
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    let snap_firefox = lookups.iter().any(|l| l.snap && l.browser.is_firefox());
    let hint = (!broken.is_empty() || snap_firefox).then(|| {
        let mut h = "`micoff-host install` writes the per-user manifests (`--system` for every \
                     user; `micoff-host install --dry-run` shows what it would write)"
            .to_owned();
        if snap_firefox {
            h.push_str(&format!(
                ". {}",
                snap_note(Browser::Firefox).unwrap_or_default()
            ));
        }
        h
    });
    Finding {
        id: "native_messaging",
        category: "native_messaging",
        title: "Native messaging manifests",
        status,
        current,
        why: "the extension reaches micoff-host (CPU figures, capture latency, the audio server's \
              view) only through the manifest its browser reads; where a user's and a system \
              manifest both exist, the browser uses one of them, by its own order"
            .to_owned(),
        fix: None,
        hint,
        details: all.iter().map(Lookup::line).collect(),
    }
}
