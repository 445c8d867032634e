//! `micoff-host install`'s Firefox part (docs/design/firefox-install.md):
//!
//! - `--firefox-release`: Firefox's own release of the microphone while a track is disabled
//!   (`media.getusermedia.microphone.off_while_disabled.enabled`, off by default since Firefox
//!   84), with micoff's release delay;
//! - `--firefox-xpi X`: micoff's add-on, for good, from the packaged (unsigned) xpi: Firefox ESR,
//!   Developer Edition and Nightly only (release and beta Firefox accept only add-ons signed by
//!   addons.mozilla.org; the installer tells, per profile, from the build that last ran it).
//!
//! Per user (default) both go into each profile (`firefox_profile`: micoff's block in `user.js`,
//! micoff's copy of the add-on in `extensions/`); with `--system` into `policies.json`
//! (`firefox_policies`), the add-on force-installed from micoff's copy in
//! `/usr/local/share/micoff`. `--uninstall` takes out what micoff added, nothing else. Writes go
//! through `micoff-files` (exclusive temporary file + rename, through symlinks).

pub mod build;
pub mod policies;
pub mod profile;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::install::firefox::build::Build;
use crate::install::firefox::policies::{Wanted, LEGACY_POLICY_DIRS, POLICY_DIR, RECORD_NAME};
use crate::install::firefox::profile::{prefs_js_without, running_pid, AddonRecord, Pref, UserJs};
use crate::install::SYSTEM_DATA_DIR;
use micoff_exit::{EXIT_ERROR, EXIT_OK, EXIT_PARTIAL};

/// The pref that turns Firefox's native release on.
pub const PREF_ENABLED: &str = "media.getusermedia.microphone.off_while_disabled.enabled";
/// Its delay (ms), Firefox's default 3000.
pub const PREF_DELAY: &str = "media.getusermedia.microphone.off_while_disabled.delay_ms";
/// micoff's default release delay (extension/src/shared/settings.ts `DEFAULT_SETTINGS`).
pub const DEFAULT_DELAY_MS: u32 = 3000;
/// micoff's release delay range (extension/src/shared/settings.ts `RELEASE_DELAY_*_MS`).
pub const MAX_DELAY_MS: u32 = 10_000;
/// Unsigned add-ons: honoured only by builds that do not require signing (`MOZ_REQUIRE_SIGNING`
/// off: ESR, Developer Edition, Nightly), in `user.js` as in the `Preferences` policy.
pub const PREF_SIGNATURES: &str = "xpinstall.signatures.required";
/// Install scopes whose dropped-in add-ons come disabled until the user confirms them.
pub const PREF_AUTO_DISABLE: &str = "extensions.autoDisableScopes";
/// Install scopes scanned for new or changed add-ons at every start (else only after an update).
pub const PREF_STARTUP_SCAN: &str = "extensions.startupScanScopes";
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
pub fn inspect_xpi(bytes: &[u8]) -> Result<XpiInfo, String> {
    let manifest =
        crate::install::zip::entry(bytes, "manifest.json", crate::install::zip::MAX_MANIFEST)?
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

/// The add-on part of a request.
pub struct Addon {
    /// The add-on id (micoff's, `FIREFOX_EXTENSION_ID`).
    pub id: String,
    /// The xpi to install (`None` on uninstall).
    pub xpi: Option<(Vec<u8>, XpiInfo)>,
}

/// What to change: profile folders (per user) or the policy folders under `root` (`--system`).
pub struct Request<'a> {
    pub profiles: Vec<PathBuf>,
    pub system_root: Option<&'a Path>,
    pub delay_ms: u32,
    /// The release prefs (`--firefox-release`).
    pub release_prefs: bool,
    /// micoff's add-on (`--firefox-xpi`).
    pub addon: Option<Addon>,
    /// The Firefox builds on this machine (for a profile that has not said which one ran it).
    pub builds: Vec<Build>,
    pub uninstall: bool,
    pub dry_run: bool,
}

/// Report lines and the tally behind the exit code.
struct Report<'o> {
    out: &'o mut dyn Write,
    total: usize,
    failed: usize,
    refused: usize,
}

