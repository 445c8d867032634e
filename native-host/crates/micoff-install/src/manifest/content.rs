//! The native messaging host manifest micoff writes (`org.micoff.host.json`), and whether a file
//! found where it goes is micoff's and still as micoff wrote it, in micoff-files' one verdict
//! ([`Ownership`]). A browser validates the manifest's JSON, so it cannot carry micoff's marker
//! line; its record is micoff itself: the manifest is a pure function of the browser family and the
//! host path and the local extension ids it allows beside micoff's (those of the crx copies
//! `install --chromium-crx` put in place: `chromium::external::local_ids`), so what was written is
//! recomputed and compared ([`micoff_files::ours::judge`]).

use std::path::Path;

use micoff_native::{CHROME_EXTENSION_ID, FIREFOX_EXTENSION_ID, HOST_NAME};

/// The manifest for a browser family, as written (pretty JSON, trailing newline): a Chromium
/// manifest's `allowed_origins` are micoff's id, then `local_ids` (the ids of crx copies signed with
/// another key than micoff's release key).
pub fn manifest_json(firefox: bool, host_path: &Path, local_ids: &[String]) -> String {
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
            let mut origins = vec![format!("chrome-extension://{CHROME_EXTENSION_ID}/")];
            for id in local_ids {
                let origin = format!("chrome-extension://{id}/");
                if !origins.contains(&origin) {
                    origins.push(origin);
                }
            }
            object.insert("allowed_origins".into(), serde_json::json!(origins));
        }
    }
    let mut text = serde_json::to_string_pretty(&manifest).unwrap_or_default();
    text.push('\n');
    text
}

/// Whose a manifest file found where micoff writes one is, as uninstall needs to know: not ours
/// (another host's, or not a manifest), edited (what differs), or as written (uninstall may remove
/// it).
pub use micoff_files::ours::Ownership;

/// Whose `text` is: micoff's (`check_ours`) and unedited (`check_as_written`, as written with
/// `local_ids` or without them), or why not.
pub fn ownership_of(text: &[u8], local_ids: &[String]) -> Ownership {
    micoff_files::ours::judge(check_ours(text), || check_as_written(text, local_ids))
}

/// `Ok` when a manifest file is ours (our host name, pointing at a `micoff-host` binary), else
/// `Err` with why not.
fn check_ours(text: &[u8]) -> Result<(), String> {
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

/// `Ok` when a manifest of ours is still what micoff writes, else `Err` naming what differs. The
/// manifest is a pure function of the browser family, the host path it names and the local ids, so
/// what was written is recomputed (either family: `--target-dir` does not always say which; with
/// the local ids and without) and compared as JSON. The `description` may differ (it changes
/// between versions); anything else differing is an edit.
fn check_as_written(text: &[u8], local_ids: &[String]) -> Result<(), String> {
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
    let forms = [(false, local_ids), (false, &[][..]), (true, &[][..])];
    for (firefox, ids) in forms {
        let written: serde_json::Value =
            serde_json::from_str(&manifest_json(firefox, Path::new(path), ids))
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn ownership_tells_micoffs_unedited_manifest_from_an_edited_one_and_from_anothers() {
        let host = Path::new("/opt/micoff/micoff-host");
        for firefox in [false, true] {
            let written = manifest_json(firefox, host, &[]);
            assert_eq!(ownership_of(written.as_bytes(), &[]), Ownership::AsWritten);
            // Another version's description is still as written.
            let described = written.replace("micoff native host:", "micoff host:");
            assert_eq!(
                ownership_of(described.as_bytes(), &[]),
                Ownership::AsWritten
            );
            let edited = written.replace("\"stdio\"", "\"other\"");
            assert_eq!(
                ownership_of(edited.as_bytes(), &[]),
                Ownership::Edited("changed since micoff wrote it (`type`)".to_owned())
            );
        }
        let elsewhere = manifest_json(false, Path::new("/usr/bin/other-host"), &[]);
        assert!(matches!(
            ownership_of(elsewhere.as_bytes(), &[]),
            Ownership::NotOurs(why) if why.contains("is not a micoff-host")
        ));
        assert_eq!(
            ownership_of(b"{not json", &[]),
            Ownership::NotOurs("not a JSON manifest".to_owned())
        );
    }

    #[test]
    fn a_local_id_is_allowed_after_micoffs_and_only_micoffs_local_ids_count_as_written() {
        let host = Path::new("/usr/bin/micoff-host");
        let local = vec!["abcdefghijklmnopabcdefghijklmnop".to_owned()];
        let written = manifest_json(false, host, &local);
        let v: serde_json::Value = serde_json::from_str(&written).unwrap();
        assert_eq!(
            v["allowed_origins"],
            serde_json::json!([
                format!("chrome-extension://{CHROME_EXTENSION_ID}/"),
                "chrome-extension://abcdefghijklmnopabcdefghijklmnop/"
            ])
        );
        // micoff's own id is never listed twice; Firefox's manifest takes no Chrome id.
        assert_eq!(
            manifest_json(false, host, &[CHROME_EXTENSION_ID.to_owned()]),
            manifest_json(false, host, &[])
        );
        assert_eq!(
            manifest_json(true, host, &local),
            manifest_json(true, host, &[])
        );
        assert_eq!(
            ownership_of(written.as_bytes(), &local),
            Ownership::AsWritten
        );
        // The same manifest when that id is no crx copy of micoff's any more: an id someone added.
        assert!(matches!(
            ownership_of(written.as_bytes(), &[]),
            Ownership::Edited(why) if why.contains("allowed_origins")
        ));
        // Before the local crx, the release-only manifest is as written too.
        let plain = manifest_json(false, host, &[]);
        assert_eq!(ownership_of(plain.as_bytes(), &local), Ownership::AsWritten);
    }
}
