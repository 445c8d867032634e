//! Facts about a Firefox installation that decide how micoff's add-on can go into a profile
//! (docs/design/firefox-install.md): which Firefox last ran a profile (its `compatibility.ini`,
//! else the builds found); whether that build requires add-ons signed by addons.mozilla.org
//! (`MOZ_REQUIRE_SIGNING` in its `omni.ja`, else its update channel); its default prefs (the
//! `pref(...)` lines in `omni.ja` and on disk), so micoff changes only the bit of
//! `extensions.autoDisableScopes` it needs (Debian's ESR ships 3, Mozilla 15).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::firefox::prefs::{last_value, parse_pref_line};
use crate::zip;

/// A prefs file line larger than this (bytes) is not read for defaults.
const MAX_PREFS_FILE: u64 = 4 << 20;

/// One Firefox installation: the folder of its `omni.ja` and `libxul.so` (`/usr/lib/firefox-esr`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Build {
    pub dir: PathBuf,
    /// The browser folder (`<dir>/browser`).
    pub app_dir: PathBuf,
}

impl Build {
    pub fn at(dir: &Path) -> Self {
        Self {
            dir: dir.to_path_buf(),
            app_dir: dir.join("browser"),
        }
    }

    /// The Firefox that last ran `profile` (its `compatibility.ini`), when it says.
    pub fn of_profile(profile: &Path) -> Option<Self> {
        let ini = std::fs::read_to_string(profile.join("compatibility.ini")).ok()?;
        let value = |key: &str| {
            ini.lines()
                .find_map(|l| l.trim().strip_prefix(key))
                .map(|v| PathBuf::from(v.trim()))
                .filter(|p| p.is_absolute())
        };
        let dir = value("LastPlatformDir=")?;
        let app_dir = value("LastAppDir=").unwrap_or_else(|| dir.join("browser"));
        Some(Self { dir, app_dir })
    }

    /// The update channel (`release`, `beta`, `esr`, `aurora` for Developer Edition, `nightly`).
    pub fn channel(&self) -> Option<String> {
        let text = std::fs::read_to_string(self.dir.join("defaults/pref/channel-prefs.js")).ok()?;
        last_value(&text, "pref", "app.update.channel").map(|v| v.trim_matches('"').to_owned())
    }

    /// Whether this build accepts only add-ons signed by addons.mozilla.org (`None`: cannot tell).
    pub fn requires_signing(&self) -> Option<bool> {
        let from_constants = zip::FileSource::open(&self.dir.join("omni.ja"))
            .ok()
            .and_then(|omni| {
                ["modules/AppConstants.sys.mjs", "modules/AppConstants.jsm"]
                    .iter()
                    .find_map(|name| zip::entry(&omni, name, MAX_PREFS_FILE).ok().flatten())
            })
            .and_then(|text| constant_bool(&String::from_utf8_lossy(&text), "MOZ_REQUIRE_SIGNING"));
        from_constants.or_else(|| match self.channel()?.as_str() {
            "release" | "beta" => Some(true),
            "esr" | "aurora" | "nightly" | "default" => Some(false),
            _ => None,
        })
    }

    /// The build's default prefs (`pref(...)` lines; later files win, as in Firefox).
    pub fn default_prefs(&self) -> BTreeMap<String, String> {
        let mut texts: Vec<String> = Vec::new();
        for omni in [self.app_dir.join("omni.ja"), self.dir.join("omni.ja")] {
            if let Ok(src) = zip::FileSource::open(&omni) {
                if let Ok(Some(t)) =
                    zip::entry(&src, "defaults/preferences/firefox.js", MAX_PREFS_FILE)
                {
                    texts.push(String::from_utf8_lossy(&t).into_owned());
                }
            }
        }
        for dir in [
            self.app_dir.join("defaults/preferences"),
            self.dir.join("defaults/pref"),
            self.app_dir.join("defaults/syspref"),
        ] {
            let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
                .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
                .unwrap_or_default();
            files.retain(|p| p.extension().is_some_and(|x| x == "js"));
            files.sort();
            texts.extend(files.iter().filter_map(|f| std::fs::read_to_string(f).ok()));
        }
        let mut prefs = BTreeMap::new();
        for text in &texts {
            for (func, name, value) in text.lines().filter_map(parse_pref_line) {
                if func == "pref" || func == "sticky_pref" || func == "lock_pref" {
                    prefs.insert(name, value);
                }
            }
        }
        prefs
    }

    /// `/usr/lib/firefox-esr (Firefox ESR, channel esr)`, for messages.
    pub fn describe(&self) -> String {
        match self.channel() {
            Some(c) => format!("{} (update channel {c})", self.dir.display()),
            None => self.dir.display().to_string(),
        }
    }
}

/// `NAME: true` / `NAME: false` in a constants module.
fn constant_bool(text: &str, name: &str) -> Option<bool> {
    let at = text.find(&format!("{name}:"))?;
    let rest = text[at + name.len() + 1..].trim_start();
    if rest.starts_with("true") {
        Some(true)
    } else if rest.starts_with("false") {
        Some(false)
    } else {
        None
    }
}

/// The Firefox builds behind `executables` (links resolved): the folders holding an `omni.ja`.
pub fn builds_of(executables: &[PathBuf]) -> Vec<Build> {
    let mut out: Vec<Build> = Vec::new();
    for exe in executables {
        let Ok(real) = std::fs::canonicalize(exe) else {
            continue;
        };
        let Some(dir) = real.parent() else {
            continue;
        };
        if dir.join("omni.ja").is_file() && !out.iter().any(|b| b.dir == dir) {
            out.push(Build::at(dir));
        }
    }
    out
}
