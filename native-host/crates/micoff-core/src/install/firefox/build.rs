//! Facts about a Firefox installation that decide how micoff's add-on can go into a profile
//! (docs/design/firefox-install.md):
//!
//! - which Firefox last ran a profile: the profile's `compatibility.ini` (`LastPlatformDir`,
//!   `LastAppDir`, `LastVersion`), else the Firefox builds found on the machine;
//! - whether that build requires add-ons signed by addons.mozilla.org: `MOZ_REQUIRE_SIGNING` in
//!   its `omni.ja` (`modules/AppConstants.sys.mjs`; release and beta builds set it, ESR, Developer
//!   Edition, Nightly and unbranded builds do not), else its update channel
//!   (`defaults/pref/channel-prefs.js`);
//! - its default prefs (`pref(...)` lines of `defaults/preferences/*.js` in the browser's
//!   `omni.ja` and on disk, `defaults/pref/*.js`, Debian's `defaults/syspref/*.js`), so micoff
//!   changes only the bit of `extensions.autoDisableScopes` it needs (Debian's ESR ships 3, Mozilla
//!   15).
//!
//! Also the one parser of pref lines (`pref(...)`, `user_pref(...)`) for `user.js` and `prefs.js`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::install::zip;

/// A prefs file line larger than this (bytes) is not read for defaults.
const MAX_PREFS_FILE: u64 = 4 << 20;

/// `(function, name, value)` of a pref line: `user_pref("a.b", 3);` is `("user_pref", "a.b",
/// "3")`. The value is its text as written (`true`, `3`, `"text"` with its quotes); a trailing
/// `locked` / `sticky` argument is dropped. `None` for anything else (comments, blank lines).
pub fn parse_pref_line(line: &str) -> Option<(&str, String, String)> {
    let t = line.trim();
    let open = t.find('(')?;
    let func = t[..open].trim();
    if !matches!(func, "pref" | "user_pref" | "sticky_pref" | "lock_pref") {
        return None;
    }
    let rest = t[open + 1..].trim_start();
    let (name, rest) = read_string(rest)?;
    let rest = rest.trim_start().strip_prefix(',')?.trim_start();
    let (value, rest) = if rest.starts_with('"') {
        let end = string_end(rest)?;
        (rest[..end].to_owned(), &rest[end..])
    } else {
        let end = rest.find([',', ')'])?;
        (rest[..end].trim().to_owned(), &rest[end..])
    };
    rest.contains(')').then_some((func, name, value))
}

/// The byte index just past the closing quote of the string `s` starts with.
fn string_end(s: &str) -> Option<usize> {
    let mut escaped = false;
    for (i, c) in s.char_indices().skip(1) {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '"' => return Some(i + 1),
            _ => {}
        }
    }
    None
}

/// A quoted string at the start of `s` (its text, unescaped for `\"` and `\\`) and what follows.
fn read_string(s: &str) -> Option<(String, &str)> {
    if !s.starts_with('"') {
        return None;
    }
    let end = string_end(s)?;
    let name = s[1..end - 1].replace("\\\"", "\"").replace("\\\\", "\\");
    Some((name, &s[end..]))
}

/// `user_pref("name", value);`, the line Firefox itself writes to `prefs.js`.
pub fn user_pref_line(name: &str, value: &str) -> String {
    format!("user_pref(\"{name}\", {value});")
}

/// The last value `text` gives `name` through `function(...)` lines.
pub fn last_value(text: &str, function: &str, name: &str) -> Option<String> {
    text.lines()
        .rev()
        .filter_map(parse_pref_line)
        .find(|(f, n, _)| *f == function && n == name)
        .map(|(_, _, v)| v)
}

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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn pref_lines_parse_as_firefox_writes_them() {
        assert_eq!(
            parse_pref_line("user_pref(\"a.b\", 3);"),
            Some(("user_pref", "a.b".to_owned(), "3".to_owned()))
        );
        assert_eq!(
            parse_pref_line("  pref(\"x\",true, locked);"),
            Some(("pref", "x".to_owned(), "true".to_owned()))
        );
        assert_eq!(
            parse_pref_line(r#"user_pref("s", "a, \"b\")");"#),
            Some(("user_pref", "s".to_owned(), r#""a, \"b\")""#.to_owned()))
        );
        assert_eq!(parse_pref_line("// user_pref(\"a\", 1);"), None);
        assert_eq!(parse_pref_line("user_pref(\"a\", 1"), None);
        assert_eq!(parse_pref_line(""), None);
        let text = "user_pref(\"a\", 1);\nuser_pref(\"a\", 2);\npref(\"a\", 9);\n";
        assert_eq!(last_value(text, "user_pref", "a").as_deref(), Some("2"));
        assert_eq!(user_pref_line("a", "2"), "user_pref(\"a\", 2);");
    }
}
