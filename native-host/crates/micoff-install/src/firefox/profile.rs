//! Firefox's part of `install` per user: each profile (listed in `profiles.ini`, or named; which
//! folders count: `profiles`) gets micoff's block in `user.js` and micoff's copy of the add-on in
//! `extensions/`, when the Firefox that runs it accepts an unsigned add-on; `--uninstall` takes
//! them out again, and the values Firefox copied from them into `prefs.js` (put back to the user's
//! own where the block recorded one), while that Firefox is closed. Each profile's block is noted
//! in micoff's record (`recorded`), the add-on copy with it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use micoff_files::diff::unified;
use micoff_files::record::Journal;
use micoff_files::shown;

use crate::firefox::build::Build;
use crate::firefox::prefs::PREF_SIGNATURES;
use crate::firefox::recorded::note_profile;
use crate::firefox::report::Report;
use crate::firefox::request::Request;
use crate::firefox::user_js::{prefs_js_without, running_pid, AddonRecord, Block, Pref, UserJs};
use crate::firefox::write::{read_text, remove, remove_recorded, write_keeping_mode};
use crate::firefox::xpi::{profile_copy, read_copy, write_copy};

/// Whether the unsigned add-on can go into `profile`: `Err` (refused) when the Firefox that runs
/// it requires signed add-ons; `Ok` with a warning when it cannot be told for sure. Also the build
/// whose defaults count.
fn signing_verdict(
    profile: &Path,
    builds: &[Build],
) -> (Result<Option<String>, String>, Option<Build>) {
    const SIGNED_ONLY: &str = "accepts only add-ons signed by addons.mozilla.org (it would delete \
                               micoff's unsigned copy at its next start): install micoff from \
                               addons.mozilla.org there";
    if let Some(build) = Build::of_profile(profile) {
        let verdict = match build.requires_signing() {
            Some(true) => Err(format!("last run by Firefox {}, which {SIGNED_ONLY}", build.describe())),
            Some(false) => Ok(None),
            None => Ok(Some(format!(
                "cannot tell whether Firefox {} (which last ran this profile) requires signed add-ons",
                build.describe()
            ))),
        };
        return (verdict, Some(build));
    }
    let rules: Vec<(Build, Option<bool>)> = builds
        .iter()
        .map(|b| (b.clone(), b.requires_signing()))
        .collect();
    let usable = rules
        .iter()
        .find(|(_, r)| *r != Some(true))
        .map(|(b, _)| b.clone());
    let signed: Vec<String> = rules
        .iter()
        .filter(|(_, r)| *r == Some(true))
        .map(|(b, _)| b.describe())
        .collect();
    let verdict = if rules.is_empty() {
        Ok(Some(
            "no Firefox found here to check: release Firefox accepts only signed add-ons"
                .to_owned(),
        ))
    } else if usable.is_none() {
        Err(format!(
            "this profile has not run yet, and the Firefox found here ({}) {SIGNED_ONLY}",
            signed.join(", ")
        ))
    } else if !signed.is_empty() {
        Ok(Some(format!(
            "Firefox {} {SIGNED_ONLY}; micoff works in this profile when Firefox {} runs it",
            signed.join(", "),
            usable.as_ref().map(Build::describe).unwrap_or_default()
        )))
    } else {
        Ok(None)
    };
    (verdict, usable)
}

/// One profile: install or uninstall the parts asked for, through `journal`.
pub fn run(req: &Request<'_>, profile: &Path, report: &mut Report<'_>, journal: &mut Journal) {
    if !profile.is_dir() {
        if !req.uninstall {
            report.failed(profile, "FAILED: no such profile folder");
        }
        return;
    }
    let user_path = profile.join("user.js");
    let prefs_path = profile.join("prefs.js");
    let (user_text, prefs_text) = match (read_text(&user_path), read_text(&prefs_path)) {
        (Ok(u), Ok(p)) => (u, p),
        (Err(e), _) => return report.failed(&user_path, &format!("FAILED: {e}")),
        (_, Err(e)) => return report.failed(&prefs_path, &format!("FAILED: {e}")),
    };
    let js = UserJs::parse(user_text.as_deref().unwrap_or(""));
    if req.uninstall {
        uninstall(req, profile, &js, prefs_text.as_deref(), report, journal);
    } else {
        install(
            req,
            profile,
            &js,
            user_text.as_deref(),
            prefs_text.as_deref(),
            report,
            journal,
        );
    }
}

