//! `micoff-host uninstall [--system] [--dry-run]`: undoes everything micoff wrote, from micoff's
//! record (micoff-files' `record`), not from guesses (docs/design/uninstall.md). In order: the
//! parts writers undo by their own rules ([`parts`]: Firefox profiles' user.js blocks, policy
//! entries, each fixer's `--revert`); every recorded file still exactly as written (one changed
//! since is the user's: left and named); the folders micoff made, when empty; what an older micoff
//! wrote without a record ([`legacy`]). Exits 3 when it had to leave something; never touches what
//! the Debian package owns. Module map: [`args`], [`tally`] (the report, its exit code), here
//! [`run`].

pub mod args;
pub mod legacy;
pub mod parts;
pub mod tally;

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};

pub use args::UninstallArgs;
use micoff_doctor::fix::System;
use micoff_files::record::journal::load;
use micoff_files::record::undo::{undo_file, undo_folder, FileUndone, FolderUndone};
use micoff_files::record::{Entry, Journal};
use micoff_files::shown;

use crate::package::owned_by_package;
use crate::InstallEnv;
use tally::Tally;

/// The command micoff's record names for uninstall's own notes.
pub const BY: &str = "uninstall";
/// The subcommand's name in its error lines.
const CMD: &str = "uninstall";

/// Runs `uninstall` against `env`, the fixers' outside world through `sys`, its report on `out`
/// and its errors on `err` (micoff-exit's one error line); returns the exit code.
pub fn run(
    args: &UninstallArgs,
    env: &InstallEnv,
    sys: &mut dyn System,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    let record_path = env.record(args.system);
    if args.system && !args.dry_run && sys.euid() != 0 && env.root == Path::new("/") {
        micoff_exit::report(
            err,
            CMD,
            "--system changes system folders (/etc, /usr/lib, /var/lib/micoff)",
            "run it as root (sudo micoff-host uninstall --system), or see what it would do with \
             --dry-run",
        );
        return micoff_exit::EXIT_ERROR;
    }
    let mut tally = Tally::new(out, args.dry_run);
    let record = match load(&record_path) {
        Ok(r) => r,
        Err(e) => {
            tally.left(&format!(
                "micoff's record {} cannot be read ({e}): what it lists is left as it is",
                shown(&record_path)
            ));
            None
        }
    };
    let mut journal = if args.dry_run {
        Journal::unrecorded(BY)
    } else {
        Journal::at(record_path.clone(), BY).finishing()
    };
    match &record {
        Some(_) => tally.say(&format!("micoff's record: {}", shown(&record_path))),
        None => tally.say(&format!(
            "no record of micoff's at {} (nothing recorded, or written by an older micoff)",
            shown(&record_path)
        )),
    }
    let entries = record.map(|r| r.entries).unwrap_or_default();
    let handled = parts::undo(&entries, args, env, sys, &mut journal, &mut tally);
    undo_files(&entries, &handled, args, env, &mut journal, &mut tally);
    undo_folders(&entries, args.dry_run, &mut journal, &mut tally);
    legacy::sweep(&entries, args, env, sys, &mut journal, &mut tally);
    if let Some(code) = crate::commit(journal, CMD, err) {
        tally.failed_code(code);
    }
    tally.finish()
}

/// Every recorded file not already put away by its part (`handled`).
fn undo_files(
    entries: &[Entry],
    handled: &BTreeSet<PathBuf>,
    args: &UninstallArgs,
    env: &InstallEnv,
    journal: &mut Journal,
    tally: &mut Tally<'_>,
) {
    for e in entries {
        let Entry::File {
            path, role, sha256, ..
        } = e
        else {
            continue;
        };
        if handled.contains(path) {
            continue;
        }
        if let Some(why) = owned_by_package(&env.root, path) {
            journal.forget_file(path);
            tally.kept(path, &format!("left alone: {why}"));
            continue;
        }
        match undo_file(path, sha256, journal, args.dry_run) {
            FileUndone::Removed => tally.removed(path, role),
            FileUndone::Gone => {}
            FileUndone::Kept(why) => tally.left_file(path, &why),
            FileUndone::Failed(why) => tally.left_file(path, &format!("FAILED: {why}")),
        }
    }
}

/// The folders micoff made, deepest first, when empty (a dry run counts what it would have
/// removed first).
fn undo_folders(entries: &[Entry], dry_run: bool, journal: &mut Journal, tally: &mut Tally<'_>) {
    let mut folders: Vec<&Path> = entries
        .iter()
        .filter_map(|e| match e {
            Entry::Folder { path, .. } => Some(path.as_path()),
            _ => None,
        })
        .collect();
    folders.sort_by_key(|p| std::cmp::Reverse(p.components().count()));
    let mut gone: BTreeSet<PathBuf> = tally.removed_paths().clone();
    for folder in folders {
        let would_be_empty = dry_run
            && std::fs::read_dir(folder)
                .is_ok_and(|d| d.flatten().all(|e| gone.contains(&e.path())));
        match undo_folder(folder, journal, dry_run, would_be_empty) {
            FolderUndone::Removed => {
                gone.insert(folder.to_path_buf());
                tally.removed_folder(folder);
            }
            FolderUndone::Gone | FolderUndone::NotEmpty => {}
            FolderUndone::Failed(why) => tally.left_file(folder, &format!("FAILED: {why}")),
        }
    }
}
