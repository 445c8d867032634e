//! `install --chromium-crx <CRX>`: micoff into Chromium from its signed crx through the external
//! extensions Chromium reads on Linux (docs/design/packaging.md, "Chromium without
//! --load-extension"): per user `<user data dir>/External Extensions/<id>.json` (Chromium-branded
//! builds only), the crx in `~/.local/share/micoff`; with `--system` `<Chromium's binary
//! folder>/extensions/<id>.json`, the crx in `/usr/local/share/micoff` (not
//! `/usr/share/chromium/extensions`, which Debian passes to `--load-extension`). Only a crx that is
//! micoff's goes in (micoff's id, or another key's: `check::packages::read_crx`); a crx of another
//! id replacing micoff's copy takes the entry of the one before away; `--uninstall` removes only what
//! is still micoff's. Module map: [`crx`] (id, version), [`external`] (the places, the entry), here
//! [`run`].

pub mod crx;
pub mod external;

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::args::CMD;
use crate::env::InstallEnv;
use crx::{inspect, CrxInfo};
use external::{blocking_policy, external_json, is_ours, paths, sandboxed_note, user_data_dir};
use micoff_exit::{EXIT_ERROR, EXIT_OK, EXIT_PARTIAL, EXIT_USAGE};
use micoff_files::diff::unified;
use micoff_files::record::Journal;
use micoff_files::{read_regular, shown, MAX_FILE_BYTES};
use micoff_native::CHROME_EXTENSION_ID;

/// What to do.
pub struct Request<'a> {
    /// The crx to install, read and checked by `install::check` (install only).
    pub crx: Option<(&'a [u8], &'a CrxInfo)>,
    pub system: bool,
    pub uninstall: bool,
    pub dry_run: bool,
    /// Uninstall: files left alone because micoff's record holds them (`micoff-host uninstall`'s
    /// sweep for what an older micoff wrote: the record's own steps have them); none for
    /// `install --uninstall`.
    pub recorded: &'a BTreeSet<PathBuf>,
}

/// The roles micoff's record gives the files.
const ROLE_CRX: &str = "Chromium crx copy";
const ROLE_ENTRY: &str = "Chromium external extension entry";

/// A file's bytes now (regular files only, bounded), or why not.
fn read_now(path: &Path) -> Result<Option<Vec<u8>>, String> {
    read_regular(path, MAX_FILE_BYTES).map_err(|e| e.to_string())
}

/// Applies the request, one line per file, through `journal`; its errors on `err`. Returns the
/// exit code.
pub fn run(
    req: &Request<'_>,
    env: &InstallEnv,
    journal: &mut Journal,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    if req.uninstall {
        return uninstall(req, env, journal, out);
    }
    let Some((bytes, info)) = req.crx else {
        micoff_exit::report(
            err,
            CMD,
            "--chromium-crx needs the crx to install",
            "give the crx `npm run package` writes (dist/micoff-<version>.crx)",
        );
        return EXIT_USAGE;
    };
    let places = paths(env, req.system, &info.id);
    // The id of the crx installed before, when this one has another (another key's crx).
    let previous = read_now(&places.crx)
        .ok()
        .flatten()
        .and_then(|b| crx::crx_id(&b).ok())
        .map(|(id, _)| id)
        .filter(|id| *id != info.id);
    let would = if req.dry_run { "would be " } else { "" };
    let mut write = |path: &Path, content: &[u8], role: &str| -> Result<String, String> {
        let existing = read_now(path)?;
        if existing.as_deref() == Some(content) {
            journal.wrote(path, content, role);
            return Ok("unchanged".into());
        }
        if !req.dry_run {
            journal
                .write(path, content, 0o644, role)
                .map_err(|e| e.to_string())?;
        }
        Ok(format!(
            "{would}{}",
            if existing.is_some() {
                "updated"
            } else {
                "written"
            }
        ))
    };
    let crx_result = write(&places.crx, bytes, ROLE_CRX);
    let _ = match &crx_result {
        Ok(what) => writeln!(
            out,
            "Chromium extension: {} {what} (micoff {}, id {})",
            shown(&places.crx),
            info.version,
            info.id
        ),
        Err(e) => writeln!(
            out,
            "Chromium extension: {} FAILED: {e}",
            shown(&places.crx)
        ),
    };
    if crx_result.is_err() {
        return EXIT_ERROR;
    }
    let json = external_json(&places.crx, &info.version);
    let before = read_now(&places.json);
    let json_result = match &before {
        Ok(Some(old)) if old != json.as_bytes() && !is_ours(old, &places.crx) => Err(
            "left alone: an entry for micoff's id that micoff did not write (remove it yourself \
             to install this way)"
                .to_owned(),
        ),
        Err(e) => Err(format!("left alone: {e}")),
        _ => write(&places.json, json.as_bytes(), ROLE_ENTRY),
    };
    let _ = match &json_result {
        Ok(what) => writeln!(out, "Chromium extension: {} {what}", shown(&places.json)),
        Err(e) => writeln!(out, "Chromium extension: {} {e}", shown(&places.json)),
    };
    if req.dry_run {
        if let (Ok(old), Ok(_)) = (&before, &json_result) {
            let old = old.as_deref().map(String::from_utf8_lossy);
            let _ = write!(
                out,
                "{}",
                unified(&shown(&places.json), old.as_deref(), &json)
            );
        }
    }
    if json_result.is_err() {
        return EXIT_PARTIAL;
    }
    if let Some(old) = previous {
        // Its entry names micoff's copy, which is this crx now: Chromium would keep the old one.
        let old_json = paths(env, req.system, &old).json;
        if read_now(&old_json)
            .ok()
            .flatten()
            .is_some_and(|t| is_ours(&t, &places.crx))
        {
            let done = if req.dry_run {
                Ok(())
            } else {
                journal.remove(&old_json).map_err(|e| e.to_string())
            };
            let _ = match done {
                Ok(()) => writeln!(
                    out,
                    "Chromium extension: {} {would}removed (the entry of the crx installed before, \
                     id {old}: Chromium removes that extension at its next start)",
                    shown(&old_json)
                ),
                Err(e) => writeln!(out, "Chromium extension: {} FAILED: {e}", shown(&old_json)),
            };
        }
    }
    let whose = if req.system {
        "for every user (Chromium's external extensions folder; system-wide needs root)".to_owned()
    } else {
        format!(
            "in every profile of {} (a Chromium started with --user-data-dir=DIR reads \
             DIR/External Extensions instead; --system installs it for every user)",
            shown(&user_data_dir(env))
        )
    };
    let _ = writeln!(
        out,
        "Chromium: micoff {} (id {}) {} at Chromium's next start, enabled, no prompt, {whose}; \
         not for Google Chrome, which installs from the Chrome Web Store only",
        info.version,
        info.id,
        if req.dry_run {
            "would be installed"
        } else {
            "is installed"
        }
    );
    if !req.system {
        if let Some(note) = sandboxed_note(env) {
            let _ = writeln!(out, "note: {note}");
        }
    }
    if let Some(policy) = blocking_policy(env) {
        let _ = writeln!(
            out,
            "warning: {} sets BlockExternalExtensions: Chromium ignores this install while it does",
            shown(&policy)
        );
    }
    EXIT_OK
}

