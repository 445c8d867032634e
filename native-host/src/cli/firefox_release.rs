//! `micoff-host install --firefox-release`: switches on Firefox's own release of the microphone
//! while a track is disabled (`media.getusermedia.microphone.off_while_disabled.enabled`, off by
//! default since Firefox 84) and sets its delay to micoff's release delay.
//!
//! - Per profile (default): a block of lines between two marker comments in the profile's
//!   `user.js`, appended after the user's own lines (a later `user_pref` wins, so ours is in
//!   effect). `--uninstall` removes the markers and our two `user_pref` lines only; anything else
//!   (the user's lines, lines the user added inside the block) stays.
//! - System-wide (`--system`): the `Preferences` policy in `policies.json` of every Firefox
//!   policy folder (`/etc/firefox/policies`, and Debian's ESR `/etc/firefox-esr/policies`), merged
//!   into what is there. `--uninstall` removes our two entries only when they still hold what
//!   micoff wrote, and never another key.
//!
//! Writes go through `micoff-files` (exclusive temporary file + rename, 0644, through symlinks).

use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

use crate::cli::{EXIT_ERROR, EXIT_OK, EXIT_PARTIAL};

/// The pref that turns Firefox's native release on.
pub const PREF_ENABLED: &str = "media.getusermedia.microphone.off_while_disabled.enabled";
/// Its delay (ms), Firefox's default 3000.
pub const PREF_DELAY: &str = "media.getusermedia.microphone.off_while_disabled.delay_ms";
/// micoff's default release delay (extension/src/shared/settings.ts `DEFAULT_SETTINGS`).
pub const DEFAULT_DELAY_MS: u32 = 3000;
/// micoff's release delay range (extension/src/shared/settings.ts `RELEASE_DELAY_*_MS`).
pub const MAX_DELAY_MS: u32 = 10_000;

const BEGIN: &str =
    "// micoff: begin (micoff-host install --firefox-release; removed by --uninstall)";
const END: &str = "// micoff: end";
/// Firefox policy folders, relative to the root: release / Developer / Nightly, Debian's ESR.
pub const POLICY_DIRS: [&str; 2] = ["etc/firefox/policies", "etc/firefox-esr/policies"];

fn pref_line(name: &str, value: &str) -> String {
    format!("user_pref(\"{name}\", {value});")
}

fn our_lines(delay_ms: u32) -> [String; 2] {
    [
        pref_line(PREF_ENABLED, "true"),
        pref_line(PREF_DELAY, &delay_ms.to_string()),
    ]
}

/// A `user_pref` line for one of our two prefs, whatever its value.
fn is_our_pref_line(line: &str) -> bool {
    let t = line.trim();
    [PREF_ENABLED, PREF_DELAY]
        .iter()
        .any(|p| t.starts_with(&format!("user_pref(\"{p}\",")))
}

/// `user.js` with our block in it (replacing an earlier block of ours, in place; else appended).
pub fn user_js_with_block(text: &str, delay_ms: u32) -> String {
    let block = {
        let [a, b] = our_lines(delay_ms);
        format!("{BEGIN}\n{a}\n{b}\n{END}\n")
    };
    let lines: Vec<&str> = text.lines().collect();
    if let Some((start, end)) = find_block(&lines) {
        // Keep lines the user put inside the block, after ours.
        let kept: Vec<&str> = lines[start + 1..end]
            .iter()
            .copied()
            .filter(|l| !is_our_pref_line(l))
            .collect();
        let mut out: Vec<String> = lines[..start].iter().map(|s| (*s).to_owned()).collect();
        let [a, b] = our_lines(delay_ms);
        out.push(BEGIN.to_owned());
        out.push(a);
        out.push(b);
        out.extend(kept.iter().map(|s| (*s).to_owned()));
        out.push(END.to_owned());
        out.extend(lines[end + 1..].iter().map(|s| (*s).to_owned()));
        return out.join("\n") + "\n";
    }
    let mut out = text.to_owned();
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(&block);
    out
}

