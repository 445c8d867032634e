//! The parts of micoff's record that writers undo by their own rules: a Firefox profile's block
//! (the installer's per-profile uninstall: micoff's lines out of user.js, the values Firefox copied
//! into prefs.js out and the user's own put back, the add-on copy away), a policy file's entries
//! (the installer's `--system` uninstall: its first run turns micoff's add-on entry into `blocked`,
//! the next takes it out), and the fixers (their own `--revert`).

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};

use micoff_doctor::cli::RootArg;
use micoff_doctor::facts::UserEnv;
use micoff_doctor::fix::recorded::OWNER as FIX;
use micoff_doctor::fix::System;
use micoff_doctor::{ClientShmArgs, FixArgs, FixCommand, GovernorArgs, HdaArgs, ModeArgs, Root};
use micoff_files::record::{Entry, Journal};
use micoff_files::shown_text;

use crate::env::SYSTEM_DATA_DIR;
use crate::firefox;
use crate::firefox::policies::{read_record, RECORD_NAME};
use crate::firefox::prefs::DEFAULT_DELAY_MS;
use crate::firefox::recorded::{OWNER_POLICIES, OWNER_PROFILE};
use crate::firefox::report::Report;
use crate::firefox::request::{Addon, Request};
use crate::firefox::user_js::UserJs;
use crate::firefox::xpi::{profile_copy, SYSTEM_XPI_NAME};
use crate::uninstall::tally::Tally;
use crate::uninstall::UninstallArgs;
use crate::InstallEnv;
use micoff_native::FIREFOX_EXTENSION_ID;

/// Undoes every part in `entries`; returns the files those parts put away themselves (their
/// entries are not undone a second time).
pub fn undo(
    entries: &[Entry],
    args: &UninstallArgs,
    env: &InstallEnv,
    sys: &mut dyn System,
    journal: &mut Journal,
    tally: &mut Tally<'_>,
) -> BTreeSet<PathBuf> {
    let mut handled = BTreeSet::new();
    let mut policies_done = false;
    for e in entries {
        let Entry::Part { owner, key, .. } = e else {
            continue;
        };
        match owner.as_str() {
            OWNER_PROFILE => {
                let profile = Path::new(key);
                handled.insert(profile_copy(profile, FIREFOX_EXTENSION_ID));
                profile_part(profile, args.dry_run, journal, tally);
            }
            OWNER_POLICIES if !policies_done => {
                policies_done = true;
                let data = env.root.join(SYSTEM_DATA_DIR);
                handled.insert(data.join(SYSTEM_XPI_NAME));
                handled.insert(data.join(RECORD_NAME));
                policies_part(env, Path::new(key), args.dry_run, journal, tally);
            }
            OWNER_POLICIES => {}
            FIX => fix_part(key, env, args.dry_run, sys, tally),
            _ => tally.left(&format!(
                "a part of micoff's record this micoff does not know ({}: {}), from a later \
                 micoff: left as it is",
                shown_text(owner),
                shown_text(key)
            )),
        }
    }
    handled
}

/// Firefox's part of an uninstall: micoff's add-on and release prefs out of `profiles`, or with
/// `root` out of the policy files.
pub fn firefox_request<'a>(
    profiles: Vec<PathBuf>,
    root: Option<&'a Path>,
    dry_run: bool,
) -> Request<'a> {
    Request {
        profiles,
        system_root: root,
        delay_ms: DEFAULT_DELAY_MS,
        release_prefs: true,
        addon: Some(Addon {
            id: FIREFOX_EXTENSION_ID.to_owned(),
            xpi: None,
        }),
        builds: Vec::new(),
        uninstall: true,
        dry_run,
    }
}

/// Firefox's part reporting on the tally's writer; the files it removed (a dry run: would) count
/// as gone for the folders' turn. Returns its exit code.
fn run_firefox(req: &Request<'_>, journal: &mut Journal, tally: &mut Tally<'_>) -> i32 {
    let mut report = Report::new(tally.out());
    let code = firefox::run_into(req, journal, &mut report);
    let removed = std::mem::take(&mut report.removed);
    for path in removed {
        tally.gone(path);
    }
    code
}