/// Removes micoff's entry (micoff's id, and the id of micoff's crx copy when that differs: an
/// crx signed with another key) and the crx copy, except what `req.recorded` holds.
fn uninstall(
    req: &Request<'_>,
    env: &InstallEnv,
    journal: &mut Journal,
    out: &mut dyn Write,
) -> i32 {
    let mut ids = vec![CHROME_EXTENSION_ID.to_owned()];
    let copy = paths(env, req.system, CHROME_EXTENSION_ID).crx;
    if let Some(info) = read_now(&copy)
        .ok()
        .flatten()
        .and_then(|b| inspect(&b).ok())
    {
        if !ids.contains(&info.id) {
            ids.push(info.id);
        }
    }
    let would = if req.dry_run { "would be " } else { "" };
    let mut remove = |path: &Path| -> Result<String, String> {
        if !req.dry_run {
            journal.remove(path).map_err(|e| e.to_string())?;
        }
        Ok(format!("{would}removed"))
    };
    let mut lines: Vec<(PathBuf, Result<String, String>)> = Vec::new();
    for id in &ids {
        let places = paths(env, req.system, id);
        if req.recorded.contains(&places.json) {
            continue;
        }
        if let Ok(Some(text)) = read_now(&places.json) {
            let r = if is_ours(&text, &places.crx) {
                remove(&places.json)
            } else {
                Ok("left alone: not what micoff writes".to_owned())
            };
            lines.push((places.json.clone(), r));
        }
    }
    if let (false, Ok(Some(bytes))) = (req.recorded.contains(&copy), read_now(&copy)) {
        // micoff's own folder; a file there that is not a crx is left alone all the same.
        let r = match inspect(&bytes) {
            Ok(_) => remove(&copy),
            Err(e) => Ok(format!("left alone: {e}")),
        };
        lines.push((copy.clone(), r));
    }
    if lines.is_empty() {
        let _ = writeln!(out, "Chromium extension: nothing of micoff's found");
        return EXIT_OK;
    }
    let mut failed = 0;
    for (path, r) in &lines {
        let _ = match r {
            Ok(what) => writeln!(out, "Chromium extension: {} {what}", shown(path)),
            Err(e) => {
                failed += 1;
                writeln!(out, "Chromium extension: {} FAILED: {e}", shown(path))
            }
        };
    }
    if failed == 0 && !req.dry_run {
        let _ = writeln!(
            out,
            "Chromium: removes micoff at its next start (its external entry is gone)"
        );
    }
    match failed {
        0 => EXIT_OK,
        n if n == lines.len() => EXIT_ERROR,
        _ => EXIT_PARTIAL,
    }
}
