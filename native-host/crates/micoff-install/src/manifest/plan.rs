//! Which manifest files `install` writes or removes: the folders each browser reads (user or
//! system-wide, a Flatpak browser's own), the browsers asked for or detected, and the notes for
//! what cannot be done.

use std::path::{Path, PathBuf};

use crate::args::InstallArgs;
use crate::env::InstallEnv;
use crate::sandboxed::{flatpak_note, snap_note};
use micoff_browsers::Browser;
use micoff_native::HOST_NAME;

/// One manifest file to write or remove.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub label: String,
    /// The browser it is for (`None`: `--target-dir`, a folder the user named).
    pub browser: Option<Browser>,
    pub firefox: bool,
    pub path: PathBuf,
}

/// What `install` will do.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    pub targets: Vec<Target>,
    /// Skipped browsers, Flatpak advice.
    pub notes: Vec<String>,
    /// Why each browser installed for was picked (`Chromium: /usr/bin/chromium in PATH`).
    pub detected: Vec<String>,
    /// Named browsers (`--browser`) that have no folder for this request (`--system` for Brave
    /// or Vivaldi): work asked for that cannot be done.
    pub impossible: Vec<Browser>,
    /// Uninstall over the known folders: report only the files found there.
    pub sweep: bool,
}

/// Works out the targets and the notes (skipped browsers, Flatpak advice) for `args`.
///
/// Install: the named browsers, else the detected ones. Uninstall: every known folder of the named
/// browsers, else of all of them, detected or not (a browser removed since, or never detected,
/// may still have our manifest).
pub fn plan(args: &InstallArgs, env: &InstallEnv) -> Result<Plan, String> {
    let file = format!("{HOST_NAME}.json");
    let mut plan = Plan::default();
    if let Some(dir) = &args.target_dir {
        let firefox = match args.browsers.as_slice() {
            [] => false,
            list if list.iter().all(|b| b.is_firefox()) => true,
            list if list.iter().all(|b| !b.is_firefox()) => false,
            _ => return Err("--target-dir takes one manifest: either Firefox or Chromium-family browsers, not both".into()),
        };
        let label = if firefox {
            "Firefox"
        } else {
            "Chromium family"
        };
        plan.targets.push(Target {
            label: format!("{label} ({})", dir.display()),
            browser: None,
            firefox,
            path: dir.join(file),
        });
        return Ok(plan);
    }
    let explicit = !args.browsers.is_empty();
    plan.sweep = args.uninstall;
    let mut browsers = if explicit {
        args.browsers.clone()
    } else {
        Browser::ALL.to_vec()
    };
    browsers.sort();
    browsers.dedup();
    for browser in browsers {
        if args.uninstall {
            let dirs = known_manifest_dirs(env, browser, args.system);
            if dirs.is_empty() && explicit {
                plan.notes.push(format!(
                    "{}: no system-wide manifest folder exists, so there is nothing to remove there",
                    browser.name()
                ));
            }
            plan.targets.extend(dirs.into_iter().map(|dir| Target {
                label: browser.name().to_owned(),
                browser: Some(browser),
                firefox: browser.is_firefox(),
                path: dir.join(&file),
            }));
            continue;
        }
        let detected = env.detect(browser);
        if let Some(app_dir) = &env.flatpak(browser) {
            plan.notes.push(flatpak_note(browser, app_dir));
        }
        if env.snap(browser).is_some() {
            plan.notes.extend(snap_note(browser));
        }
        if !explicit && detected.is_none() {
            continue;
        }
        match manifest_dir(env, browser, args.system) {
            Some(dir) => {
                if let Some(why) = &detected {
                    plan.detected.push(format!("{}: {why}", browser.name()));
                }
                plan.targets.push(Target {
                    label: browser.name().to_owned(),
                    browser: Some(browser),
                    firefox: browser.is_firefox(),
                    path: dir.join(&file),
                });
            }
            None if explicit => plan.impossible.push(browser),
            None => plan.notes.push(format!(
                "{}: no system-wide manifest folder is known; install per user instead (without --system)",
                browser.name()
            )),
        }
    }
    Ok(plan)
}

/// Every folder where our manifest for `browser` may be (user or system): the one `install`
/// writes, Firefox's other system folder (lib vs lib64), and a Flatpak browser's own folder.
pub fn known_manifest_dirs(env: &InstallEnv, browser: Browser, system: bool) -> Vec<PathBuf> {
    let facts = browser.facts();
    let mut dirs: Vec<PathBuf> = manifest_dir(env, browser, system).into_iter().collect();
    if system {
        dirs.extend(facts.system_manifest_dirs.iter().map(|d| env.root.join(d)));
    }
    if !system && !browser.is_firefox() {
        let app = env.home.join(".var/app").join(facts.flatpak_id);
        dirs.push(app.join("config").join(browser.user_manifest_dir()));
    }
    let mut unique = Vec::new();
    for d in dirs {
        if !unique.contains(&d) {
            unique.push(d);
        }
    }
    unique
}

/// The manifest folder for `browser` (user or system). System-wide: the browser's first folder,
/// unless it does not exist and the folder above another of its folders does (Firefox's
/// `/usr/lib64/mozilla` on a lib64 system).
pub fn manifest_dir(env: &InstallEnv, browser: Browser, system: bool) -> Option<PathBuf> {
    if !system {
        return Some(env.user_base(browser).join(browser.user_manifest_dir()));
    }
    let (first, others) = browser.facts().system_manifest_dirs.split_first()?;
    let first = env.root.join(first);
    if first.is_dir() {
        return Some(first);
    }
    let other = others
        .iter()
        .map(|d| env.root.join(d))
        .find(|d| d.parent().is_some_and(Path::is_dir));
    Some(other.unwrap_or(first))
}
