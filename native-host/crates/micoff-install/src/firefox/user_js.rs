//! One Firefox profile as `install` changes it (docs/design/firefox-install.md). `user.js`:
//! micoff's lines in one marked block after the user's own (the release prefs; for the add-on the
//! sha256 of micoff's xpi copy and the prefs that let Firefox take it up), a pref only where it
//! changes the value it would have without micoff. `extensions/<id>.xpi`: micoff's copy, taken up
//! when Firefox scans the profile folder, enabled only outside `extensions.autoDisableScopes`,
//! unsigned only where signatures are not required. `prefs.js`: Firefox copies `user.js` prefs into
//! it at exit, so uninstall also removes the lines holding exactly micoff's values; that needs
//! Firefox closed, so a profile in use is left alone and named.

use std::collections::BTreeMap;
use std::path::Path;

use crate::firefox::prefs::{
    last_value, parse_pref_line, user_pref_line, PREF_AUTO_DISABLE, PREF_DELAY, PREF_ENABLED,
    PREF_SIGNATURES, PREF_STARTUP_SCAN,
};

/// Any line starting so opens micoff's block (the wording after it changed over versions).
const BEGIN_PREFIX: &str = "// micoff: begin";
const BEGIN: &str =
    "// micoff: begin (micoff-host install; micoff-host install --uninstall removes it)";
/// The begin line when the user's last line had no newline at its end (micoff gave it one): when
/// the block goes again, so does that newline, and the file is the user's byte for byte.
const BEGIN_NO_NEWLINE: &str = "// micoff: begin (micoff-host install; micoff-host uninstall \
                                removes it; the line above had no newline at its end)";
/// What tells [`BEGIN_NO_NEWLINE`] apart.
const NO_NEWLINE_NOTE: &str = "the line above had no newline at its end";
const END: &str = "// micoff: end";
/// `// micoff: add-on copy sha256 <hex>`: the proof that `extensions/<id>.xpi` is micoff's copy.
const ADDON_RECORD: &str = "// micoff: add-on copy sha256 ";
/// `// micoff: prefs.js had user_pref("name", value);`: the value the user had given a pref micoff
/// sets (in about:config: prefs.js), which Firefox overwrites with micoff's at its next exit and
/// uninstall puts back.
const PREVIOUS: &str = "// micoff: prefs.js had ";
/// The release prefs (`--firefox-release`).
pub const RELEASE_PREFS: [&str; 2] = [PREF_ENABLED, PREF_DELAY];
/// The prefs that let Firefox take up micoff's copy of the add-on (`--firefox-xpi`).
pub const ADDON_PREFS: [&str; 3] = [PREF_SIGNATURES, PREF_AUTO_DISABLE, PREF_STARTUP_SCAN];
/// Firefox's install scope of a profile's `extensions/` folder (`AddonManager.SCOPE_PROFILE`).
pub const SCOPE_PROFILE: i64 = 1;
/// Firefox's own defaults, where the build's files do not say (the release prefs are compiled in;
/// Mozilla's `firefox.js` has the others).
const FIREFOX_DEFAULTS: [(&str, &str); 5] = [
    (PREF_ENABLED, "false"),
    (PREF_DELAY, "3000"),
    (PREF_SIGNATURES, "true"),
    (PREF_AUTO_DISABLE, "15"),
    (PREF_STARTUP_SCAN, "0"),
];

/// `(name, value)` of one `user_pref` line, the value as Firefox's syntax (`true`, `3000`).
pub type Pref = (String, String);

/// micoff's part of a `user.js`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Block {
    pub release: Vec<Pref>,
    pub addon: Option<AddonRecord>,
    /// For prefs of the block: the value `prefs.js` held before micoff set them (the user's own).
    pub previous: Vec<Pref>,
}

/// The add-on's part of the block.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AddonRecord {
    /// sha256 of micoff's copy in `extensions/` (`None`: no record line, the copy is not provably
    /// micoff's).
    pub sha256: Option<String>,
    pub prefs: Vec<Pref>,
}

impl Block {
    pub fn is_empty(&self) -> bool {
        self.release.is_empty() && self.addon.is_none()
    }

