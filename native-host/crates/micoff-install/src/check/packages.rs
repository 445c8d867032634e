//! The packages `install` is handed (`--chromium-crx`, `--firefox-xpi`): read (regular files only,
//! bounded) and checked to be micoff's before anything is written.

use std::path::Path;

use micoff_files::{read_regular, shown, MAX_FILE_BYTES};

use crate::chromium::crx::{inspect as inspect_crx, CrxInfo};
use crate::firefox::xpi::{inspect as inspect_xpi, XpiInfo};
use micoff_native::{CHROME_EXTENSION_ID, FIREFOX_EXTENSION_ID};

/// The file at `path`, or why not.
fn read(path: &Path) -> Result<Vec<u8>, String> {
    match read_regular(path, MAX_FILE_BYTES) {
        Ok(Some(b)) => Ok(b),
        Ok(None) => Err("no such file".to_owned()),
        Err(e) => Err(e.to_string()),
    }
}

/// A crx that is micoff's: CRX3 with micoff's id, or with `allow_other_key` another key's id
/// (`Ok` then carries the warning to print).
pub fn read_crx(
    path: &Path,
    allow_other_key: bool,
) -> Result<(Vec<u8>, CrxInfo, Option<String>), String> {
    let p = shown(path);
    let bytes = read(path).map_err(|e| format!("--chromium-crx {p}: {e}"))?;
    let info = inspect_crx(&bytes).map_err(|e| format!("--chromium-crx {p}: {e}"))?;
    if info.id == CHROME_EXTENSION_ID {
        return Ok((bytes, info, None));
    }
    let why = format!(
        "{p}: extension id {}, but this micoff-host answers only {CHROME_EXTENSION_ID} (the key in \
         manifests/chrome.json it was built from): the crx was signed with another key than \
         micoff's release key, so Chromium installs it as another extension, which this host \
         refuses",
        info.id
    );
    if !allow_other_key {
        return Err(format!(
            "--chromium-crx {why}. Use the crx `npm run package` signs with the release key (or \
             --allow-other-key for a fork's own key, with a host built from it)."
        ));
    }
    Ok((bytes, info, Some(format!("--allow-other-key: {why}"))))
}

/// An xpi that is micoff's add-on (the id this host answers).
pub fn read_xpi(path: &Path) -> Result<(Vec<u8>, XpiInfo), String> {
    let p = shown(path);
    let bytes = read(path).map_err(|e| format!("--firefox-xpi {p}: {e}"))?;
    let info = inspect_xpi(&bytes).map_err(|e| format!("--firefox-xpi {p}: {e}"))?;
    if info.id != FIREFOX_EXTENSION_ID {
        return Err(format!(
            "--firefox-xpi {p}: add-on id {}, but this micoff-host answers only \
             {FIREFOX_EXTENSION_ID}: not micoff's add-on (use the xpi `npm run package` writes)",
            info.id
        ));
    }
    Ok((bytes, info))
}