/// `user.js` without our block: the markers and our pref lines inside it go, every other line
/// stays. `None` when there is no block of ours.
pub fn user_js_without_block(text: &str) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let (start, end) = find_block(&lines)?;
    let mut out: Vec<&str> = lines[..start].to_vec();
    out.extend(
        lines[start + 1..end]
            .iter()
            .copied()
            .filter(|l| !is_our_pref_line(l)),
    );
    out.extend(&lines[end + 1..]);
    if out.is_empty() {
        return Some(String::new());
    }
    let mut s = out.join("\n");
    if text.ends_with('\n') {
        s.push('\n');
    }
    Some(s)
}

fn find_block(lines: &[&str]) -> Option<(usize, usize)> {
    let start = lines.iter().position(|l| l.trim() == BEGIN)?;
    let end = start + lines[start..].iter().position(|l| l.trim() == END)?;
    Some((start, end))
}

fn policy_entries(delay_ms: u32) -> [(&'static str, Value); 2] {
    [
        (PREF_ENABLED, json!({"Value": true, "Status": "default"})),
        (PREF_DELAY, json!({"Value": delay_ms, "Status": "default"})),
    ]
}

/// `policies.json` with our two `Preferences` entries merged in. Errors on a file that is not a
/// JSON object with an object `policies` (never overwritten).
pub fn policies_with_prefs(text: Option<&str>, delay_ms: u32) -> Result<String, String> {
    let mut root = parse_policies(text)?;
    let prefs = preferences_mut(&mut root)?;
    for (name, value) in policy_entries(delay_ms) {
        prefs.insert(name.to_owned(), value);
    }
    Ok(pretty(&root))
}

/// `policies.json` without our entries: each goes only if it still holds what micoff writes (any
/// delay). Returns `None` when there is nothing of ours; `Some(None)` when nothing else is left
/// (the file can go), `Some(Some(text))` otherwise.
pub fn policies_without_prefs(text: &str) -> Result<Option<Option<String>>, String> {
    let mut root = parse_policies(Some(text))?;
    let prefs = preferences_mut(&mut root)?;
    let mut removed = false;
    if prefs.get(PREF_ENABLED) == Some(&json!({"Value": true, "Status": "default"})) {
        prefs.remove(PREF_ENABLED);
        removed = true;
    }
    if let Some(entry) = prefs.get(PREF_DELAY) {
        let ours = entry.get("Status") == Some(&json!("default"))
            && entry.as_object().is_some_and(|o| o.len() == 2)
            && entry
                .get("Value")
                .and_then(Value::as_u64)
                .is_some_and(|v| v <= u64::from(MAX_DELAY_MS));
        if ours {
            prefs.remove(PREF_DELAY);
            removed = true;
        }
    }
    if !removed {
        return Ok(None);
    }
    let prefs_empty = prefs.is_empty();
    if let Some(policies) = root.get_mut("policies").and_then(Value::as_object_mut) {
        if prefs_empty {
            policies.remove("Preferences");
        }
        if policies.is_empty() && root.as_object().is_some_and(|o| o.len() == 1) {
            return Ok(Some(None));
        }
    }
    Ok(Some(Some(pretty(&root))))
}

/// The `ExtensionSettings` entry that force-installs micoff from a local XPI.
fn extension_entry(xpi_url: &str) -> Value {
    json!({"installation_mode": "force_installed", "install_url": xpi_url})
}

/// Whether an `ExtensionSettings` entry is one micoff writes (a force install from a local XPI).
fn is_our_extension_entry(v: &Value) -> bool {
    v.get("install_url")
        .and_then(Value::as_str)
        .is_some_and(|u| u.starts_with("file:///") && u.ends_with(".xpi"))
        && v.as_object().is_some_and(|o| o.len() == 2)
        && v.get("installation_mode") == Some(&json!("force_installed"))
}

/// The unsigned-XPI switch: honoured by the `Preferences` policy only on builds that do not
/// require signing (ESR, Developer Edition, Nightly; Firefox's `Policies.sys.mjs` adds
/// `xpinstall.signatures.required` to the allowed prefs when `MOZ_REQUIRE_SIGNING` is off).
pub const PREF_SIGNATURES: &str = "xpinstall.signatures.required";

/// `policies.json` with micoff force-installed from `xpi_url` (`file:///...xpi`) and unsigned
/// add-ons allowed, merged into what is there.
pub fn policies_with_extension(
    text: Option<&str>,
    extension_id: &str,
    xpi_url: &str,
) -> Result<String, String> {
    let mut root = parse_policies(text)?;
    preferences_mut(&mut root)?.insert(
        PREF_SIGNATURES.to_owned(),
        json!({"Value": false, "Status": "default"}),
    );
    policy_mut(&mut root, "ExtensionSettings")?
        .insert(extension_id.to_owned(), extension_entry(xpi_url));
    Ok(pretty(&root))
}

/// `policies.json` without micoff's extension entry and signature switch (each only if it is
/// still what micoff writes). Same result shape as [`policies_without_prefs`].
pub fn policies_without_extension(
    text: &str,
    extension_id: &str,
) -> Result<Option<Option<String>>, String> {
    let mut root = parse_policies(Some(text))?;
    let mut removed = false;
    let prefs = preferences_mut(&mut root)?;
    if prefs.get(PREF_SIGNATURES) == Some(&json!({"Value": false, "Status": "default"})) {
        prefs.remove(PREF_SIGNATURES);
        removed = true;
    }
    let prefs_empty = prefs.is_empty();
    let Some(policies) = root.get_mut("policies").and_then(Value::as_object_mut) else {
        return Ok(None);
    };
    if prefs_empty {
        policies.remove("Preferences");
    }
    if let Some(settings) = policies
        .get_mut("ExtensionSettings")
        .and_then(Value::as_object_mut)
    {
        if settings
            .get(extension_id)
            .is_some_and(is_our_extension_entry)
        {
            settings.remove(extension_id);
            removed = true;
        }
        if settings.is_empty() {
            policies.remove("ExtensionSettings");
        }
    }
    if !removed {
        return Ok(None);
    }
    if policies.is_empty() && root.as_object().is_some_and(|o| o.len() == 1) {
        return Ok(Some(None));
    }
    Ok(Some(Some(pretty(&root))))
}

fn parse_policies(text: Option<&str>) -> Result<Value, String> {
    match text {
        None => Ok(json!({"policies": {}})),
        Some(t) => {
            let v: Value = serde_json::from_str(t).map_err(|e| format!("not valid JSON ({e})"))?;
            if !v.is_object() {
                return Err("not a JSON object".into());
            }
            Ok(v)
        }
    }
}

fn preferences_mut(root: &mut Value) -> Result<&mut Map<String, Value>, String> {
    policy_mut(root, "Preferences")
}

/// The object `policies.<name>` of `root`, created (with `policies`) when missing.
fn policy_mut<'a>(root: &'a mut Value, name: &str) -> Result<&'a mut Map<String, Value>, String> {
    let obj = root.as_object_mut().ok_or("not a JSON object")?;
    let policies = obj
        .entry("policies")
        .or_insert_with(|| json!({}))
        .as_object_mut()
        .ok_or("`policies` is not an object")?;
    policies
        .entry(name)
        .or_insert_with(|| json!({}))
        .as_object_mut()
        .ok_or_else(|| format!("`policies.{name}` is not an object"))
}