    /// Every pref line of the block.
    pub fn prefs(&self) -> Vec<Pref> {
        let mut out = self.release.clone();
        if let Some(a) = &self.addon {
            out.extend(a.prefs.iter().cloned());
        }
        out
    }

    fn lines(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .release
            .iter()
            .map(|(n, v)| user_pref_line(n, v))
            .collect();
        if let Some(a) = &self.addon {
            if let Some(sha) = &a.sha256 {
                out.push(format!("{ADDON_RECORD}{sha}"));
            }
            out.extend(a.prefs.iter().map(|(n, v)| user_pref_line(n, v)));
        }
        out.extend(
            self.previous
                .iter()
                .filter(|(n, _)| self.value(n).is_some())
                .map(|(n, v)| format!("{PREVIOUS}{}", user_pref_line(n, v))),
        );
        out
    }

    /// `self` with the values `prefs_js` held for its prefs before micoff set them: kept from
    /// `before` (the block already there) or, for a pref micoff sets anew, what `prefs.js` holds
    /// when that is neither micoff's value now nor the one it had set.
    pub fn with_previous(mut self, before: &Block, prefs_js: Option<&str>) -> Block {
        let mut previous = Vec::new();
        for (name, value) in self.prefs() {
            if let Some(p) = before.previous.iter().find(|(n, _)| *n == name) {
                previous.push(p.clone());
                continue;
            }
            let had = prefs_js.and_then(|t| last_value(t, "user_pref", &name));
            if let Some(had) = had {
                if had != value && before.value(&name) != Some(had.as_str()) {
                    previous.push((name, had));
                }
            }
        }
        self.previous = previous;
        self
    }

