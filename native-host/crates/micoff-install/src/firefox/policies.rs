//! `install --system` for Firefox: micoff's entries in `policies.json` (`/etc/firefox/policies`,
//! read by every Linux build), merged in and only ever micoff's own. What micoff wrote is recorded
//! in `/usr/local/share/micoff/firefox-policies.json`; an entry is micoff's while it holds exactly
//! that. Install writes an absent or micoff's entry, leaves one someone else wrote with the wanted
//! value, and refuses the file when one holds anything else. Uninstall removes micoff's entries
//! only, first turning the add-on entry into `blocked` (Firefox keeps a force-installed add-on
//! otherwise). The text is edited in place (`json_text`): the administrator's formatting stays.

use std::path::Path;

use serde_json::{json, Map, Value};

use crate::firefox::prefs::{PREF_DELAY, PREF_ENABLED, PREF_SIGNATURES};
use crate::json_text;

/// The policy folder, relative to the root: Firefox reads `<SysConfD>/policies/policies.json`,
/// and SysConfD is `/etc/firefox` for every Firefox build (release, ESR, Developer Edition,
/// Nightly: the application's name, not the package's; Debian's `firefox-esr` too).
pub const POLICY_DIR: &str = "etc/firefox/policies";
/// Where micoff wrote before (Debian's ESR was thought to read it; it does not): cleaned up, never
/// written.
pub const LEGACY_POLICY_DIRS: [&str; 1] = ["etc/firefox-esr/policies"];
/// The record of micoff's entries, in `install::env::SYSTEM_DATA_DIR`.
pub const RECORD_NAME: &str = "firefox-policies.json";
/// The policy sections micoff writes into.
const PREFERENCES: &str = "Preferences";
const EXTENSION_SETTINGS: &str = "ExtensionSettings";

/// What micoff wants in (or out of) a policies file.
#[derive(Debug, Clone, Default)]
pub struct Wanted {
    /// The release prefs: enabled, and the delay (`--firefox-release`).
    pub release_delay_ms: Option<u32>,
    /// The add-on: its id and the `file://` URL of micoff's copy of the xpi (`--firefox-xpi`).
    pub extension: Option<(String, String)>,
}

impl Wanted {
    /// `(section, key, value)` of every entry micoff writes.
    fn entries(&self) -> Vec<(&'static str, String, Value)> {
        let mut out = Vec::new();
        if let Some(delay) = self.release_delay_ms {
            out.push((
                PREFERENCES,
                PREF_ENABLED.to_owned(),
                pref_entry(json!(true)),
            ));
            out.push((PREFERENCES, PREF_DELAY.to_owned(), pref_entry(json!(delay))));
        }
        if let Some((id, url)) = &self.extension {
            out.push((
                PREFERENCES,
                PREF_SIGNATURES.to_owned(),
                pref_entry(json!(false)),
            ));
            out.push((
                EXTENSION_SETTINGS,
                id.clone(),
                json!({"installation_mode": "force_installed", "install_url": url}),
            ));
        }
        out
    }

    /// `(section, key)` of the entries an uninstall of these parts may remove.
    fn keys(&self) -> Vec<(&'static str, String)> {
        self.entries().into_iter().map(|(s, k, _)| (s, k)).collect()
    }
}

/// A `Preferences` policy entry as micoff writes it: a default the user may change.
fn pref_entry(value: Value) -> Value {
    json!({"Value": value, "Status": "default"})
}

/// micoff's add-on entry while uninstalling: Firefox removes a blocked add-on at its next start.
fn blocked_entry() -> Value {
    json!({"installation_mode": "blocked"})
}

/// What micoff wrote into one policies file: section -> key -> value.
pub type FileRecord = Map<String, Value>;

/// One policies file, after [`install`] or [`uninstall`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// The new text (`Some(None)`: the file can go, only micoff's entries were in it; `None`:
    /// unchanged).
    pub text: Option<Option<String>>,
    /// What micoff now owns in the file.
    pub record: FileRecord,
    /// Entries left as they are, and why (for the report).
    pub left: Vec<String>,
    /// (uninstall) micoff's add-on entry now blocks micoff: Firefox removes it at its next start;
    /// the next uninstall takes the entry out.
    pub blocking: bool,
}

