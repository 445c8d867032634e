//! `micoff-host install`'s Firefox part (docs/design/firefox-install.md):
//!
//! - `--firefox-release`: Firefox's own release of the microphone while a track is disabled
//!   (`media.getusermedia.microphone.off_while_disabled.enabled`, off by default since Firefox
//!   84), with micoff's release delay;
//! - `--firefox-xpi X`: micoff's add-on, for good, from the packaged (unsigned) xpi: Firefox ESR,
//!   Developer Edition and Nightly only (release and beta Firefox accept only add-ons signed by
//!   addons.mozilla.org; the installer tells, per profile, from the build that last ran it).
//!
//! Per user (default) both go into each profile (micoff's block in `user.js`, micoff's copy of the
//! add-on in `extensions/`); with `--system` into `policies.json`, the add-on force-installed from
//! micoff's copy in `/usr/local/share/micoff`. `--uninstall` takes out what micoff added, nothing
//! else.
//!
//! Module map, from the top down:
//! - here, [`run`]: the request run per profile or `--system`, its summary and exit code;
//! - [`request`]: what is asked ([`request::Request`]);
//! - [`profile`]: one profile; [`profiles`]: which folders count as profiles (`profiles.ini`,
//!   the snap's, `--firefox-profile`), contained;
//! - [`recorded`]: what micoff's record says of a profile's block and a policy file's entries;
//! - [`system`]: `--system` (policies.json, micoff's record of its entries, the xpi copy);
//! - [`user_js`]: micoff's block in `user.js`, the `prefs.js` clean-up, the profile lock;
//! - [`policies`]: micoff's entries merged into and out of a `policies.json` text (pure);
//! - [`build`]: which Firefox ran a profile, whether it requires signed add-ons, its defaults;
//! - [`xpi`]: what an xpi says about itself, micoff's copies of it;
//! - [`report`], [`write`]: the report lines and tally; writes honouring dry-run;
//! - [`prefs`]: the pref names, micoff's delay range, the pref-line parser.

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
