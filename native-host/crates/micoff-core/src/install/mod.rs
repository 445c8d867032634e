//! `micoff-host install`: the native messaging host manifests, and with the options micoff itself
//! into Chromium (its crx) and Firefox (its xpi, Firefox's own release of the microphone).
//!
//! Module map, from the top down (each part imports only what is below it):
//! - here, [`run`]: the entry: checks Firefox's part first, then runs the manifests, Chromium's
//!   part and Firefox's part, and folds their exit codes;
//! - [`args`]: the command line ([`InstallArgs`]);
//! - [`manifest`]: the host manifest: which files, its content and ownership check, write/remove;
//! - [`chromium`]: `--chromium-crx`, micoff into Chromium through its external extensions;
//! - [`firefox`]: `--firefox-release` / `--firefox-xpi`, per profile or `--system`;
//! - [`env`]: the machine as the installer sees it ([`InstallEnv`]: home, XDG folders, root,
//!   PATH, Flatpak apps), which browsers are installed, micoff's system data folder;
//! - the browsers and where each keeps things: micoff-browsers' table ([`Browser`]);
//! - [`zip`], [`json_text`]: one file out of a zip (crx, xpi, omni.ja); text edits of a JSON file
//!   that keep every other byte (an administrator's policies.json).

pub mod args;
pub mod chromium;
pub mod env;
pub mod firefox;
pub mod json_text;
pub mod manifest;
pub mod zip;

use std::io::Write;
use std::path::Path;

pub use args::InstallArgs;
pub use env::InstallEnv;
pub use micoff_browsers::Browser;

use crate::FIREFOX_EXTENSION_ID;
use args::CMD;
use firefox::request::{Addon, Request as FirefoxRequest};
use firefox::xpi::XpiInfo;
use micoff_exit::{EXIT_OK, EXIT_PARTIAL, EXIT_USAGE};

/// Runs `install` (the host manifests, then with `--chromium-crx` micoff into Chromium, then with
/// `--firefox-release` / `--firefox-xpi` Firefox's parts) against `env`, reporting to `out`, its
/// errors on `err` (micoff-exit's one error line, [`CMD`]).
/// Returns the worst exit code of the parts (`EXIT_PARTIAL` when they differ).
pub fn run(args: &InstallArgs, env: &InstallEnv, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    // Firefox's part is checked first: a bad xpi, or a policy file that would be refused, stops
    // the install before anything is written.
    let firefox = match firefox_request(args, env, err) {
        Ok(req) => req,
        Err(code) => return code,
    };
    if let Some(code) = firefox
        .as_ref()
        .and_then(|req| firefox::system::refuse_before_writing(req, out, err))
    {
        return code;
    }
    let mut code = manifest::run(args, env, out, err);
    if let Some(crx) = &args.chromium_crx {
        let req = chromium::Request {
            crx: crx.as_deref(),
            allow_other_key: args.allow_other_key,
            system: args.system,
            uninstall: args.uninstall,
            dry_run: args.dry_run,
        };
        code = worst(code, chromium::run(&req, env, out, err));
    }
    match firefox {
        Some(req) => worst(code, firefox::run(&req, out)),
        None => code,
    }
}

/// Firefox's part of `install` (`--firefox-release` / `--firefox-xpi`), `None` when not asked
/// for; `Err` with the exit code on a usage error (said on `err`).
fn firefox_request<'a>(
    args: &InstallArgs,
    env: &'a InstallEnv,
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
        Some(Some(path)) => match read_xpi(path) {
            Ok(xpi) => Some(Addon {
                id: FIREFOX_EXTENSION_ID.to_owned(),
                xpi: Some(xpi),
            }),
            Err(e) => {
                micoff_exit::report(
                    err,
                    CMD,
                    format!("--firefox-xpi {}: {e}", path.display()),
                    "give the xpi `npm run package` writes",
                );
                return Err(EXIT_USAGE);
            }
        },
    };
    Ok(Some(FirefoxRequest {
        profiles: if args.system {
            Vec::new()
        } else if args.firefox_profiles.is_empty() {
            firefox::profile::profiles(&env.home)
        } else {
            args.firefox_profiles.clone()
        },
        system_root: args.system.then_some(env.root.as_path()),
        delay_ms: args.release_delay_ms,
        release_prefs: args.firefox_release,
        addon,
        builds: firefox::build::builds_of(&env.firefox_executables()),
        uninstall: args.uninstall,
        dry_run: args.dry_run,
    }))
}

/// The xpi to install: an add-on whose id is micoff's (the id this host answers).
fn read_xpi(path: &Path) -> Result<(Vec<u8>, XpiInfo), String> {
    let bytes = std::fs::read(path).map_err(|e| e.to_string())?;
    let info = firefox::xpi::inspect(&bytes)?;
    if info.id != FIREFOX_EXTENSION_ID {
        return Err(format!(
            "add-on id {}, but this micoff-host answers only {FIREFOX_EXTENSION_ID}: not micoff's \
             add-on (use the xpi `npm run package` writes)",
            info.id
        ));
    }
    Ok((bytes, info))
}

/// Two parts' exit codes as one: either when the other is OK, else `EXIT_PARTIAL`.
fn worst(a: i32, b: i32) -> i32 {
    match (a, b) {
        (EXIT_OK, b) => b,
        (a, EXIT_OK) => a,
        _ => EXIT_PARTIAL,
    }
}