/// The file's new text: the administrator's own text with micoff's edits (`edited`) when it says
/// exactly `root`, else `root` rendered afresh.
fn text_of(edited: Option<String>, root: &Value) -> String {
    match edited {
        Some(t) if serde_json::from_str::<Value>(&t).ok().as_ref() == Some(root) => t,
        _ => pretty(root),
    }
}

fn parse(text: Option<&str>) -> Result<Value, String> {
    match text {
        None => Ok(json!({"policies": {}})),
        Some(t) => {
            let v: Value = serde_json::from_str(t).map_err(|e| format!("not valid JSON ({e})"))?;
            if !v.is_object() {
                return Err("not a JSON object".into());
            }
            if v.get("policies").is_some_and(|p| !p.is_object()) {
                return Err("`policies` is not an object".into());
            }
            Ok(v)
        }
    }
}

fn section<'a>(root: &'a Value, name: &str) -> Result<Option<&'a Map<String, Value>>, String> {
    match root.get("policies").and_then(|p| p.get(name)) {
        None => Ok(None),
        Some(Value::Object(o)) => Ok(Some(o)),
        Some(_) => Err(format!("`policies.{name}` is not an object")),
    }
}

/// The object `policies.<name>` of `root`, created (with `policies`) when missing.
fn section_mut<'a>(root: &'a mut Value, name: &str) -> Result<&'a mut Map<String, Value>, String> {
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

fn recorded<'a>(record: &'a FileRecord, section: &str, key: &str) -> Option<&'a Value> {
    record.get(section).and_then(|s| s.get(key))
}

fn set_recorded(record: &mut FileRecord, section: &str, key: &str, value: Option<Value>) {
    let entry = record.entry(section).or_insert_with(|| json!({}));
    if let Some(map) = entry.as_object_mut() {
        match value {
            Some(v) => {
                map.insert(key.to_owned(), v);
            }
            None => {
                map.remove(key);
            }
        }
        if map.is_empty() {
            record.remove(section);
        }
    }
}

/// Whether an add-on entry is one micoff wrote before it kept a record: a force install from
/// micoff's own copy of the xpi, nothing else.
fn is_legacy_extension_entry(v: &Value, our_url: Option<&str>) -> bool {
    our_url.is_some()
        && v.as_object().is_some_and(|o| o.len() == 2)
        && v.get("installation_mode") == Some(&json!("force_installed"))
        && v.get("install_url").and_then(Value::as_str) == our_url
}

fn pretty(v: &Value) -> String {
    let mut s = serde_json::to_string_pretty(v).unwrap_or_default();
    s.push('\n');
    s
}

/// `policies.<section>.<key>`, for messages.
fn entry_name(section: &str, key: &str) -> String {
    format!("policies.{section}[\"{key}\"]")
}

