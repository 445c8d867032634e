//! micoff-install: `micoff-host install` ([`run`]: everything given checked first, then the host
//! manifests, Chromium's and Firefox's parts through one journal of micoff's record) and
//! `micoff-host uninstall` ([`uninstall`]: all of it undone from that record).
//!
//! Module map, top down: [`args`], [`check`] (before anything is written), [`manifest`] (the host
//! manifests), [`chromium`] (crx), [`firefox`] (xpi, prefs, profiles, policies), [`package`] (what the
//! Debian package owns), [`lookup`] (which manifest each browser uses), [`sandboxed`] (snap, Flatpak),
//! [`env`] (the machine as the installer sees it), [`zip`] and [`json_text`] (file-level helpers).

pub mod args;
pub mod check;
pub mod chromium;
pub mod env;
pub mod firefox;
pub mod json_text;
pub mod lookup;
pub mod manifest;
pub mod package;
pub mod sandboxed;
pub mod uninstall;
pub mod zip;

use std::collections::BTreeSet;
use std::io::Write;

pub use args::InstallArgs;
pub use env::InstallEnv;
pub use micoff_browsers::Browser;
use micoff_files::record::Journal;
use micoff_files::shown;

use args::CMD;
use firefox::request::{Addon, Request as FirefoxRequest};
use micoff_exit::{EXIT_ERROR, EXIT_OK, EXIT_PARTIAL, EXIT_USAGE};
use micoff_native::FIREFOX_EXTENSION_ID;

/// The command micoff's record names for what `install` wrote.
pub const BY: &str = "install";

/// Runs `install` (the host manifests, then with `--chromium-crx` micoff into Chromium, then with
/// `--firefox-release` / `--firefox-xpi` Firefox's parts) against `env`, reporting to `out`, its
/// errors on `err` (micoff-exit's one error line, [`CMD`]).
/// Returns the worst exit code of the parts (`EXIT_PARTIAL` when they differ).
pub fn run(args: &InstallArgs, env: &InstallEnv, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    // Everything given is checked first: a bad xpi, crx or host path, a profile that is not one,
    // or a policy file that would be refused stops the install before anything is written.
    let firefox = match firefox_request(args, env, out, err) {
        Ok(req) => req,
        Err(code) => return code,
    };
    if let Some(code) = firefox
        .as_ref()
        .and_then(|req| firefox::system::refuse_before_writing(req, out, err))
    {
        return code;
    }
    let checked = match check::check(args, out, err) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let mut journal = if args.dry_run {
        Journal::unrecorded(BY)
    } else {
        Journal::at(env.record(args.system), BY)
    };
    let none = BTreeSet::new();
    let local_ids = local_ids(args, env, checked.crx.as_ref().map(|(_, info)| info));
    let names = manifest::Names {
        host: checked.host.as_deref(),
        local_ids: &local_ids,
    };
    let mut code = manifest::run(args, env, &names, &none, &mut journal, out, err);
    if args.chromium_crx.is_some() {
        let req = chromium::Request {
            crx: checked.crx.as_ref().map(|(b, i)| (b.as_slice(), i)),
            system: args.system,
            uninstall: args.uninstall,
            dry_run: args.dry_run,
            recorded: &none,
        };
        code = worst(code, chromium::run(&req, env, &mut journal, out, err));
    }
    if let Some(req) = firefox {
        code = worst(code, firefox::run(&req, &mut journal, out));
    }
    commit(journal, CMD, err).map_or(code, |c| worst(code, c))
}

/// The extension ids the Chromium host manifests allow beside micoff's release id: none in a
/// packager's `--target-dir`; the crx being installed when it is signed with another key (a local
/// or a fork's key; the release crx replaces such a copy, so none then); else those of the crx
/// copies already in place (`chromium::external::local_ids`: a later `install` keeps allowing the
/// extension installed from them, an uninstall recognises the manifest written for them).
fn local_ids(
    args: &InstallArgs,
    env: &InstallEnv,
    crx: Option<&chromium::crx::CrxInfo>,
) -> Vec<String> {
    if args.target_dir.is_some() {
        return Vec::new();
    }
    match crx {
        Some(info) if info.id == micoff_native::CHROME_EXTENSION_ID => Vec::new(),
        Some(info) => vec![info.id.clone()],
        None if args.uninstall => chromium::external::local_ids(&env.data_home(), &env.root),
        None => {
            let copy = chromium::external::copy_path(&env.data_home(), &env.root, args.system);
            chromium::external::local_id(&copy).into_iter().collect()
        }
    }
}