fn pretty(v: &Value) -> String {
    let mut s = serde_json::to_string_pretty(v).unwrap_or_default();
    s.push('\n');
    s
}

/// The profile folders listed in `<home>/.mozilla/firefox/profiles.ini` (relative `Path=` against
/// that folder), existing ones only.
pub fn profiles(home: &Path) -> Vec<PathBuf> {
    let base = home.join(".mozilla/firefox");
    let Ok(ini) = std::fs::read_to_string(base.join("profiles.ini")) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut relative = true;
    let mut path: Option<String> = None;
    let mut flush = |relative: bool, path: &mut Option<String>| {
        if let Some(p) = path.take() {
            let dir = if relative {
                base.join(&p)
            } else {
                PathBuf::from(&p)
            };
            if dir.is_dir() && !out.contains(&dir) {
                out.push(dir);
            }
        }
    };
    for line in ini.lines().map(str::trim) {
        if line.starts_with('[') {
            flush(relative, &mut path);
            relative = true;
        } else if let Some(v) = line.strip_prefix("IsRelative=") {
            relative = v != "0";
        } else if let Some(v) = line.strip_prefix("Path=") {
            path = Some(v.to_owned());
        }
    }
    flush(relative, &mut path);
    out
}

/// What to change: profile folders (per user) or the policy folders under `root` (`--system`).
pub struct Request<'a> {
    pub profiles: Vec<PathBuf>,
    pub system_root: Option<&'a Path>,
    pub delay_ms: u32,
    /// The release prefs (`--firefox-release`).
    pub release_prefs: bool,
    /// (`--system` only) micoff's add-on id and the `file:///...xpi` URL to force-install it from.
    pub extension: Option<(String, String)>,
    pub uninstall: bool,
    pub dry_run: bool,
}

