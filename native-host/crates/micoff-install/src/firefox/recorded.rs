//! What micoff's record says of Firefox's parts, each undone by Firefox's own rules: a profile's
//! block in user.js (the prefs micoff set, each with the value the user had given it, and the
//! add-on copy's sha256) and a policy file's entries. The block and micoff's record of policy
//! entries stay the authority (an older micoff's install is undone by them too); the record points
//! `micoff-host uninstall` at them and keeps what they hold.

use std::path::Path;

use micoff_files::record::Journal;
use serde_json::{json, Map, Value};

use crate::firefox::user_js::{Block, Pref};

/// The record's owner of a profile's block.
pub const OWNER_PROFILE: &str = "firefox-profile";
/// The record's owner of a policy file's entries.
pub const OWNER_POLICIES: &str = "firefox-policies";

fn prefs(list: &[Pref]) -> Value {
    Value::Array(
        list.iter()
            .map(|(n, v)| json!({"name": n, "value": v}))
            .collect(),
    )
}

/// Notes `profile`'s block as it is now (forgotten when micoff's lines are all out).
pub fn note_profile(journal: &mut Journal, profile: &Path, block: &Block) {
    let key = profile.to_string_lossy();
    if block.is_empty() {
        journal.forget_part(OWNER_PROFILE, &key);
        return;
    }
    let addon = block.addon.as_ref().map(|a| {
        json!({
            "copy_sha256": a.sha256,
            "prefs": prefs(&a.prefs),
        })
    });
    journal.part(
        OWNER_PROFILE,
        &key,
        json!({
            "user_js": profile.join("user.js"),
            "release": prefs(&block.release),
            "addon": addon,
            "prefs_js_had": prefs(&block.previous),
        }),
    );
}

/// Notes the entries micoff has in the policy file `path` (`None` or empty: forgotten).
pub fn note_policies(journal: &mut Journal, path: &Path, entries: Option<&Map<String, Value>>) {
    let key = path.to_string_lossy();
    match entries {
        Some(e) if !e.is_empty() => journal.part(
            OWNER_POLICIES,
            &key,
            json!({"policies_json": path, "entries": e}),
        ),
        _ => journal.forget_part(OWNER_POLICIES, &key),
    }
}
