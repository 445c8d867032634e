//! micoff's add-on as an xpi: what one says about itself (id, version), where micoff's copies go
//! (a profile's `extensions/`, micoff's system data folder), and writing such a copy.

use std::path::{Path, PathBuf};

use serde_json::Value;

use micoff_files::record::Journal;
use micoff_files::{read_regular, MAX_FILE_BYTES};

use crate::firefox::write::write_recorded;
use crate::zip;

/// micoff's copy of the xpi in `SYSTEM_DATA_DIR` (the policy's `install_url`).
pub const SYSTEM_XPI_NAME: &str = "micoff.xpi";

/// What an xpi says about itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct XpiInfo {
    /// `browser_specific_settings.gecko.id` (or the older `applications.gecko.id`).
    pub id: String,
    pub version: String,
}

/// Reads an xpi's add-on id and version from its `manifest.json`.
pub fn inspect(bytes: &[u8]) -> Result<XpiInfo, String> {
    let manifest = zip::entry(bytes, "manifest.json", zip::MAX_MANIFEST)?
        .ok_or("no manifest.json in it (not an add-on)")?;
    let m: Value =
        serde_json::from_slice(&manifest).map_err(|e| format!("manifest.json is not JSON: {e}"))?;
    let id = ["browser_specific_settings", "applications"]
        .iter()
        .find_map(|k| m.get(k)?.get("gecko")?.get("id")?.as_str())
        .ok_or("manifest.json names no add-on id (browser_specific_settings.gecko.id)")?;
    let version = m
        .get("version")
        .and_then(Value::as_str)
        .ok_or("manifest.json has no `version`")?;
    Ok(XpiInfo {
        id: id.to_owned(),
        version: version.to_owned(),
    })
}

/// micoff's copy of add-on `id` in a profile (`<profile>/extensions/<id>.xpi`).
pub fn profile_copy(profile: &Path, id: &str) -> PathBuf {
    profile.join("extensions").join(format!("{id}.xpi"))
}

/// The role micoff's record gives its copies of the add-on.
pub const ROLE: &str = "Firefox add-on copy";

/// The bytes of the copy at `path` now (`None`: none), regular files only.
pub fn read_copy(path: &Path) -> Result<Option<Vec<u8>>, String> {
    read_regular(path, MAX_FILE_BYTES).map_err(|e| e.to_string())
}

/// Writes micoff's copy of the add-on to `path` through `journal` (a file already there keeps its
/// mode; dry-run writes nothing) and says what it did, for the report line.
pub fn write_copy(
    path: &Path,
    bytes: &[u8],
    dry_run: bool,
    journal: &mut Journal,
) -> Result<String, String> {
    let would = if dry_run { "would be " } else { "" };
    let existing = read_copy(path)?;
    if existing.as_deref() == Some(bytes) {
        journal.wrote(path, bytes, ROLE);
        return Ok("unchanged".to_owned());
    }
    write_recorded(path, bytes, ROLE, dry_run, journal).map(|()| {
        format!(
            "{would}{} (micoff's copy of the add-on)",
            if existing.is_some() {
                "updated"
            } else {
                "written"
            }
        )
    })
}
