//! The packages `install` is handed (`--chromium-crx`, `--firefox-xpi`): read (regular files only,
//! bounded) and checked to be micoff's before anything is written.

use std::path::Path;

use micoff_files::{read_regular, shown, MAX_FILE_BYTES};

use crate::chromium::crx::{inspect as inspect_crx, CrxInfo, MICOFF_NAME};
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

/// A crx that is micoff's: CRX3 signed with micoff's release key (micoff's id), or with another key
/// (this machine's local key, which `npm run package` signs with when the release key is absent, or
/// a fork's) whose manifest is micoff's (its `name`). `Ok` carries the note for another key's crx:
/// its id is not micoff's release id, and the host manifests allow it beside that one.
pub fn read_crx(path: &Path) -> Result<(Vec<u8>, CrxInfo, Option<String>), String> {
    let p = shown(path);
    let bytes = read(path).map_err(|e| format!("--chromium-crx {p}: {e}"))?;
    let info = inspect_crx(&bytes).map_err(|e| format!("--chromium-crx {p}: {e}"))?;
    if info.id == CHROME_EXTENSION_ID {
        return Ok((bytes, info, None));
    }
    if info.name != MICOFF_NAME {
        return Err(format!(
            "--chromium-crx {p}: not micoff's extension (its manifest.json names {}, not \
             {MICOFF_NAME:?}, and it is not signed with micoff's release key)",
            micoff_exit::quote(&info.name)
        ));
    }
    let note = format!(
        "{p} is signed with another key than micoff's release key (this machine's local key from \
         `npm run package`, or a fork's): Chromium installs it as extension {}, which the host \
         manifests allow beside micoff's {CHROME_EXTENSION_ID}",
        info.id
    );
    Ok((bytes, info, Some(note)))
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