    /// The value the block sets `name` to.
    pub fn value(&self, name: &str) -> Option<&str> {
        self.release
            .iter()
            .chain(self.addon.iter().flat_map(|a| a.prefs.iter()))
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// A `user.js`, split into the user's lines and micoff's block.
#[derive(Debug, Clone)]
pub struct UserJs {
    lines: Vec<String>,
    /// Line numbers of the begin and end markers.
    span: Option<(usize, usize)>,
    pub block: Block,
    ends_with_newline: bool,
    /// The block's begin line says the user's last line had no newline before micoff's block.
    no_newline_before: bool,
}

/// Whether a line inside the block is micoff's (a record, or one of micoff's prefs).
fn is_our_line(line: &str) -> bool {
    let t = line.trim();
    if t.starts_with(ADDON_RECORD.trim_end()) || t.starts_with(PREVIOUS.trim_end()) {
        return true;
    }
    parse_pref_line(line).is_some_and(|(f, name, _)| {
        f == "user_pref"
            && (RELEASE_PREFS.contains(&name.as_str()) || ADDON_PREFS.contains(&name.as_str()))
    })
}

impl UserJs {
    pub fn parse(text: &str) -> Self {
        let lines: Vec<String> = text.lines().map(str::to_owned).collect();
        let span = lines
            .iter()
            .position(|l| l.trim().starts_with(BEGIN_PREFIX))
            .and_then(|s| {
                lines[s..]
                    .iter()
                    .position(|l| l.trim() == END)
                    .map(|e| (s, s + e))
            });
        let mut block = Block::default();
        if let Some((s, e)) = span {
            for line in &lines[s + 1..e] {
                if let Some(had) = line.trim().strip_prefix(PREVIOUS.trim_end()) {
                    if let Some(("user_pref", name, value)) = parse_pref_line(had) {
                        block.previous.push((name, value));
                    }
                    continue;
                }
                if let Some(sha) = line.trim().strip_prefix(ADDON_RECORD.trim_end()) {
                    block.addon.get_or_insert_with(AddonRecord::default).sha256 =
                        Some(sha.trim().to_owned());
                    continue;
                }
                let Some(("user_pref", name, value)) = parse_pref_line(line) else {
                    continue;
                };
                if RELEASE_PREFS.contains(&name.as_str()) {
                    block.release.push((name, value));
                } else if ADDON_PREFS.contains(&name.as_str()) {
                    block
                        .addon
                        .get_or_insert_with(AddonRecord::default)
                        .prefs
                        .push((name, value));
                }
            }
        }
        let no_newline_before = span.is_some_and(|(s, _)| lines[s].contains(NO_NEWLINE_NOTE));
        Self {
            lines,
            span,
            block,
            ends_with_newline: text.ends_with('\n'),
            no_newline_before,
        }
    }

    /// The user's own lines: all but the markers and micoff's lines inside the block.
    pub fn user_lines(&self) -> Vec<&str> {
        self.lines
            .iter()
            .enumerate()
            .filter(|(i, l)| match self.span {
                Some((s, e)) if *i == s || *i == e => false,
                Some((s, e)) if *i > s && *i < e => !is_our_line(l),
                _ => true,
            })
            .map(|(_, l)| l.as_str())
            .collect()
    }

    /// The file with `block` as micoff's block: in place of the old one (lines the user put
    /// inside it kept, after micoff's), else appended; no markers when the block is empty.
    pub fn render(&self, block: &Block) -> String {
        let ours = block.lines();
        let mut out: Vec<String> = Vec::new();
        let mut appended = false;
        let mut newline_at_end = self.ends_with_newline || self.lines.is_empty();
        match self.span {
            Some((s, e)) => {
                out.extend(self.lines[..s].iter().cloned());
                let inside: Vec<String> = self.lines[s + 1..e]
                    .iter()
                    .filter(|l| !is_our_line(l))
                    .cloned()
                    .collect();
                if ours.is_empty() {
                    // The block was last, and the user's line before it had no newline: it has
                    // none again.
                    if self.no_newline_before && inside.is_empty() && e + 1 == self.lines.len() {
                        newline_at_end = false;
                    }
                    out.extend(inside);
                } else {
                    out.push(self.begin_line().to_owned());
                    out.extend(ours);
                    out.extend(inside);
                    out.push(END.to_owned());
                }
                out.extend(self.lines[e + 1..].iter().cloned());
            }
            None => {
                out.extend(self.lines.iter().cloned());
                if !ours.is_empty() {
                    let begin = if self.ends_with_newline || self.lines.is_empty() {
                        BEGIN
                    } else {
                        BEGIN_NO_NEWLINE
                    };
                    out.push(begin.to_owned());
                    out.extend(ours);
                    out.push(END.to_owned());
                    appended = true;
                }
            }
        }
        if out.is_empty() {
            return String::new();
        }
        let mut text = out.join("\n");
        if newline_at_end || appended {
            text.push('\n');
        }
        text
    }

    /// The begin line the block has (kept as it was when the block is rewritten).
    fn begin_line(&self) -> &'static str {
        if self.no_newline_before {
            BEGIN_NO_NEWLINE
        } else {
            BEGIN
        }
    }

    /// What `name` would be without micoff's block: the user's own `user.js` lines, else
    /// `prefs.js` (unless it holds the block's own value: Firefox copied that there), else the
    /// build's default, else Firefox's.
    pub fn base_value(
        &self,
        prefs_js: Option<&str>,
        name: &str,
        defaults: &BTreeMap<String, String>,
    ) -> String {
        let own = self.user_lines().join("\n");
        if let Some(v) = last_value(&own, "user_pref", name) {
            return v;
        }
        if let Some(v) = prefs_js.and_then(|t| last_value(t, "user_pref", name)) {
            if self.block.value(name) != Some(v.as_str()) {
                return v;
            }
        }
        defaults
            .get(name)
            .cloned()
            .or_else(|| {
                FIREFOX_DEFAULTS
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, v)| (*v).to_owned())
            })
            .unwrap_or_default()
    }

    /// `(name, wanted)` pairs as block lines, leaving out those already in effect without micoff.
    fn needed(
        &self,
        prefs_js: Option<&str>,
        defaults: &BTreeMap<String, String>,
        wanted: &[(&str, String)],
    ) -> Vec<Pref> {
        wanted
            .iter()
            .filter(|(name, value)| self.base_value(prefs_js, name, defaults) != *value)
            .map(|(name, value)| ((*name).to_owned(), value.clone()))
            .collect()
    }

    /// The release prefs micoff needs: on, and `delay_ms`.
    pub fn release_prefs(
        &self,
        prefs_js: Option<&str>,
        defaults: &BTreeMap<String, String>,
        delay_ms: u32,
    ) -> Vec<Pref> {
        self.needed(
            prefs_js,
            defaults,
            &[
                (PREF_ENABLED, "true".to_owned()),
                (PREF_DELAY, delay_ms.to_string()),
            ],
        )
    }

    /// The prefs Firefox needs to take up an unsigned add-on dropped into the profile: signatures
    /// not required, the profile scope scanned at every start and not auto-disabled (the other
    /// scope bits as they are).
    pub fn addon_prefs(
        &self,
        prefs_js: Option<&str>,
        defaults: &BTreeMap<String, String>,
    ) -> Vec<Pref> {
        let int = |name: &str| {
            let v = self.base_value(prefs_js, name, defaults);
            v.parse::<i64>().unwrap_or_else(|_| {
                FIREFOX_DEFAULTS
                    .iter()
                    .find(|(n, _)| *n == name)
                    .and_then(|(_, d)| d.parse().ok())
                    .unwrap_or(0)
            })
        };
        self.needed(
            prefs_js,
            defaults,
            &[
                (PREF_SIGNATURES, "false".to_owned()),
                (
                    PREF_AUTO_DISABLE,
                    (int(PREF_AUTO_DISABLE) & !SCOPE_PROFILE).to_string(),
                ),
                (
                    PREF_STARTUP_SCAN,
                    (int(PREF_STARTUP_SCAN) | SCOPE_PROFILE).to_string(),
                ),
            ],
        )
    }
}

