//! Firefox's part of `install --system`: micoff's entries in the `policies.json` every Firefox
//! reads (merged by `policies`, recorded in micoff's system data folder), micoff's copy of the xpi
//! they install from, and the clean-up of the folder micoff wrote into before. Checked before the
//! install writes anything (`refuse_before_writing`).

use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::env::SYSTEM_DATA_DIR;
use crate::firefox::policies::{self, Wanted, LEGACY_POLICY_DIRS, POLICY_DIR, RECORD_NAME};
use crate::firefox::prefs::PREF_SIGNATURES;
use crate::firefox::recorded::note_policies;
use crate::firefox::report::Report;
use crate::firefox::request::Request;
use crate::firefox::write::{
    read_text, remove, remove_recorded, write_keeping_mode, write_recorded,
};
use crate::firefox::xpi::{inspect, read_copy, write_copy, SYSTEM_XPI_NAME};
use micoff_exit::EXIT_PARTIAL;
use micoff_files::diff::unified;
use micoff_files::record::Journal;
use micoff_files::shown;

/// The role micoff's record gives its record of policy entries.
const ROLE_POLICY_RECORD: &str = "Firefox policy record";

/// `--system`: micoff's copy of the xpi, and the entries micoff wants in policies.json.
fn system_wanted(req: &Request<'_>, root: &Path) -> (PathBuf, Wanted) {
    let xpi_copy = root.join(SYSTEM_DATA_DIR).join(SYSTEM_XPI_NAME);
    let wanted = Wanted {
        release_delay_ms: req.release_prefs.then_some(req.delay_ms),
        extension: req
            .addon
            .as_ref()
            .map(|a| (a.id.clone(), format!("file://{}", xpi_copy.display()))),
    };
    (xpi_copy, wanted)
}

/// A policy file's text: `None` only when there is no file. A file that exists but cannot be read as
/// text (permissions, not UTF-8) is an error: taking it for "no file" would write over the
/// administrator's policies, or forget micoff's entries in it.
fn read_policy_text(path: &Path) -> Result<Option<String>, String> {
    read_text(path).map_err(|e| format!("cannot be read ({e})"))
}

/// `--system` install, before anything is written (the host manifests included): when the policy
/// file Firefox reads would be refused (an administrator's own value for an entry micoff needs, a
/// file that is not a policy file), says so and returns the exit code; the install then changes
/// nothing at all. `None`: go ahead.
pub fn refuse_before_writing(
    req: &Request<'_>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Option<i32> {
    let root = req.system_root.filter(|_| !req.uninstall)?;
    let path = root.join(POLICY_DIR).join("policies.json");
    let text = match read_policy_text(&path) {
        Ok(t) => t?,
        Err(e) => {
            let todo = format!(
                "make {} readable policy JSON (UTF-8) first, then run this again",
                shown(&path)
            );
            return Some(refused(out, err, &path, &e, &todo));
        }
    };
    let (_, wanted) = system_wanted(req, root);
    let record_path = root.join(SYSTEM_DATA_DIR).join(RECORD_NAME);
    // An unreadable record is reported by the install itself.
    let record = policies::read_record(&record_path).ok()?;
    let file_record = record
        .get(&format!("{POLICY_DIR}/policies.json"))
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let e = policies::install(Some(&text), &wanted, &file_record).err()?;
    let todo = format!(
        "settle that entry in {} first, then run this again",
        shown(&path)
    );
    Some(refused(out, err, &path, &e, &todo))
}

/// The policy file at `path` left alone for `why`, and nothing installed: `todo` says what to do.
fn refused(
    out: &mut dyn Write,
    err: &mut dyn Write,
    path: &Path,
    why: &dyn std::fmt::Display,
    todo: &str,
) -> i32 {
    let _ = writeln!(out, "Firefox: {} left alone: {why}", shown(path));
    micoff_exit::report(
        err,
        crate::args::CMD,
        "nothing installed (no host manifest, no policy entry, no copy of the add-on)",
        todo,
    );
    EXIT_PARTIAL
}