impl Request<'_> {
    /// `policies.json` as this request leaves it: `Ok(None)` nothing of ours to do (uninstall),
    /// `Ok(Some(None))` the file can go, `Ok(Some(Some(text)))` the new text.
    fn transform_policies(&self, existing: Option<&str>) -> Result<Option<Option<String>>, String> {
        if !self.uninstall {
            let mut text = existing.map(str::to_owned);
            if self.release_prefs {
                text = Some(policies_with_prefs(text.as_deref(), self.delay_ms)?);
            }
            if let Some((id, url)) = &self.extension {
                text = Some(policies_with_extension(text.as_deref(), id, url)?);
            }
            return Ok(text.map(Some));
        }
        let Some(mut text) = existing.map(str::to_owned) else {
            return Ok(None);
        };
        let mut changed = false;
        let mut step = |result: Option<Option<String>>, text: &mut String| match result {
            None => false,
            Some(None) => true,
            Some(Some(t)) => {
                *text = t;
                changed = true;
                false
            }
        };
        if self.release_prefs {
            let r = policies_without_prefs(&text)?;
            if step(r, &mut text) {
                return Ok(Some(None));
            }
        }
        if let Some((id, _)) = &self.extension {
            let r = policies_without_extension(&text, id)?;
            if step(r, &mut text) {
                return Ok(Some(None));
            }
        }
        Ok(changed.then_some(Some(text)))
    }
}