/// Takes micoff's parts asked for out of one profile.
fn uninstall(
    req: &Request<'_>,
    profile: &Path,
    js: &UserJs,
    prefs_text: Option<&str>,
    report: &mut Report<'_>,
    journal: &mut Journal,
) {
    let user_path = profile.join("user.js");
    let prefs_path = profile.join("prefs.js");
    let would = if req.dry_run { "would be " } else { "" };
    let xpi = req.addon.as_ref().map(|a| profile_copy(profile, &a.id));
    let mut block = js.block.clone();
    let mut removed: Vec<Pref> = Vec::new();
    if req.release_prefs {
        removed.append(&mut block.release);
    }
    let mut remove_xpi = None;
    let mut left_xpi = None;
    let record = if req.addon.is_some() {
        block.addon.take()
    } else {
        None
    };
    if let (Some(path), Some(record)) = (&xpi, record) {
        removed.extend(record.prefs);
        if let Ok(Some(bytes)) = read_copy(path) {
            if record.sha256.as_deref() == Some(micoff_files::sha256_hex(&bytes).as_str()) {
                remove_xpi = Some(path.clone());
            } else {
                left_xpi = Some(path.clone());
            }
        }
    }
    if block == js.block {
        return; // nothing of micoff's for these parts
    }
    if let Some(pid) = running_pid(profile) {
        report.refused(
            profile,
            &format!(
                "left alone: Firefox is running with this profile (pid {pid}) and writes its \
                 prefs back into prefs.js when it exits; close it, then run this again"
            ),
        );
        return;
    }
    let new_user = js.render(&block);
    let r = if new_user.trim().is_empty() {
        remove(&user_path, req.dry_run)
            .map(|()| format!("{would}removed (only micoff's lines were in it)"))
    } else {
        write_keeping_mode(&user_path, new_user.as_bytes(), 0o644, req.dry_run, journal)
            .map(|()| format!("{would}updated (micoff's lines removed, yours kept)"))
    };
    match r {
        Ok(what) if new_user.trim().is_empty() => report.removed(&user_path, &what),
        Ok(what) => report.ok(&user_path, &what),
        Err(e) => return report.failed(&user_path, &format!("FAILED: {e}")),
    }
    if !req.dry_run {
        note_profile(journal, profile, &block);
    }
    if let Some(path) = &remove_xpi {
        match remove_recorded(path, req.dry_run, journal) {
            Ok(()) => report.removed(
                path,
                &format!("{would}removed (micoff's copy of the add-on)"),
            ),
            Err(e) => report.failed(path, &format!("FAILED: {e}")),
        }
    }
    if let Some(path) = &left_xpi {
        report.ok(
            path,
            "left alone: not the copy micoff made (changed since, or installed another way)",
        );
    }
    if let Some(text) = prefs_text.and_then(|t| prefs_js_without(t, &removed, &js.block.previous)) {
        match write_keeping_mode(&prefs_path, text.as_bytes(), 0o600, req.dry_run, journal) {
            Ok(()) => report.ok(
                &prefs_path,
                &format!(
                    "{would}updated (the values Firefox copied from micoff's lines removed, yours \
                     put back)"
                ),
            ),
            Err(e) => report.failed(&prefs_path, &format!("FAILED: {e}")),
        }
    }
}