/// Merges micoff's entries into `text` (a missing file is `None`). `Err` when the file is not a
/// policies object, or when an entry micoff needs holds someone else's different value: nothing is
/// changed then.
pub fn install(
    text: Option<&str>,
    wanted: &Wanted,
    record: &FileRecord,
) -> Result<Outcome, String> {
    let mut root = parse(text)?;
    let mut edited = text.map(str::to_owned);
    let mut record = record.clone();
    let mut left = Vec::new();
    let mut conflicts = Vec::new();
    let mut changed = text.is_none();
    for (sec, key, value) in wanted.entries() {
        let current = section(&root, sec)?.and_then(|s| s.get(&key)).cloned();
        let ours = current.as_ref().is_some_and(|c| {
            recorded(&record, sec, &key) == Some(c)
                || (sec == EXTENSION_SETTINGS
                    && is_legacy_extension_entry(
                        c,
                        value.get("install_url").and_then(Value::as_str),
                    ))
        });
        match current {
            Some(c) if c == value => {
                if !ours {
                    left.push(format!(
                        "{} already holds that value (not micoff's): left as it is",
                        entry_name(sec, &key)
                    ));
                }
                // Already as wanted: recorded only if micoff wrote it.
                if ours {
                    set_recorded(&mut record, sec, &key, Some(value));
                }
            }
            Some(_) if ours => {
                section_mut(&mut root, sec)?.insert(key.clone(), value.clone());
                edited = edited.and_then(|t| json_text::set(&t, &["policies", sec, &key], &value));
                set_recorded(&mut record, sec, &key, Some(value));
                changed = true;
            }
            None => {
                section_mut(&mut root, sec)?.insert(key.clone(), value.clone());
                edited = edited.and_then(|t| json_text::set(&t, &["policies", sec, &key], &value));
                set_recorded(&mut record, sec, &key, Some(value));
                changed = true;
            }
            // A pref someone else set to the value micoff wants (e.g. locked): it does the job.
            Some(c) if sec == PREFERENCES && c.get("Value") == value.get("Value") => {
                left.push(format!(
                    "{} is {} (not micoff's): it already gives that value; left as it is",
                    entry_name(sec, &key),
                    c
                ));
            }
            Some(c) => conflicts.push(format!(
                "{} is {} (not written by micoff), micoff would write {}",
                entry_name(sec, &key),
                c,
                value
            )),
        }
    }
    if !conflicts.is_empty() {
        return Err(format!(
            "{}; micoff does not overwrite what it did not write: change or remove that yourself, \
             then run this again",
            conflicts.join("; ")
        ));
    }
    Ok(Outcome {
        text: changed.then(|| Some(text_of(edited, &root))),
        record,
        left,
        blocking: false,
    })
}

/// Takes micoff's entries for `wanted`'s parts out of `text`. With `block_addon` (a file Firefox
/// reads) micoff's force-install entry becomes `blocked` first (Firefox keeps an add-on whose entry
/// is simply gone); a blocked entry of micoff's goes.
pub fn uninstall(
    text: &str,
    wanted: &Wanted,
    record: &FileRecord,
    block_addon: bool,
) -> Result<Outcome, String> {
    let mut root = parse(Some(text))?;
    let mut edited = Some(text.to_owned());
    let mut record = record.clone();
    let mut left = Vec::new();
    let mut changed = false;
    let mut blocking = false;
    let our_url = wanted.extension.as_ref().map(|(_, url)| url.as_str());
    for (sec, key) in wanted.keys() {
        let rec = recorded(&record, sec, &key).cloned();
        let Some(current) = section(&root, sec)?.and_then(|s| s.get(&key)).cloned() else {
            set_recorded(&mut record, sec, &key, None);
            continue;
        };
        let ours = rec.as_ref() == Some(&current)
            || (sec == EXTENSION_SETTINGS && is_legacy_extension_entry(&current, our_url));
        if ours && block_addon && sec == EXTENSION_SETTINGS && current != blocked_entry() {
            let blocked = blocked_entry();
            section_mut(&mut root, sec)?.insert(key.clone(), blocked.clone());
            edited = edited.and_then(|t| json_text::set(&t, &["policies", sec, &key], &blocked));
            set_recorded(&mut record, sec, &key, Some(blocked));
            changed = true;
            blocking = true;
            continue;
        }
        if ours {
            let s = section_mut(&mut root, sec)?;
            s.remove(&key);
            edited = edited.and_then(|t| json_text::remove(&t, &["policies", sec, &key]));
            let empty = s.is_empty();
            if empty {
                if let Some(p) = root.get_mut("policies").and_then(Value::as_object_mut) {
                    p.remove(sec);
                }
                edited = edited.and_then(|t| json_text::remove(&t, &["policies", sec]));
            }
            changed = true;
        } else if rec.is_some() {
            left.push(format!(
                "{} changed since micoff wrote it: left alone",
                entry_name(sec, &key)
            ));
        }
        set_recorded(&mut record, sec, &key, None);
    }
    // A container micoff's entries leave empty goes, like a section: `policies`, then the file.
    if changed
        && root
            .get("policies")
            .and_then(Value::as_object)
            .is_some_and(Map::is_empty)
    {
        if let Some(o) = root.as_object_mut() {
            o.remove("policies");
        }
        edited = edited.and_then(|t| json_text::remove(&t, &["policies"]));
    }
    let text = if !changed {
        None
    } else if root.as_object().is_some_and(Map::is_empty) {
        Some(None)
    } else {
        Some(Some(text_of(edited, &root)))
    };
    Ok(Outcome {
        text,
        record,
        left,
        blocking,
    })
}