impl Report<'_> {
    fn ok(&mut self, path: &Path, what: &str) {
        self.total += 1;
        let _ = writeln!(self.out, "Firefox: {} {what}", path.display());
    }

    /// Work asked for that failed (an I/O error).
    fn failed(&mut self, path: &Path, what: &str) {
        self.total += 1;
        self.failed += 1;
        let _ = writeln!(self.out, "Firefox: {} {what}", path.display());
    }

    /// Work asked for and not done on purpose: what is there is not micoff's, or cannot work.
    fn refused(&mut self, path: &Path, what: &str) {
        self.total += 1;
        self.refused += 1;
        let _ = writeln!(self.out, "Firefox: {} {what}", path.display());
    }

    /// Done, but not what was asked: the clean-up of a folder micoff wrote into before. Printed, not
    /// counted, so it never stands for an install that found no Firefox.
    fn aside(&mut self, path: &Path, what: &str) {
        let _ = writeln!(self.out, "Firefox: {} {what}", path.display());
    }

    fn note(&mut self, text: &str) {
        let _ = writeln!(self.out, "Firefox: {text}");
    }
}

/// Writes `text` to `path` keeping the file's mode (new files `new_mode`); dry-run writes nothing.
fn write_keeping_mode(
    path: &Path,
    text: &[u8],
    new_mode: u32,
    dry_run: bool,
) -> Result<(), String> {
    if dry_run {
        return Ok(());
    }
    let mode = micoff_files::read_with_mode(path).map_or(new_mode, |(_, m)| m);
    micoff_files::write_atomic(path, text, mode).map_err(|e| e.to_string())
}

fn remove(path: &Path, dry_run: bool) -> Result<(), String> {
    if dry_run {
        return Ok(());
    }
    micoff_files::remove(path).map_err(|e| e.to_string())
}

/// Applies the request, one line per file. Returns the exit code.
pub fn run(req: &Request<'_>, out: &mut dyn Write) -> i32 {
    let mut report = Report {
        out,
        total: 0,
        failed: 0,
        refused: 0,
    };
    match req.system_root {
        Some(root) => run_system(req, root, &mut report),
        None => {
            for profile in &req.profiles {
                run_profile(req, profile, &mut report);
            }
        }
    }
    if report.total == 0 {
        let what = if req.uninstall {
            "nothing of micoff's found"
        } else if req.system_root.is_some() {
            "no Firefox found here (an executable in PATH or the usual install folders, or /etc/firefox)"
        } else {
            "no Firefox profile found (~/.mozilla/firefox/profiles.ini; name one with --firefox-profile)"
        };
        report.note(what);
        return if req.uninstall { EXIT_OK } else { EXIT_ERROR };
    }
    if !req.uninstall && report.failed + report.refused < report.total {
        let when = if req.system_root.is_some() {
            "at Firefox's next start"
        } else {
            "at Firefox's next start with that profile (restart a Firefox that is running)"
        };
        if let Some((_, info)) = req.addon.as_ref().and_then(|a| a.xpi.as_ref()) {
            report.note(&format!(
                "micoff {} ({}) is installed {when}, enabled; ESR, Developer Edition and Nightly \
                 only (release Firefox accepts only add-ons signed by addons.mozilla.org)",
                info.version, info.id
            ));
        }
        if req.release_prefs {
            report.note(&format!(
                "release pref: {PREF_ENABLED} = true, delay {} ms, {when}",
                req.delay_ms
            ));
        }
    }
    if req.uninstall
        && !req.dry_run
        && req.addon.is_some()
        && req.system_root.is_none()
        && report.failed + report.refused < report.total
    {
        report.note("Firefox removes micoff at its next start");
    }
    // A refusal is work left undone, like a failure elsewhere: partial (the host manifest and any
    // other profile are done); an error everywhere is an error.
    match (report.failed, report.refused) {
        (0, 0) => EXIT_OK,
        (f, _) if f == report.total => EXIT_ERROR,
        _ => EXIT_PARTIAL,
    }
}

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

fn xpi_path(profile: &Path, id: &str) -> PathBuf {
    profile.join("extensions").join(format!("{id}.xpi"))
}

