//! The native messaging host manifest `org.micoff.host.json`, written (or removed) where each
//! browser looks for it (docs/test-rig.md); `install` is its one writer (the build and e2e rig run
//! it). Module map: [`plan`] (which files), [`content`] (what micoff writes, and whether a file is
//! still that), [`apply`] (one file written or removed); here, [`run`]: the step, line by line.
//! Writes go through `micoff-files`, are recorded, idempotent; `--uninstall` removes only a
//! manifest still as micoff wrote it and not one the Debian package owns; `--dry-run` shows diffs.

pub mod apply;
pub mod content;
pub mod plan;

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::args::{InstallArgs, CMD};
use crate::env::InstallEnv;
use crate::lookup::lookup;
use crate::package::PACKAGE;
use apply::{apply, Change, Outcome};
use content::manifest_json;
use micoff_browsers::Browser;
use micoff_exit::{EXIT_ERROR, EXIT_NOT_FOUND, EXIT_OK, EXIT_PARTIAL, EXIT_USAGE};
use micoff_files::diff::unified;
use micoff_files::record::Journal;
use micoff_files::shown;
use micoff_native::HOST_NAME;
use plan::{plan, Plan};

/// What the user still has to do for the extension itself, per browser family installed for:
/// the browsers whose extension side `install` cannot do (docs/design/firefox-install.md).
fn extension_steps(plan: &Plan, args: &InstallArgs) -> Vec<String> {
    let mut steps = Vec::new();
    if plan.targets.iter().any(|t| !t.firefox) && args.chromium_crx.is_none() {
        steps.push(
            "extension (Chrome/Chromium family): Chromium: run this again with --chromium-crx \
             <micoff-<version>.crx> (`npm run package` writes it in dist/) to install micoff for good. Google Chrome \
             and the other Chromium browsers take extensions from the Chrome Web Store only, or \
             unpacked in developer mode: open chrome://extensions, switch on Developer mode, Load \
             unpacked, pick dist/chrome."
                .to_owned(),
        );
    }
    if plan.targets.iter().any(|t| t.firefox) && args.firefox_xpi.is_none() {
        steps.push(
            "extension (Firefox): Firefox ESR / Developer Edition / Nightly: run this again with \
             --firefox-xpi <micoff-<version>.xpi> to install micoff for good in each profile \
             (--system: for every user, by policy). Release Firefox accepts only add-ons signed \
             by addons.mozilla.org: install micoff from there."
                .to_owned(),
        );
    }
    steps
}

/// What the micoff-host Debian package's system manifests already give the browsers a per-user
/// install is planned for (`None`: none of them): which browsers, through which files, and what
/// the per-user manifests are still for. Said first, before the files it would write.
pub fn package_covers(env: &InstallEnv, plan: &Plan) -> Option<String> {
    let mut covered: Vec<(Browser, PathBuf)> = Vec::new();
    let mut not_covered: Vec<Browser> = Vec::new();
    for browser in plan.targets.iter().filter_map(|t| t.browser) {
        let package = lookup(env, browser).and_then(|l| {
            l.found
                .into_iter()
                .find(|c| c.whose == "package" && c.problem.is_none())
        });
        match package {
            Some(c) => covered.push((browser, c.path)),
            None => not_covered.push(browser),
        }
    }
    if covered.is_empty() {
        return None;
    }
    let names = |list: &mut dyn Iterator<Item = Browser>| {
        list.map(Browser::name).collect::<Vec<_>>().join(", ")
    };
    let only_for = if not_covered.is_empty() {
        String::new()
    } else {
        format!(
            "{} (the package has no manifest for it that works), or ",
            names(&mut not_covered.iter().copied())
        )
    };
    Some(format!(
        "the {PACKAGE} package already gives {} the host through {}; a per-user install is only \
         needed for {only_for}a micoff-host other than the package's (a user's manifest comes \
         first for the browser, so it replaces the package's for this user)",
        names(&mut covered.iter().map(|(b, _)| *b)),
        covered
            .iter()
            .map(|(_, p)| shown(p))
            .collect::<Vec<_>>()
            .join(", "),
    ))
}

/// What the manifests name: the host (checked by `install::check`; `None` on uninstall) and the
/// local extension ids a Chromium manifest allows beside micoff's ([`content::manifest_json`]).
pub struct Names<'a> {
    pub host: Option<&'a Path>,
    pub local_ids: &'a [String],
}