/// Applies the request, one line per file. Returns the exit code.
pub fn run(req: &Request<'_>, out: &mut dyn Write) -> i32 {
    let would = if req.dry_run { "would be " } else { "" };
    let mut failed = 0usize;
    let mut total = 0usize;
    let mut report = |path: &Path, result: Result<&str, String>| {
        total += 1;
        let _ = match result {
            Ok(what) => writeln!(out, "Firefox: {} {what}", path.display()),
            Err(e) => {
                failed += 1;
                writeln!(out, "Firefox: {} FAILED: {e}", path.display())
            }
        };
    };
    let write = |path: &Path, text: &str| -> Result<(), String> {
        if req.dry_run {
            return Ok(());
        }
        micoff_files::write_atomic(path, text.as_bytes(), 0o644).map_err(|e| e.to_string())
    };
    if let Some(root) = req.system_root {
        for dir in POLICY_DIRS {
            let path = root.join(dir).join("policies.json");
            let existing = std::fs::read_to_string(&path).ok();
            // Only folders of a Firefox that is there: its policies folder's parent exists.
            if existing.is_none() && !root.join(dir).parent().is_some_and(Path::is_dir) {
                continue;
            }
            let result = match req.transform_policies(existing.as_deref()) {
                Err(e) => Err(format!("{e}; left alone")),
                Ok(None) if existing.is_none() => continue,
                Ok(None) => Ok("left alone (no entries of micoff's)".to_owned()),
                Ok(Some(None)) => {
                    if req.dry_run {
                        Ok(format!("{would}removed (only micoff's entries were in it)"))
                    } else {
                        micoff_files::remove(&path)
                            .map(|()| "removed (only micoff's entries were in it)".to_owned())
                            .map_err(|e| e.to_string())
                    }
                }
                Ok(Some(Some(text))) if Some(&text) == existing.as_ref() => {
                    Ok("unchanged".to_owned())
                }
                Ok(Some(Some(text))) => write(&path, &text).map(|()| {
                    let what = if req.uninstall {
                        "updated (micoff's entries removed)"
                    } else if existing.is_some() {
                        "updated"
                    } else {
                        "written"
                    };
                    format!("{would}{what}")
                }),
            };
            report(&path, result.as_deref().map_err(Clone::clone));
        }
    }
    let profiles: &[PathBuf] = if req.release_prefs {
        &req.profiles
    } else {
        &[]
    };
    for profile in profiles {
        let path = profile.join("user.js");
        let existing = std::fs::read_to_string(&path).ok();
        let result = if req.uninstall {
            match existing.as_deref().and_then(user_js_without_block) {
                None => continue,
                Some(text) if text.trim().is_empty() => {
                    if req.dry_run {
                        Ok(format!("{would}removed (only micoff's lines were in it)"))
                    } else {
                        micoff_files::remove(&path)
                            .map(|()| "removed (only micoff's lines were in it)".to_owned())
                            .map_err(|e| e.to_string())
                    }
                }
                Some(text) => write(&path, &text)
                    .map(|()| format!("{would}updated (micoff's lines removed, yours kept)")),
            }
        } else {
            let text = user_js_with_block(existing.as_deref().unwrap_or(""), req.delay_ms);
            if Some(&text) == existing.as_ref() {
                Ok("unchanged".to_owned())
            } else {
                write(&path, &text).map(|()| {
                    format!(
                        "{would}{}",
                        if existing.is_some() {
                            "updated"
                        } else {
                            "written"
                        }
                    )
                })
            }
        };
        report(&path, result.as_deref().map_err(Clone::clone));
    }
    if total == 0 {
        let _ = writeln!(
            out,
            "Firefox: {}",
            if req.uninstall {
                "nothing of micoff's found"
            } else if req.system_root.is_some() {
                "no Firefox policy folder found (/etc/firefox, /etc/firefox-esr)"
            } else {
                "no Firefox profile found (~/.mozilla/firefox/profiles.ini; name one with --firefox-profile)"
            }
        );
        return if req.uninstall { EXIT_OK } else { EXIT_ERROR };
    }
    if !req.uninstall && failed < total && req.extension.is_some() {
        let _ = writeln!(
            out,
            "Firefox: micoff is force-installed by policy at Firefox's next start (ESR, Developer \
             Edition and Nightly; release Firefox accepts only signed add-ons: install micoff from \
             addons.mozilla.org there)"
        );
    }
    if !req.uninstall && failed < total && req.release_prefs {
        let _ = writeln!(
            out,
            "Firefox release pref: {PREF_ENABLED} = true, delay {} ms; takes effect when Firefox starts",
            req.delay_ms
        );
    }
    match failed {
        0 => EXIT_OK,
        n if n == total => EXIT_ERROR,
        _ => EXIT_PARTIAL,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const USER: &str = "user_pref(\"browser.startup.page\", 3);\n// my comment\n";

    #[test]
    fn user_js_block_is_appended_replaced_and_removed_keeping_user_lines() {
        let once = user_js_with_block(USER, 3000);
        assert!(once.starts_with(USER));
        assert!(once.contains(&format!("user_pref(\"{PREF_ENABLED}\", true);")));
        assert!(once.contains(&format!("user_pref(\"{PREF_DELAY}\", 3000);")));
        assert_eq!(user_js_with_block(&once, 3000), once, "idempotent");
        let changed = user_js_with_block(&once, 1500);
        assert_eq!(changed.matches(BEGIN).count(), 1);
        assert!(changed.contains(&format!("user_pref(\"{PREF_DELAY}\", 1500);")));
        assert_eq!(user_js_without_block(&changed).unwrap(), USER);
        assert_eq!(user_js_without_block(USER), None);
    }

    #[test]
    fn user_js_lines_the_user_added_inside_the_block_survive_uninstall() {
        let mut text = user_js_with_block("", 3000);
        text = text.replace(END, &format!("user_pref(\"mine\", 1);\n{END}"));
        assert_eq!(
            user_js_with_block(&text, 2000).matches("mine").count(),
            1,
            "kept on update"
        );
        assert_eq!(
            user_js_without_block(&text).unwrap(),
            "user_pref(\"mine\", 1);\n"
        );
        // No trailing newline in the user's file: our block still starts on its own line.
        let t = user_js_with_block("user_pref(\"x\", 1);", 3000);
        assert!(t.starts_with("user_pref(\"x\", 1);\n// micoff: begin"));
    }

    #[test]
    fn policies_merge_keeps_other_policies_and_uninstall_removes_only_ours() {
        let theirs = r#"{"policies": {"DisableTelemetry": true, "Preferences": {"media.other": {"Value": 1, "Status": "locked"}}}}"#;
        let merged = policies_with_prefs(Some(theirs), 3000).unwrap();
        let v: Value = serde_json::from_str(&merged).unwrap();
        assert_eq!(v["policies"]["DisableTelemetry"], json!(true));
        assert_eq!(
            v["policies"]["Preferences"]["media.other"]["Value"],
            json!(1)
        );
        assert_eq!(
            v["policies"]["Preferences"][PREF_ENABLED]["Value"],
            json!(true)
        );
        let back = policies_without_prefs(&merged).unwrap().unwrap().unwrap();
        let b: Value = serde_json::from_str(&back).unwrap();
        let t: Value = serde_json::from_str(theirs).unwrap();
        assert_eq!(b, t);
        // Nothing but ours: the file can go.
        let only = policies_with_prefs(None, 3000).unwrap();
        assert_eq!(policies_without_prefs(&only).unwrap(), Some(None));
        // An admin's locked value is not ours.
        let locked = format!(
            r#"{{"policies": {{"Preferences": {{"{PREF_ENABLED}": {{"Value": true, "Status": "locked"}}}}}}}}"#
        );
        assert_eq!(policies_without_prefs(&locked).unwrap(), None);
        // Broken files are never overwritten.
        assert!(policies_with_prefs(Some("{not json"), 3000).is_err());
        assert!(policies_with_prefs(Some(r#"{"policies": []}"#), 3000).is_err());
    }

    #[test]
    fn extension_policy_merges_and_uninstall_removes_only_ours() {
        let theirs = r#"{"policies": {"ExtensionSettings": {"other@x": {"installation_mode": "blocked"}}, "Preferences": {"media.other": {"Value": 1, "Status": "locked"}}}}"#;
        let url = "file:///opt/micoff/micoff-0.1.0.xpi";
        let merged = policies_with_extension(Some(theirs), "micoff@micoff.org", url).unwrap();
        let v: Value = serde_json::from_str(&merged).unwrap();
        assert_eq!(
            v["policies"]["ExtensionSettings"]["micoff@micoff.org"]["install_url"],
            json!(url)
        );
        assert_eq!(
            v["policies"]["ExtensionSettings"]["other@x"]["installation_mode"],
            json!("blocked")
        );
        assert_eq!(
            v["policies"]["Preferences"][PREF_SIGNATURES]["Value"],
            json!(false)
        );
        // Together with the release prefs, then both taken out again: what was there is back.
        let both = policies_with_prefs(Some(&merged), 3000).unwrap();
        let a = policies_without_prefs(&both).unwrap().unwrap().unwrap();
        let back = policies_without_extension(&a, "micoff@micoff.org")
            .unwrap()
            .unwrap()
            .unwrap();
        assert_eq!(
            serde_json::from_str::<Value>(&back).unwrap(),
            serde_json::from_str::<Value>(theirs).unwrap()
        );
        // An entry for our id that an admin wrote (an https URL) is not ours.
        let admin = r#"{"policies": {"ExtensionSettings": {"micoff@micoff.org": {"installation_mode": "force_installed", "install_url": "https://example.org/m.xpi"}}}}"#;
        assert_eq!(
            policies_without_extension(admin, "micoff@micoff.org").unwrap(),
            None
        );
        let only = policies_with_extension(None, "micoff@micoff.org", url).unwrap();
        assert_eq!(
            policies_without_extension(&only, "micoff@micoff.org").unwrap(),
            Some(None)
        );
    }

    #[test]
    fn run_system_extension_policy_in_a_temp_root() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("etc/firefox-esr/policies")).unwrap();
        let policy = root.join("etc/firefox-esr/policies/policies.json");
        let theirs = "{\"policies\": {\"DisableTelemetry\": true}}\n";
        std::fs::write(&policy, theirs).unwrap();
        let req = |uninstall| Request {
            profiles: vec![],
            system_root: Some(root),
            delay_ms: 3000,
            release_prefs: true,
            extension: Some((
                "micoff@micoff.org".to_owned(),
                "file:///opt/micoff/micoff.xpi".to_owned(),
            )),
            uninstall,
            dry_run: false,
        };
        let mut out = Vec::new();
        assert_eq!(run(&req(false), &mut out), EXIT_OK);
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&policy).unwrap()).unwrap();
        assert_eq!(v["policies"]["DisableTelemetry"], json!(true));
        assert_eq!(
            v["policies"]["ExtensionSettings"]["micoff@micoff.org"]["installation_mode"],
            json!("force_installed")
        );
        assert_eq!(
            v["policies"]["Preferences"][PREF_ENABLED]["Value"],
            json!(true)
        );
        assert_eq!(run(&req(true), &mut out), EXIT_OK);
        let back: Value = serde_json::from_str(&std::fs::read_to_string(&policy).unwrap()).unwrap();
        assert_eq!(back, serde_json::from_str::<Value>(theirs).unwrap());
    }

    #[test]
    fn run_per_profile_and_system_in_temp_dirs() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let prof = home.join(".mozilla/firefox/abc.default-esr");
        std::fs::create_dir_all(&prof).unwrap();
        std::fs::write(
            home.join(".mozilla/firefox/profiles.ini"),
            "[Profile0]\nName=default-esr\nIsRelative=1\nPath=abc.default-esr\n\n[General]\nVersion=2\n",
        )
        .unwrap();
        std::fs::write(prof.join("user.js"), USER).unwrap();
        assert_eq!(profiles(&home), vec![prof.clone()]);
        let root = dir.path().join("root");
        std::fs::create_dir_all(root.join("etc/firefox-esr")).unwrap();
        let mut out = Vec::new();
        fn req<'a>(home: &Path, uninstall: bool, system: Option<&'a Path>) -> Request<'a> {
            Request {
                profiles: if system.is_some() {
                    vec![]
                } else {
                    profiles(home)
                },
                system_root: system,
                delay_ms: 2500,
                release_prefs: true,
                extension: None,
                uninstall,
                dry_run: false,
            }
        }
        assert_eq!(run(&req(&home, false, None), &mut out), EXIT_OK);
        assert!(std::fs::read_to_string(prof.join("user.js"))
            .unwrap()
            .contains("2500"));
        assert_eq!(run(&req(&home, false, Some(&root)), &mut out), EXIT_OK);
        let policy = root.join("etc/firefox-esr/policies/policies.json");
        assert!(policy.is_file());
        assert!(
            !root.join("etc/firefox/policies/policies.json").exists(),
            "no Firefox there"
        );
        assert_eq!(run(&req(&home, true, None), &mut out), EXIT_OK);
        assert_eq!(std::fs::read_to_string(prof.join("user.js")).unwrap(), USER);
        assert_eq!(run(&req(&home, true, Some(&root)), &mut out), EXIT_OK);
        assert!(!policy.exists());
    }
}