/// One profile: install or uninstall the parts asked for.
fn run_profile(req: &Request<'_>, profile: &Path, report: &mut Report<'_>) {
    if !profile.is_dir() {
        if !req.uninstall {
            report.failed(profile, "FAILED: no such profile folder");
        }
        return;
    }
    let user_path = profile.join("user.js");
    let prefs_path = profile.join("prefs.js");
    let user_text = std::fs::read_to_string(&user_path).ok();
    let prefs_text = std::fs::read_to_string(&prefs_path).ok();
    let js = UserJs::parse(user_text.as_deref().unwrap_or(""));
    let mut block = js.block.clone();
    let would = if req.dry_run { "would be " } else { "" };
    let xpi = req.addon.as_ref().map(|a| xpi_path(profile, &a.id));

    if req.uninstall {
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
            if let Ok(bytes) = std::fs::read(path) {
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
            write_keeping_mode(&user_path, new_user.as_bytes(), 0o644, req.dry_run)
                .map(|()| format!("{would}updated (micoff's lines removed, yours kept)"))
        };
        match r {
            Ok(what) => report.ok(&user_path, &what),
            Err(e) => return report.failed(&user_path, &format!("FAILED: {e}")),
        }
        if let Some(path) = &remove_xpi {
            match remove(path, req.dry_run) {
                Ok(()) => report.ok(
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
        if let Some(text) = prefs_text
            .as_deref()
            .and_then(|t| prefs_js_without(t, &removed))
        {
            match write_keeping_mode(&prefs_path, text.as_bytes(), 0o600, req.dry_run) {
                Ok(()) => report.ok(
                    &prefs_path,
                    &format!(
                        "{would}updated (the values Firefox copied from micoff's lines removed)"
                    ),
                ),
                Err(e) => report.failed(&prefs_path, &format!("FAILED: {e}")),
            }
        }
        return;
    }

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
                    report.note(&format!("{}: note: {w}", profile.display()));
                }
                let Some((bytes, _)) = addon.xpi.as_ref() else {
                    return report.failed(profile, "FAILED: no xpi to install");
                };
                let bytes = bytes.as_slice();
                let sha = micoff_files::sha256_hex(bytes);
                let recorded = block.addon.as_ref().and_then(|a| a.sha256.clone());
                match std::fs::read(path) {
                    Ok(there)
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
                    _ => {
                        block.addon = Some(AddonRecord {
                            sha256: Some(sha),
                            prefs: js.addon_prefs(prefs_text.as_deref(), &defaults),
                        });
                        copy = Some((path.clone(), bytes));
                    }
                }
            }
        }
    }
    if req.release_prefs {
        block.release = js.release_prefs(prefs_text.as_deref(), &defaults, req.delay_ms);
        if block.release.is_empty() {
            report.note(&format!(
                "{}: the release pref is already as micoff would set it (your own setting): nothing to add",
                profile.display()
            ));
        }
    }
    if let Some((path, bytes)) = copy {
        let existing = std::fs::read(&path).ok();
        let r = if existing.as_deref() == Some(bytes) {
            Ok("unchanged".to_owned())
        } else {
            write_keeping_mode(&path, bytes, 0o644, req.dry_run).map(|()| {
                format!(
                    "{would}{} (micoff's copy of the add-on)",
                    if existing.is_some() {
                        "updated"
                    } else {
                        "written"
                    }
                )
            })
        };
        match r {
            Ok(what) => report.ok(&path, &what),
            Err(e) => {
                report.failed(&path, &format!("FAILED: {e}"));
                block.addon = js.block.addon.clone();
            }
        }
    }
    let new_user = js.render(&block);
    if Some(&new_user) == user_text.as_ref() || (user_text.is_none() && new_user.is_empty()) {
        if !block.is_empty() {
            report.ok(&user_path, "unchanged");
        }
        return;
    }
    match write_keeping_mode(&user_path, new_user.as_bytes(), 0o644, req.dry_run) {
        Ok(()) => report.ok(
            &user_path,
            &format!(
                "{would}{}",
                if user_text.is_some() {
                    "updated"
                } else {
                    "written"
                }
            ),
        ),
        Err(e) => report.failed(&user_path, &format!("FAILED: {e}")),
    }
}

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
    match std::fs::read_to_string(path) {
        Ok(t) => Ok(Some(t)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("cannot be read ({e})")),
    }
}