/// Writes (or removes) the host manifests for `args` against `env` with `names`, through
/// `journal`, reporting to `out`, except the files
/// in `recorded` (`micoff-host uninstall`'s sweep for what an older micoff wrote: micoff's record
/// holds those, and its own steps have them; none for `install`). Returns the exit code.
pub fn run(
    args: &InstallArgs,
    env: &InstallEnv,
    names: &Names<'_>,
    recorded: &BTreeSet<PathBuf>,
    journal: &mut Journal,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    let (host, local_ids) = (names.host, names.local_ids);
    let mut plan = match plan(args, env) {
        Ok(plan) => plan,
        Err(e) => {
            micoff_exit::report(err, CMD, e, "see `micoff-host install --help`");
            return EXIT_USAGE;
        }
    };
    plan.targets.retain(|t| !recorded.contains(&t.path));
    if !args.uninstall && !args.system {
        if let Some(line) = package_covers(env, &plan) {
            let _ = writeln!(out, "note: {line}");
        }
    }
    for note in &plan.notes {
        let _ = writeln!(out, "note: {note}");
    }
    for why in &plan.detected {
        let _ = writeln!(out, "found {why}");
    }
    for browser in &plan.impossible {
        let _ = writeln!(
            out,
            "{}: has no system-wide manifest folder; install it per user instead (without --system)",
            browser.name()
        );
    }
    if plan.targets.is_empty() {
        if !plan.impossible.is_empty() {
            return EXIT_USAGE; // only impossible requests: a usage error, said above
        }
        if args.uninstall {
            let _ = writeln!(out, "nothing to remove");
            return EXIT_OK;
        }
        micoff_exit::report(
            err,
            CMD,
            "no supported browser found (by their executables in PATH and the usual install \
             folders, snaps, and their profiles)",
            &format!(
                "name one with --browser ({})",
                Browser::ALL.map(Browser::name).join(", ")
            ),
        );
        return EXIT_NOT_FOUND;
    }
    let would = if args.dry_run { "would be " } else { "" };
    let mut failed = 0;
    let mut edited = 0;
    let mut found = 0;
    let change = Change {
        host,
        uninstall: args.uninstall,
        dry_run: args.dry_run,
        root: &env.root,
        local_ids,
    };
    for target in &plan.targets {
        let (outcome, before) = apply(target, &change, journal);
        let what = match &outcome {
            Outcome::Wrote => format!("{would}written"),
            Outcome::Updated => format!("{would}updated"),
            Outcome::Unchanged => "unchanged".to_owned(),
            Outcome::Removed => format!("{would}removed"),
            // A sweep over every known folder lists only what it found.
            Outcome::Absent if plan.sweep => continue,
            Outcome::Absent => "not present".to_owned(),
            Outcome::NotOurs(why) => format!("left alone, not ours: {why}"),
            Outcome::Package(why) => {
                format!("left alone: {why}; the package puts it there and takes it away (dpkg)")
            }
            Outcome::Edited(why) => {
                edited += 1;
                format!("left alone: {why}; remove it yourself if you do not need it")
            }
            Outcome::Failed(e) => {
                failed += 1;
                format!("FAILED: {e}")
            }
        };
        found += 1;
        let _ = writeln!(out, "{}: {} {what}", target.label, shown(&target.path));
        if args.dry_run && matches!(outcome, Outcome::Wrote | Outcome::Updated) {
            if let Some(host) = host {
                let before = before.as_deref().map(String::from_utf8_lossy);
                let _ = write!(
                    out,
                    "{}",
                    unified(
                        &shown(&target.path),
                        before.as_deref(),
                        &manifest_json(target.firefox, host, local_ids)
                    )
                );
            }
        }
    }
    if plan.sweep && found == 0 {
        let _ = writeln!(
            out,
            "nothing to remove: no {HOST_NAME}.json in the {} known folders",
            plan.targets.len()
        );
    }
    if let (false, Some(host)) = (args.uninstall || failed == plan.targets.len(), host) {
        let _ = writeln!(out, "host: {}", shown(host));
        if args.target_dir.is_none() {
            for step in extension_steps(&plan, args) {
                let _ = writeln!(out, "{step}");
            }
        }
    }
    match failed {
        0 if plan.impossible.is_empty() && edited == 0 => EXIT_OK,
        n if n == plan.targets.len() => EXIT_ERROR,
        _ => EXIT_PARTIAL,
    }
}