/// `prefs.js` without the `user_pref` lines holding exactly one of `prefs`' values (Firefox copied
/// them there from micoff's block), each put back to the value `previous` says the user had given
/// it, where it says one. `None` when nothing changes.
pub fn prefs_js_without(text: &str, prefs: &[Pref], previous: &[Pref]) -> Option<String> {
    let mut changed = false;
    let kept: Vec<String> = text
        .lines()
        .filter_map(|line| {
            let ours = match parse_pref_line(line) {
                Some(("user_pref", name, value))
                    if prefs.iter().any(|(n, v)| *n == name && *v == value) =>
                {
                    Some(name)
                }
                _ => None,
            };
            let Some(name) = ours else {
                return Some(line.to_owned());
            };
            changed = true;
            previous
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(n, v)| user_pref_line(n, v))
        })
        .collect();
    if !changed {
        return None;
    }
    let mut out = kept.join("\n");
    if text.ends_with('\n') {
        out.push('\n');
    }
    Some(out)
}

/// The pid of a Firefox running with `profile`: its `lock` symlink (`<address>:+<pid>`) naming a
/// process that exists.
pub fn running_pid(profile: &Path) -> Option<u32> {
    let target = std::fs::read_link(profile.join("lock")).ok()?;
    let pid: u32 = target.to_str()?.rsplit_once(":+")?.1.parse().ok()?;
    Path::new("/proc")
        .join(pid.to_string())
        .exists()
        .then_some(pid)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const USER: &str = "user_pref(\"browser.startup.page\", 3);\n// my comment\n";

    fn no_defaults() -> BTreeMap<String, String> {
        BTreeMap::new()
    }

    fn release(delay: &str) -> Vec<Pref> {
        vec![
            (PREF_ENABLED.to_owned(), "true".to_owned()),
            (PREF_DELAY.to_owned(), delay.to_owned()),
        ]
    }

    #[test]
    fn the_block_is_appended_replaced_and_removed_keeping_the_users_lines() {
        let js = UserJs::parse(USER);
        let block = Block {
            release: release("1500"),
            addon: None,
            previous: vec![],
        };
        let once = js.render(&block);
        assert!(once.starts_with(USER));
        assert!(once.contains(&format!("user_pref(\"{PREF_DELAY}\", 1500);")));
        let parsed = UserJs::parse(&once);
        assert_eq!(parsed.block, block);
        assert_eq!(parsed.render(&block), once, "idempotent");
        assert_eq!(parsed.user_lines().join("\n") + "\n", USER);
        let changed = parsed.render(&Block {
            release: release("2000"),
            addon: None,
            previous: vec![],
        });
        assert_eq!(changed.matches(BEGIN_PREFIX).count(), 1);
        assert_eq!(UserJs::parse(&changed).render(&Block::default()), USER);
        // No trailing newline in the user's file: the block still starts on its own line, and
        // when it goes, the file is the user's byte for byte again (no newline added).
        let t = UserJs::parse("user_pref(\"x\", 1);").render(&block);
        assert!(
            t.starts_with("user_pref(\"x\", 1);\n// micoff: begin"),
            "{t}"
        );
        let again = UserJs::parse(&t).render(&Block {
            release: release("2000"),
            ..block.clone()
        });
        assert!(again.contains(NO_NEWLINE_NOTE), "{again}");
        assert_eq!(
            UserJs::parse(&again).render(&Block::default()),
            "user_pref(\"x\", 1);"
        );
        // Only micoff's lines: nothing left.
        assert_eq!(
            UserJs::parse(&UserJs::parse("").render(&block)).render(&Block::default()),
            ""
        );
    }

    #[test]
    fn lines_the_user_put_inside_the_block_survive_update_and_uninstall() {
        let block = Block {
            release: release("3000"),
            addon: None,
            previous: vec![],
        };
        let text = UserJs::parse("")
            .render(&block)
            .replace(END, &format!("user_pref(\"mine\", 1);\n{END}"));
        let js = UserJs::parse(&text);
        assert_eq!(
            js.render(&Block {
                release: release("2000"),
                addon: None,
                previous: vec![],
            })
            .matches("mine")
            .count(),
            1
        );
        assert_eq!(js.render(&Block::default()), "user_pref(\"mine\", 1);\n");
        // A block from an older micoff (other wording on the begin line) is still micoff's.
        let old = format!(
            "// micoff: begin (micoff-host install --firefox-release; removed by --uninstall)\nuser_pref(\"{PREF_ENABLED}\", true);\n{END}\n"
        );
        assert_eq!(UserJs::parse(&old).render(&Block::default()), "");
    }

    #[test]
    fn the_add_on_record_and_prefs_round_trip_next_to_the_release_prefs() {
        let block = Block {
            release: release("300"),
            addon: Some(AddonRecord {
                sha256: Some("ab".repeat(32)),
                prefs: vec![(PREF_SIGNATURES.to_owned(), "false".to_owned())],
            }),
            previous: vec![],
        };
        let text = UserJs::parse(USER).render(&block);
        let js = UserJs::parse(&text);
        assert_eq!(js.block, block);
        let release_only = Block {
            release: block.release.clone(),
            addon: None,
            previous: vec![],
        };
        let without_addon = js.render(&release_only);
        assert!(!without_addon.contains("sha256") && !without_addon.contains(PREF_SIGNATURES));
        assert_eq!(UserJs::parse(&without_addon).block, release_only);
    }

    #[test]
    fn only_prefs_that_change_something_are_written() {
        let js = UserJs::parse("");
        let mut defaults = no_defaults();
        // Debian's ESR: autoDisableScopes 3 -> 2 (the user scope stays auto-disabled), scan 0 -> 1.
        defaults.insert(PREF_AUTO_DISABLE.to_owned(), "3".to_owned());
        assert_eq!(
            js.addon_prefs(None, &defaults),
            vec![
                (PREF_SIGNATURES.to_owned(), "false".to_owned()),
                (PREF_AUTO_DISABLE.to_owned(), "2".to_owned()),
                (PREF_STARTUP_SCAN.to_owned(), "1".to_owned()),
            ]
        );
        // Mozilla's default 15 -> 14.
        assert_eq!(js.addon_prefs(None, &no_defaults())[1].1, "14");
        // The user already turned signatures off and scans everything: only the scope bit.
        let user = "user_pref(\"xpinstall.signatures.required\", false);\nuser_pref(\"extensions.startupScanScopes\", 15);\n";
        assert_eq!(
            UserJs::parse(user).addon_prefs(None, &defaults),
            vec![(PREF_AUTO_DISABLE.to_owned(), "2".to_owned())]
        );
        // prefs.js (about:config) counts as the user's, unless it is the block's own value.
        let prefs = "user_pref(\"extensions.autoDisableScopes\", 0);\n";
        assert_eq!(js.addon_prefs(Some(prefs), &defaults).len(), 2);
        let with_block = UserJs::parse(&js.render(&Block {
            release: vec![],
            addon: Some(AddonRecord {
                sha256: None,
                prefs: vec![(PREF_AUTO_DISABLE.to_owned(), "2".to_owned())],
            }),
            previous: vec![],
        }));
        let copied = "user_pref(\"extensions.autoDisableScopes\", 2);\n";
        assert_eq!(
            with_block.addon_prefs(Some(copied), &defaults)[1].1,
            "2",
            "stable"
        );
        // Release: Firefox's default delay is 3000, so only the switch is written for it.
        assert_eq!(
            js.release_prefs(None, &defaults, 3000),
            vec![release("3000")[0].clone()]
        );
        assert_eq!(js.release_prefs(None, &defaults, 300), release("300"));
    }

    #[test]
    fn prefs_js_loses_exactly_the_values_micoff_set() {
        let prefs = "// Mozilla User Preferences\nuser_pref(\"a\", 1);\nuser_pref(\"media.getusermedia.microphone.off_while_disabled.delay_ms\", 300);\nuser_pref(\"media.getusermedia.microphone.off_while_disabled.enabled\", true);\nuser_pref(\"extensions.lastAppBuildId\", \"2026\");\n";
        let out = prefs_js_without(prefs, &release("300"), &[]).unwrap();
        assert_eq!(
            out,
            "// Mozilla User Preferences\nuser_pref(\"a\", 1);\nuser_pref(\"extensions.lastAppBuildId\", \"2026\");\n"
        );
        // A value the user changed since is theirs.
        assert_eq!(prefs_js_without(prefs, &release("500")[1..], &[]), None);
    }

    #[test]
    fn the_users_own_prefs_js_value_is_recorded_and_put_back() {
        // The user had autoDisableScopes 3 in about:config (prefs.js); micoff sets 2.
        let had = "user_pref(\"extensions.autoDisableScopes\", 3);\n";
        let block = Block {
            release: vec![],
            addon: Some(AddonRecord {
                sha256: None,
                prefs: vec![(PREF_AUTO_DISABLE.to_owned(), "2".to_owned())],
            }),
            previous: vec![],
        }
        .with_previous(&Block::default(), Some(had));
        assert_eq!(
            block.previous,
            vec![(PREF_AUTO_DISABLE.to_owned(), "3".to_owned())]
        );
        let text = UserJs::parse("").render(&block);
        assert!(
            text.contains(
                "// micoff: prefs.js had user_pref(\"extensions.autoDisableScopes\", 3);"
            ),
            "{text}"
        );
        let parsed = UserJs::parse(&text);
        assert_eq!(parsed.block, block);
        // Firefox ran: prefs.js now holds micoff's 2. Installing again keeps the user's 3.
        let copied = "user_pref(\"extensions.autoDisableScopes\", 2);\n";
        let again = parsed
            .block
            .clone()
            .with_previous(&parsed.block, Some(copied));
        assert_eq!(again.previous, block.previous);
        // Uninstall puts the user's 3 back where Firefox wrote micoff's 2.
        assert_eq!(
            prefs_js_without(copied, &block.prefs(), &block.previous).unwrap(),
            had
        );
        // The block gone, the record line goes too.
        assert_eq!(parsed.render(&Block::default()), "");
    }

    #[test]
    fn a_lock_naming_a_live_process_means_firefox_runs() {
        let tmp = tempfile::tempdir().unwrap();
        assert_eq!(running_pid(tmp.path()), None);
        let me = std::process::id();
        std::os::unix::fs::symlink(format!("127.0.1.1:+{me}"), tmp.path().join("lock")).unwrap();
        assert_eq!(running_pid(tmp.path()), Some(me));
        std::fs::remove_file(tmp.path().join("lock")).unwrap();
        // A stale lock (the process is gone).
        std::os::unix::fs::symlink("127.0.1.1:+4194305", tmp.path().join("lock")).unwrap();
        assert_eq!(running_pid(tmp.path()), None);
    }
}