/// `--system` install, before anything is written (the host manifests included): when the policy
/// file Firefox reads would be refused (an administrator's own value for an entry micoff needs, a
/// file that is not a policy file), says so and returns the exit code; the install then changes
/// nothing at all. `None`: go ahead.
pub fn refuse_before_writing(req: &Request<'_>, out: &mut dyn Write) -> Option<i32> {
    let root = req.system_root.filter(|_| !req.uninstall)?;
    let path = root.join(POLICY_DIR).join("policies.json");
    let text = match read_policy_text(&path) {
        Ok(t) => t?,
        Err(e) => {
            let _ = writeln!(out, "Firefox: {} left alone: {e}", path.display());
            let _ = writeln!(
                out,
                "error: nothing installed (no host manifest, no policy entry, no copy of the add-on): \
                 make {} readable policy JSON (UTF-8) first, then run this again",
                path.display()
            );
            return Some(EXIT_PARTIAL);
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
    let _ = writeln!(out, "Firefox: {} left alone: {e}", path.display());
    let _ = writeln!(
        out,
        "error: nothing installed (no host manifest, no policy entry, no copy of the add-on): \
         settle that entry in {} first, then run this again",
        path.display()
    );
    Some(EXIT_PARTIAL)
}

/// `--system`: the policy files, micoff's record of its entries, micoff's copy of the xpi.
fn run_system(req: &Request<'_>, root: &Path, report: &mut Report<'_>) {
    let would = if req.dry_run { "would be " } else { "" };
    let data_dir = root.join(SYSTEM_DATA_DIR);
    let record_path = data_dir.join(RECORD_NAME);
    let (xpi_copy, wanted) = system_wanted(req, root);
    let mut record = match policies::read_record(&record_path) {
        Ok(r) => r,
        Err(e) => return report.failed(&record_path, &format!("FAILED: {e}")),
    };
    let mut writes: Vec<(PathBuf, Option<String>)> = Vec::new();
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
            report.note(&format!("{}: {l}", path.display()));
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
            Some(text) => writes.push((path, text)),
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
            let existing = std::fs::read(&xpi_copy).ok();
            let r = if existing.as_deref() == Some(bytes.as_slice()) {
                Ok("unchanged".to_owned())
            } else {
                write_keeping_mode(&xpi_copy, bytes, 0o644, req.dry_run).map(|()| {
                    format!(
                        "{would}{} (micoff's copy of the add-on)",
                        if existing.is_some() {
                            "updated"
                        } else {
                            "written"
                        }
                    )
                })
            };
            match r {
                Ok(what) => report.ok(&xpi_copy, &what),
                Err(e) => return report.failed(&xpi_copy, &format!("FAILED: {e}")),
            }
        }
    }
    for (path, text) in writes {
        let r = match text {
            None => remove(&path, req.dry_run)
                .map(|()| format!("{would}removed (only micoff's entries were in it)")),
            Some(t) => write_keeping_mode(&path, t.as_bytes(), 0o644, req.dry_run).map(|()| {
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
        match r {
            Ok(what) if !path.starts_with(root.join(POLICY_DIR)) => report.aside(&path, &what),
            Ok(what) => report.ok(&path, &what),
            Err(e) => report.failed(&path, &format!("FAILED: {e}")),
        }
    }
    if req.uninstall && req.addon.is_some() {
        // micoff's own folder: its copy goes once no entry of micoff's points at it.
        if let Ok(bytes) = std::fs::read(&xpi_copy) {
            match inspect_xpi(&bytes) {
                Ok(_) => match remove(&xpi_copy, req.dry_run) {
                    Ok(()) => report.ok(
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
        let r = if record.is_empty() {
            if record_path.exists() {
                micoff_files::remove(&record_path).map_err(|e| e.to_string())
            } else {
                Ok(())
            }
        } else {
            micoff_files::write_atomic(
                &record_path,
                policies::record_text(&record).as_bytes(),
                0o644,
            )
            .map_err(|e| e.to_string())
        };
        if let Err(e) = r {
            report.failed(
                &record_path,
                &format!("FAILED (micoff's record of its policy entries): {e}"),
            );
        }
    }
}