/// `--system`: the policy files, micoff's record of its entries, micoff's copy of the xpi, through
/// `journal` (micoff's record).
pub fn run(req: &Request<'_>, root: &Path, report: &mut Report<'_>, journal: &mut Journal) {
    let would = if req.dry_run { "would be " } else { "" };
    let data_dir = root.join(SYSTEM_DATA_DIR);
    let record_path = data_dir.join(RECORD_NAME);
    let (xpi_copy, wanted) = system_wanted(req, root);
    let mut record = match policies::read_record(&record_path) {
        Ok(r) => r,
        Err(e) => return report.failed(&record_path, &format!("FAILED: {e}")),
    };
    // (file, its text now, its text after: None removes it)
    let mut writes: Vec<(PathBuf, Option<String>, Option<String>)> = Vec::new();
    let mut accepted = 0usize;
    let mut blocking: Vec<PathBuf> = Vec::new();
    // The folder Firefox reads, then those micoff wrote into before (cleaned up, never written).
    let dirs = std::iter::once((POLICY_DIR, false)).chain(LEGACY_POLICY_DIRS.map(|d| (d, true)));
    for (dir, legacy) in dirs {
        let path = root.join(dir).join("policies.json");
        let key = format!("{dir}/policies.json");
        let existing = match read_policy_text(&path) {
            Ok(t) => t,
            // A folder micoff only cleans up: left for another run, its record kept.
            Err(_) if legacy => continue,
            Err(e) => {
                // Neither written over nor forgotten: micoff's record of it stays as it was.
                report.refused(&path, &format!("left alone: {e}"));
                continue;
            }
        };
        // Written only where a Firefox is: one found on this machine, or Firefox's /etc folder.
        let firefox_here =
            !req.builds.is_empty() || root.join(dir).parent().is_some_and(Path::is_dir);
        if existing.is_none() && (legacy || !firefox_here) {
            if req.uninstall || legacy {
                record.remove(&key);
            }
            continue;
        }
        let file_record = record
            .get(&key)
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let outcome = match (&existing, req.uninstall || legacy) {
            (None, true) => {
                record.remove(&key);
                continue;
            }
            // A file no Firefox reads: micoff's entries just go.
            (Some(t), true) => policies::uninstall(t, &wanted, &file_record, !legacy),
            (t, false) => policies::install(t.as_deref(), &wanted, &file_record),
        };
        let outcome = match outcome {
            Ok(o) => o,
            Err(_) if legacy => continue,
            Err(e) => {
                report.refused(&path, &format!("left alone: {e}"));
                continue;
            }
        };
        if legacy && outcome.text.is_none() {
            continue;
        }
        accepted += usize::from(!legacy);
        for l in &outcome.left {
            report.note(&format!("{}: {l}", shown(&path)));
        }
        if outcome.blocking {
            blocking.push(path.clone());
        }
        if outcome.record.is_empty() {
            record.remove(&key);
        } else {
            record.insert(key, Value::Object(outcome.record));
        }
        match outcome.text {
            None if req.uninstall && outcome.left.is_empty() => {}
            None => report.ok(&path, "unchanged"),
            Some(text) => writes.push((path, existing, text)),
        }
    }
    if !req.uninstall && accepted > 0 {
        if let Some((bytes, _)) = req.addon.as_ref().and_then(|a| a.xpi.as_ref()) {
            // /etc/firefox also serves release Firefox, which ignores the signature policy.
            for build in req
                .builds
                .iter()
                .filter(|b| b.requires_signing() == Some(true))
            {
                report.note(&format!(
                    "note: Firefox {} accepts only add-ons signed by addons.mozilla.org: the policy \
                     cannot install micoff's unsigned add-on there; install micoff from \
                     addons.mozilla.org in that Firefox",
                    build.describe()
                ));
            }
            if wanted.extension.is_some() {
                report.note(&format!(
                    "warning: {PREF_SIGNATURES} = false (a locked Preferences policy) turns off the \
                     check of add-on signatures in every Firefox ESR, Developer Edition and Nightly \
                     profile of this machine: any unsigned add-on can then be installed, not only \
                     micoff's (`micoff-host uninstall --system` turns it back on)"
                ));
            }
            match write_copy(&xpi_copy, bytes, req.dry_run, journal) {
                Ok(what) => report.ok(&xpi_copy, &what),
                Err(e) => return report.failed(&xpi_copy, &format!("FAILED: {e}")),
            }
        }
    }
    for (path, before, text) in writes {
        if req.dry_run {
            report.text(&unified(
                &shown(&path),
                before.as_deref(),
                text.as_deref().unwrap_or(""),
            ));
        }
        let removing = text.is_none();
        let r = match text {
            None => remove(&path, req.dry_run)
                .map(|()| format!("{would}removed (only micoff's entries were in it)")),
            Some(t) => write_keeping_mode(&path, t.as_bytes(), 0o644, req.dry_run, journal).map(|()| {
                format!(
                    "{would}{}",
                    if blocking.contains(&path) {
                        "updated (micoff's entries removed; micoff's add-on entry now blocks micoff)"
                    } else if req.uninstall || !path.starts_with(root.join(POLICY_DIR)) {
                        "updated (micoff's entries removed)"
                    } else if path.exists() {
                        "updated"
                    } else {
                        "written"
                    }
                )
            }),
        };
        if removing && r.is_ok() {
            report.removed.push(path.clone());
        }
        match r {
            Ok(what) if !path.starts_with(root.join(POLICY_DIR)) => report.aside(&path, &what),
            Ok(what) => report.ok(&path, &what),
            Err(e) => report.failed(&path, &format!("FAILED: {e}")),
        }
    }
    if req.uninstall && req.addon.is_some() {
        // micoff's own folder: its copy goes once no entry of micoff's points at it.
        if let Ok(Some(bytes)) = read_copy(&xpi_copy) {
            match inspect(&bytes) {
                Ok(_) => match remove_recorded(&xpi_copy, req.dry_run, journal) {
                    Ok(()) => report.removed(
                        &xpi_copy,
                        &format!("{would}removed (micoff's copy of the add-on)"),
                    ),
                    Err(e) => report.failed(&xpi_copy, &format!("FAILED: {e}")),
                },
                Err(e) => report.ok(&xpi_copy, &format!("left alone: {e}")),
            }
        }
    }
    if !blocking.is_empty() {
        // Measured: Firefox ESR keeps running an add-on whose force-install entry was simply
        // removed (docs/design/firefox-install.md), so the entry blocks micoff for a while instead.
        let blocks = if req.dry_run {
            "micoff's add-on entry would block micoff"
        } else {
            "micoff's add-on entry blocks micoff"
        };
        report.note(&format!(
            "{blocks}: Firefox removes micoff from each profile at \
             its next start (removing the entry alone would leave micoff installed). The entry also \
             keeps micoff from being installed any other way; once every user's Firefox has started, \
             run this again to take it out"
        ));
    }
    if !req.dry_run {
        for dir in std::iter::once(POLICY_DIR).chain(LEGACY_POLICY_DIRS) {
            let key = format!("{dir}/policies.json");
            note_policies(
                journal,
                &root.join(&key),
                record.get(&key).and_then(Value::as_object),
            );
        }
        let r = if record.is_empty() {
            if record_path.exists() {
                remove_recorded(&record_path, false, journal)
            } else {
                Ok(())
            }
        } else {
            write_recorded(
                &record_path,
                policies::record_text(&record).as_bytes(),
                ROLE_POLICY_RECORD,
                false,
                journal,
            )
        };
        if let Err(e) = r {
            report.failed(
                &record_path,
                &format!("FAILED (micoff's record of its policy entries): {e}"),
            );
        }
    }
}