/// Puts micoff's parts asked for into one profile.
fn install(
    req: &Request<'_>,
    profile: &Path,
    js: &UserJs,
    user_text: Option<&str>,
    prefs_text: Option<&str>,
    report: &mut Report<'_>,
    journal: &mut Journal,
) {
    let user_path = profile.join("user.js");
    let would = if req.dry_run { "would be " } else { "" };
    let xpi = req.addon.as_ref().map(|a| profile_copy(profile, &a.id));
    let mut block = js.block.clone();
    let mut defaults: BTreeMap<String, String> = BTreeMap::new();
    let mut copy: Option<(PathBuf, &[u8])> = None;
    if let (Some(path), Some(addon)) = (&xpi, &req.addon) {
        let (verdict, build) = signing_verdict(profile, &req.builds);
        if let Some(b) = &build {
            defaults = b.default_prefs();
        }
        match verdict {
            Err(why) => report.refused(profile, &format!("micoff's add-on not installed: {why}")),
            Ok(warning) => {
                if let Some(w) = warning {
                    report.note(&format!("{}: note: {w}", shown(profile)));
                }
                let Some((bytes, _)) = addon.xpi.as_ref() else {
                    return report.failed(profile, "FAILED: no xpi to install");
                };
                let bytes = bytes.as_slice();
                let sha = micoff_files::sha256_hex(bytes);
                let recorded = block.addon.as_ref().and_then(|a| a.sha256.clone());
                match read_copy(path) {
                    Err(e) => report.refused(path, &format!("left alone: {e}")),
                    Ok(Some(there))
                        if there != bytes
                            && recorded.as_deref()
                                != Some(micoff_files::sha256_hex(&there).as_str()) =>
                    {
                        report.refused(
                            path,
                            "left alone: micoff is already installed in this profile from another \
                             copy (e.g. addons.mozilla.org), not micoff-host's; remove it in \
                             about:addons to install this one",
                        );
                    }
                    Ok(_) => {
                        block.addon = Some(AddonRecord {
                            sha256: Some(sha),
                            prefs: js.addon_prefs(prefs_text, &defaults),
                        });
                        copy = Some((path.clone(), bytes));
                    }
                }
            }
        }
    }
    if req.release_prefs {
        block.release = js.release_prefs(prefs_text, &defaults, req.delay_ms);
        if block.release.is_empty() {
            report.note(&format!(
                "{}: the release pref is already as micoff would set it (your own setting): nothing to add",
                shown(profile)
            ));
        }
    }
    if let Some((path, bytes)) = copy {
        match write_copy(&path, bytes, req.dry_run, journal) {
            Ok(what) => report.ok(&path, &what),
            Err(e) => {
                report.failed(&path, &format!("FAILED: {e}"));
                block.addon = js.block.addon.clone();
            }
        }
    }
    let block = block.with_previous(&js.block, prefs_text);
    warn_signatures(profile, &js.block, &block, report);
    let new_user = js.render(&block);
    if Some(new_user.as_str()) == user_text || (user_text.is_none() && new_user.is_empty()) {
        if !block.is_empty() {
            report.ok(&user_path, "unchanged");
            if !req.dry_run {
                note_profile(journal, profile, &block);
            }
        }
        return;
    }
    match write_keeping_mode(&user_path, new_user.as_bytes(), 0o644, req.dry_run, journal) {
        Ok(()) => {
            report.ok(
                &user_path,
                &format!(
                    "{would}{}",
                    if user_text.is_some() {
                        "updated"
                    } else {
                        "written"
                    }
                ),
            );
            if req.dry_run {
                report.text(&unified(&shown(&user_path), user_text, &new_user));
            } else {
                note_profile(journal, profile, &block);
            }
        }
        Err(e) => report.failed(&user_path, &format!("FAILED: {e}")),
    }
}

/// Says so when the block turns Firefox's check of add-on signatures off in `profile` (it did not
/// before): every unsigned add-on can be installed there then, not only micoff's.
fn warn_signatures(profile: &Path, before: &Block, after: &Block, report: &mut Report<'_>) {
    if after.value(PREF_SIGNATURES) == Some("false")
        && before.value(PREF_SIGNATURES) != Some("false")
    {
        report.note(&format!(
            "warning: {}: {PREF_SIGNATURES} = false turns off Firefox's check of add-on signatures \
             in this profile: any unsigned add-on can then be installed there, not only micoff's \
             (needed for the unsigned xpi; `micoff-host uninstall` turns it back on)",
            shown(profile)
        ));
    }
}