/// Puts what a command wrote into micoff's record; `Some(EXIT_PARTIAL)` (said on `err`, as `cmd`'s
/// error line) when the record could not be written: the files are there, but
/// `micoff-host uninstall` will not know of them.
pub fn commit(journal: Journal, cmd: &str, err: &mut dyn Write) -> Option<i32> {
    let record = journal.record().map(shown).unwrap_or_default();
    match journal.commit() {
        Ok(()) => None,
        Err(e) => {
            micoff_exit::report(
                err,
                cmd,
                format!("micoff's record of what it wrote ({record}) was not updated: {e}"),
                "`micoff-host uninstall` cannot undo this run: check that folder's permissions",
            );
            Some(EXIT_PARTIAL)
        }
    }
}

/// Firefox's part of `install` (`--firefox-release` / `--firefox-xpi`), `None` when not asked
/// for; `Err` with the exit code on a usage error (said on `err`): a bad xpi, a profile that is
/// not one.
fn firefox_request<'a>(
    args: &InstallArgs,
    env: &'a InstallEnv,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Option<FirefoxRequest<'a>>, i32> {
    if !args.firefox_release && args.firefox_xpi.is_none() {
        return Ok(None);
    }
    let addon = match &args.firefox_xpi {
        None => None,
        Some(_) if args.uninstall => Some(Addon {
            id: FIREFOX_EXTENSION_ID.to_owned(),
            xpi: None,
        }),
        Some(None) => {
            micoff_exit::report(
                err,
                CMD,
                "--firefox-xpi needs the xpi to install",
                "give the one `npm run package` writes (dist/micoff-<version>.xpi)",
            );
            return Err(EXIT_USAGE);
        }
        Some(Some(path)) => match check::packages::read_xpi(path) {
            Ok(xpi) => Some(Addon {
                id: FIREFOX_EXTENSION_ID.to_owned(),
                xpi: Some(xpi),
            }),
            Err(e) => {
                micoff_exit::report(err, CMD, e, "give the xpi `npm run package` writes");
                return Err(EXIT_USAGE);
            }
        },
    };
    let profiles = if args.system {
        Vec::new()
    } else if args.firefox_profiles.is_empty() {
        let (found, notes) = firefox::profiles::profiles(env);
        for n in notes {
            let _ = writeln!(out, "Firefox: note: {n}");
        }
        if found.is_empty() && !args.uninstall {
            micoff_exit::report(
                err,
                CMD,
                format!(
                    "no Firefox profile found (looked in {}); nothing written",
                    firefox::profiles::profiles_ini_shown(env)
                ),
                "start Firefox once (it makes its profile), or name one with --firefox-profile",
            );
            return Err(EXIT_ERROR);
        }
        found
    } else {
        for p in &args.firefox_profiles {
            if let Err(why) = firefox::profiles::check_profile(p) {
                micoff_exit::report(
                    err,
                    CMD,
                    format!("--firefox-profile {}: {why}; nothing written", shown(p)),
                    "give a Firefox profile folder (about:profiles lists them)",
                );
                return Err(EXIT_USAGE);
            }
        }
        args.firefox_profiles.clone()
    };
    Ok(Some(FirefoxRequest {
        profiles,
        system_root: args.system.then_some(env.root.as_path()),
        delay_ms: args.release_delay_ms,
        release_prefs: args.firefox_release,
        addon,
        builds: firefox::build::builds_of(&env.firefox_executables()),
        uninstall: args.uninstall,
        dry_run: args.dry_run,
    }))
}

/// Two parts' exit codes as one: either when the other is OK, else `EXIT_PARTIAL`.
pub fn worst(a: i32, b: i32) -> i32 {
    match (a, b) {
        (EXIT_OK, b) => b,
        (a, EXIT_OK) => a,
        _ => EXIT_PARTIAL,
    }
}
