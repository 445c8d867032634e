//! `install`'s Firefox part (docs/design/firefox-install.md): `--firefox-release` (Firefox's own
//! microphone release, with micoff's delay) and `--firefox-xpi X` (micoff's unsigned add-on: ESR,
//! Developer Edition, Nightly), per profile (`user.js`, `extensions/`) or with `--system` in
//! `policies.json`; `--uninstall` takes out only what micoff added. Module map, top down: here
//! [`run`]; [`request`]; [`profile`], [`profiles`]; [`recorded`]; [`system`]; [`user_js`];
//! [`policies`] (pure); [`build`] (which Firefox, signing, defaults); [`xpi`]; [`report`],
//! [`write`]; [`prefs`] (names, the delay range, the pref-line parser).

pub mod build;
pub mod policies;
pub mod prefs;
pub mod profile;
pub mod profiles;
pub mod recorded;
pub mod report;
pub mod request;
pub mod system;
pub mod user_js;
pub mod write;
pub mod xpi;

use std::io::Write;

use micoff_exit::{EXIT_ERROR, EXIT_OK, EXIT_PARTIAL};
use micoff_files::record::Journal;
use prefs::PREF_ENABLED;
use report::Report;
use request::Request;

/// Applies the request, one line per file, through `journal`. Returns the exit code.
pub fn run(req: &Request<'_>, journal: &mut Journal, out: &mut dyn Write) -> i32 {
    run_into(req, journal, &mut Report::new(out))
}

/// [`run`] into `report`, which the caller reads after (uninstall: the files removed).
pub fn run_into(req: &Request<'_>, journal: &mut Journal, report: &mut Report<'_>) -> i32 {
    match req.system_root {
        Some(root) => system::run(req, root, report, journal),
        None => {
            for profile in &req.profiles {
                profile::run(req, profile, report, journal);
            }
        }
    }
    if report.total == 0 {
        let what = if req.uninstall {
            "nothing of micoff's found"
        } else if req.system_root.is_some() {
            "no Firefox found here (an executable in PATH or the usual install folders, or /etc/firefox)"
        } else {
            "no Firefox profile found (the profiles.ini of ~/.mozilla/firefox, the config home's \
             mozilla/firefox, the snap's; name one with --firefox-profile)"
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