/// The record file: policy file (relative to the root) -> [`FileRecord`].
pub fn read_record(path: &Path) -> Result<Map<String, Value>, String> {
    match micoff_files::read_regular_text(path, micoff_files::MAX_TEXT_BYTES) {
        Ok(None) => Ok(Map::new()),
        Err(e) => Err(e.to_string()),
        Ok(Some(t)) => match serde_json::from_str(&t) {
            Ok(Value::Object(o)) => Ok(o),
            _ => Err(format!(
                "{} is not micoff's record of its policy entries (not a JSON object); left alone",
                micoff_files::shown(path)
            )),
        },
    }
}

pub fn record_text(record: &Map<String, Value>) -> String {
    pretty(&Value::Object(record.clone()))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const ID: &str = "micoff@micoff.org";
    const URL: &str = "file:///usr/local/share/micoff/micoff.xpi";

    fn both() -> Wanted {
        Wanted {
            release_delay_ms: Some(3000),
            extension: Some((ID.to_owned(), URL.to_owned())),
        }
    }

    fn value(text: &str) -> Value {
        serde_json::from_str(text).unwrap()
    }

    #[test]
    fn merges_into_other_policies_and_takes_out_exactly_what_it_added() {
        let theirs = r#"{"policies": {"DisableTelemetry": true, "ExtensionSettings": {"other@x": {"installation_mode": "blocked"}}, "Preferences": {"media.other": {"Value": 1, "Status": "locked"}}}}"#;
        let out = install(Some(theirs), &both(), &Map::new()).unwrap();
        let merged = out.text.clone().unwrap().unwrap();
        let v = value(&merged);
        assert_eq!(v["policies"]["DisableTelemetry"], json!(true));
        assert_eq!(
            v["policies"]["ExtensionSettings"]["other@x"]["installation_mode"],
            json!("blocked")
        );
        assert_eq!(
            v["policies"]["ExtensionSettings"][ID]["install_url"],
            json!(URL)
        );
        assert_eq!(
            v["policies"]["Preferences"][PREF_SIGNATURES]["Value"],
            json!(false)
        );
        assert_eq!(
            v["policies"]["Preferences"][PREF_DELAY]["Value"],
            json!(3000)
        );
        assert_eq!(out.record["Preferences"].as_object().unwrap().len(), 3);
        // Again: nothing changes.
        let again = install(Some(&merged), &both(), &out.record).unwrap();
        assert_eq!(again.text, None);
        assert_eq!(again.record, out.record);
        // A new delay replaces micoff's own older value.
        let mut later = both();
        later.release_delay_ms = Some(1500);
        let changed = install(Some(&merged), &later, &out.record).unwrap();
        let changed_text = changed.text.clone().unwrap().unwrap();
        assert_eq!(
            value(&changed_text)["policies"]["Preferences"][PREF_DELAY]["Value"],
            json!(1500)
        );
        // Out again, in a file Firefox reads: micoff's add-on entry blocks micoff first (Firefox
        // removes it then), the release prefs go; the next uninstall takes the block out, and the
        // admin's file is as it was, byte for byte.
        let first = uninstall(&changed_text, &later, &changed.record, true).unwrap();
        assert!(first.blocking);
        let first_text = first.text.clone().unwrap().unwrap();
        let v = value(&first_text);
        assert_eq!(
            v["policies"]["ExtensionSettings"][ID],
            json!({"installation_mode": "blocked"})
        );
        assert!(v["policies"]["Preferences"].get(PREF_DELAY).is_none());
        assert!(v["policies"]["Preferences"].get(PREF_SIGNATURES).is_none());
        // Installed again meanwhile: micoff's blocked entry is micoff's to replace.
        let re = install(Some(&first_text), &both(), &first.record).unwrap();
        assert_eq!(
            value(&re.text.unwrap().unwrap())["policies"]["ExtensionSettings"][ID]
                ["installation_mode"],
            json!("force_installed")
        );
        let back = uninstall(&first_text, &later, &first.record, true).unwrap();
        assert!(!back.blocking);
        assert_eq!(back.text.unwrap().unwrap(), theirs);
        assert!(back.record.is_empty());
        // Nothing but micoff's: the file can go.
        let only = install(None, &both(), &Map::new()).unwrap();
        let gone = uninstall(&only.text.unwrap().unwrap(), &both(), &only.record, false).unwrap();
        assert_eq!(gone.text, Some(None));
    }

    #[test]
    fn an_admins_own_formatting_survives_install_and_uninstall() {
        let theirs = "{\n    \"policies\": {\n        \"DisableTelemetry\": true,\n        \"Preferences\": {\n            \"browser.tabs.warnOnClose\": { \"Value\": false, \"Status\": \"locked\" }\n        },\n        \"ExtensionSettings\": {\n            \"admin-tool@example.org\": {\n                \"installation_mode\": \"allowed\"\n            }\n        },\n        \"DisableFirefoxStudies\": true\n    }\n}\n";
        let out = install(Some(theirs), &both(), &Map::new()).unwrap();
        let merged = out.text.unwrap().unwrap();
        // The admin's lines are all still there, in their order, with micoff's in between.
        let mut rest = merged.lines();
        for line in theirs.lines() {
            let line = line.trim_end_matches(',');
            assert!(
                rest.any(|l| l.trim_end_matches(',') == line),
                "{line:?} not kept in\n{merged}"
            );
        }
        assert!(merged.contains("\n        \"DisableFirefoxStudies\": true\n    }\n}\n"));
        let first = uninstall(&merged, &both(), &out.record, true).unwrap();
        let blocked = first.text.unwrap().unwrap();
        let back = uninstall(&blocked, &both(), &first.record, true).unwrap();
        assert_eq!(back.text.unwrap().unwrap(), theirs);
        assert!(back.record.is_empty());
    }

    #[test]
    fn a_document_without_policies_gets_them_and_loses_them_again() {
        // Found by the policies_json fuzz target: `policies` made by micoff stayed behind, empty.
        let theirs = "{\"comment\": \"managed by IT\"}";
        let out = install(Some(theirs), &both(), &Map::new()).unwrap();
        let first = uninstall(&out.text.unwrap().unwrap(), &both(), &out.record, true).unwrap();
        let blocked = first.text.unwrap().unwrap();
        let back = uninstall(&blocked, &both(), &first.record, true).unwrap();
        assert_eq!(back.text.unwrap().unwrap(), theirs);
        // A document that held no policy at all goes, as one micoff made would.
        let out = install(Some("{}"), &both(), &Map::new()).unwrap();
        let gone = uninstall(&out.text.unwrap().unwrap(), &both(), &out.record, false).unwrap();
        assert_eq!(gone.text, Some(None));
    }

    #[test]
    fn install_refuses_to_overwrite_an_entry_it_did_not_write() {
        // An admin's entry for micoff's id (another source), and an admin's delay.
        for theirs in [
            r#"{"policies": {"ExtensionSettings": {"micoff@micoff.org": {"installation_mode": "force_installed", "install_url": "https://example.org/m.xpi"}}}}"#,
            r#"{"policies": {"ExtensionSettings": {"micoff@micoff.org": {"installation_mode": "blocked"}}}}"#,
            r#"{"policies": {"Preferences": {"media.getusermedia.microphone.off_while_disabled.delay_ms": {"Value": 2000, "Status": "default"}}}}"#,
            r#"{"policies": {"Preferences": {"xpinstall.signatures.required": {"Value": true, "Status": "locked"}}}}"#,
        ] {
            let e = install(Some(theirs), &both(), &Map::new()).unwrap_err();
            assert!(e.contains("not written by micoff"), "{e}");
        }
        // An entry micoff recorded, changed since by someone: not micoff's any more.
        let only = install(None, &both(), &Map::new()).unwrap();
        let edited = only.text.unwrap().unwrap().replace("3000", "2500");
        assert!(install(Some(&edited), &both(), &only.record).is_err());
        // Someone else's entry that already gives micoff's value: left as is, not claimed.
        let locked = r#"{"policies": {"Preferences": {"xpinstall.signatures.required": {"Value": false, "Status": "locked"}}}}"#;
        let out = install(Some(locked), &both(), &Map::new()).unwrap();
        assert!(
            out.left.iter().any(|l| l.contains("already gives")),
            "{:?}",
            out.left
        );
        assert!(recorded(&out.record, PREFERENCES, PREF_SIGNATURES).is_none());
        let v = value(&out.text.clone().unwrap().unwrap());
        assert_eq!(
            v["policies"]["Preferences"][PREF_SIGNATURES]["Status"],
            json!("locked")
        );
        let back = uninstall(&out.text.unwrap().unwrap(), &both(), &out.record, false).unwrap();
        assert_eq!(
            value(&back.text.unwrap().unwrap()),
            value(locked),
            "the admin's pref stays"
        );
        // Broken files are never overwritten.
        assert!(install(Some("{not json"), &both(), &Map::new()).is_err());
        assert!(install(Some(r#"{"policies": []}"#), &both(), &Map::new()).is_err());
        assert!(install(
            Some(r#"{"policies": {"Preferences": 3}}"#),
            &both(),
            &Map::new()
        )
        .is_err());
    }

    #[test]
    fn uninstall_removes_only_what_is_provably_micoffs() {
        // Same shape as micoff's, never recorded: an admin's.
        let admin = format!(
            r#"{{"policies": {{"Preferences": {{"{PREF_ENABLED}": {{"Value": true, "Status": "default"}}, "{PREF_DELAY}": {{"Value": 3000, "Status": "default"}}}}, "ExtensionSettings": {{"micoff@micoff.org": {{"installation_mode": "force_installed", "install_url": "file:///opt/admin/micoff.xpi"}}}}}}}}"#
        );
        let out = uninstall(&admin, &both(), &Map::new(), false).unwrap();
        assert_eq!(out.text, None, "nothing removed");
        // micoff's entry changed since: left alone, and forgotten.
        let only = install(None, &both(), &Map::new()).unwrap();
        let edited = only.text.unwrap().unwrap().replace("3000", "2500");
        let out = uninstall(&edited, &both(), &only.record, false).unwrap();
        let v = value(&out.text.unwrap().unwrap());
        assert_eq!(
            v["policies"]["Preferences"][PREF_DELAY]["Value"],
            json!(2500)
        );
        assert!(v["policies"]["Preferences"].get(PREF_ENABLED).is_none());
        assert!(
            out.left.iter().any(|l| l.contains("changed since")),
            "{:?}",
            out.left
        );
        assert!(out.record.is_empty());
        // An add-on entry from before the record: micoff's when it names micoff's own copy.
        let legacy = format!(
            r#"{{"policies": {{"ExtensionSettings": {{"micoff@micoff.org": {{"installation_mode": "force_installed", "install_url": "{URL}"}}}}}}}}"#
        );
        let ext_only = Wanted {
            release_delay_ms: None,
            extension: Some((ID.to_owned(), URL.to_owned())),
        };
        assert_eq!(
            uninstall(&legacy, &ext_only, &Map::new(), false)
                .unwrap()
                .text,
            Some(None)
        );
        // Only the parts asked for: the release prefs stay with --firefox-xpi alone.
        let all = install(None, &both(), &Map::new()).unwrap();
        let out = uninstall(&all.text.unwrap().unwrap(), &ext_only, &all.record, false).unwrap();
        let v = value(&out.text.unwrap().unwrap());
        assert_eq!(
            v["policies"]["Preferences"][PREF_ENABLED]["Value"],
            json!(true)
        );
        assert!(v["policies"].get("ExtensionSettings").is_none());
        assert_eq!(out.record["Preferences"].as_object().unwrap().len(), 2);
    }
}