/// One profile's block.
fn profile_part(profile: &Path, dry_run: bool, journal: &mut Journal, tally: &mut Tally<'_>) {
    let req = firefox_request(vec![profile.to_path_buf()], None, dry_run);
    let code = run_firefox(&req, journal, tally);
    tally.part_code(code);
    if code == micoff_exit::EXIT_OK {
        tally.part_removed();
    }
    // The profile gone, or nothing of micoff's left in it: nothing to keep a record of.
    let user_js =
        micoff_files::read_regular_text(&profile.join("user.js"), micoff_files::MAX_TEXT_BYTES);
    let block_left = matches!(&user_js, Ok(Some(t)) if !UserJs::parse(t).block.is_empty());
    if !dry_run && !block_left {
        journal.forget_part(OWNER_PROFILE, &profile.to_string_lossy());
    }
}

/// The policy files' entries (all of them: one run of the installer's `--system` uninstall).
fn policies_part(
    env: &InstallEnv,
    policies: &Path,
    dry_run: bool,
    journal: &mut Journal,
    tally: &mut Tally<'_>,
) {
    let req = firefox_request(Vec::new(), Some(env.root.as_path()), dry_run);
    let code = run_firefox(&req, journal, tally);
    tally.part_code(code);
    let record = read_record(&env.root.join(SYSTEM_DATA_DIR).join(RECORD_NAME)).unwrap_or_default();
    let key = policies
        .strip_prefix(&env.root)
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default();
    if record.get(&key).is_some() && !dry_run {
        tally.left(&format!(
            "micoff's add-on entry in {} now blocks micoff, so that each Firefox removes it at its \
             next start (removing the entry alone would leave micoff installed); once every \
             user's Firefox has started, run `micoff-host uninstall --system` again to take it out",
            policies.display()
        ));
    } else if code == micoff_exit::EXIT_OK {
        tally.part_removed();
    }
}

/// A fixer: its own `--revert`.
fn fix_part(
    name: &str,
    env: &InstallEnv,
    dry_run: bool,
    sys: &mut dyn System,
    tally: &mut Tally<'_>,
) {
    if dry_run {
        tally.say(&format!(
            "would run: micoff-host fix {} --revert",
            shown_text(name)
        ));
        return;
    }
    match revert_fix(name, env, sys, tally.out()) {
        Some(code) => {
            tally.part_code(code);
            if code == micoff_exit::EXIT_OK {
                tally.part_removed();
            }
        }
        None => tally.left(&format!(
            "fix {} in micoff's record: a fix this micoff does not know; left as it is",
            shown_text(name)
        )),
    }
}

/// Runs `micoff-host fix <name> --revert` (hda and governor under `env`'s root: the system;
/// client-shm on the user's own file), reporting to `out`; `None` for a fixer this micoff does not
/// know.
pub fn revert_fix(
    name: &str,
    env: &InstallEnv,
    sys: &mut dyn System,
    out: &mut dyn Write,
) -> Option<i32> {
    let revert = ModeArgs {
        dry_run: false,
        apply: false,
        revert: true,
    };
    let system = RootArg {
        root: env.root.clone(),
    };
    let (what, root) = match name {
        "hda" => (
            FixCommand::Hda(HdaArgs {
                mode: revert,
                force: false,
                yes: false,
                reload: false,
                root: system,
            }),
            Root::new(&env.root),
        ),
        "governor" => (
            FixCommand::Governor(GovernorArgs {
                mode: revert,
                cpus: None,
                yes: false,
                root: system,
            }),
            Root::new(&env.root),
        ),
        "client-shm" => (
            FixCommand::ClientShm(ClientShmArgs {
                mode: revert,
                root: RootArg { root: "/".into() },
            }),
            Root::new(Path::new("/")),
        ),
        _ => return None,
    };
    let user = user_env(env, sys);
    let mut err = Vec::new();
    let code = micoff_doctor::cli::run_fix_env(&FixArgs { what }, &root, &user, sys, out, &mut err);
    let _ = out.write_all(&err);
    Some(code)
}

/// The user the fixers act for: this one, with the folders `env` knows.
pub fn user_env(env: &InstallEnv, sys: &dyn System) -> UserEnv {
    let user = if sys.euid() == 0 {
        Some("root".to_owned())
    } else {
        std::env::var("USER").ok().filter(|u| !u.is_empty())
    };
    UserEnv {
        user,
        home: Some(env.home.clone()),
        xdg_config_home: env.config_home.clone(),
        xdg_state_home: env.state_home.clone(),
        pulse_clientconfig: None,
    }
}
