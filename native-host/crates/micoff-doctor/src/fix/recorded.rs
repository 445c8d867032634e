//! The fixers in micoff's record: a fix applied is a part `micoff-host uninstall` undoes by the
//! fixer's own `--revert` (its file, sealed and with its backup, stays the fixer's to put away:
//! an edited client.conf keeps the user's lines). `fix hda` and `fix governor` change the system
//! (the system's record, `/var/lib/micoff`, under the root); `fix client-shm` the user's file (the
//! user's record, `$XDG_STATE_HOME/micoff`, under the root).

use std::io::Write;
use std::path::PathBuf;

use micoff_files::record::{system_record, user_record, Journal};

use crate::facts::UserEnv;
use crate::root::Root;

/// The record's owner of the fixers' parts; the key is the fixer's name (`hda`, `client-shm`,
/// `governor`).
pub const OWNER: &str = "fix";

/// The system's record, under `root`.
pub fn system(root: &Root) -> Option<PathBuf> {
    Some(system_record(root.base()))
}

/// The user's record, under `root` (`None`: no home known).
pub fn user(root: &Root, env: &UserEnv) -> Option<PathBuf> {
    env.state_dir().map(|s| root.path(user_record(&s)))
}

/// Notes that fixer `name` is applied (`detail`: what it changed), or with `None` that it is no
/// longer; a record that cannot be written is said on `out` (the fix stands, `--revert` still
/// undoes it).
pub fn note(
    record: Option<PathBuf>,
    name: &str,
    detail: Option<serde_json::Value>,
    out: &mut dyn Write,
) {
    let Some(record) = record else {
        return;
    };
    let mut journal = Journal::at(record, &format!("fix {name}"));
    match detail {
        Some(d) => journal.part(OWNER, name, d),
        None => journal.forget_part(OWNER, name),
    }
    if let Err(e) = journal.commit() {
        let _ = writeln!(
            out,
            "note: micoff's record of what it wrote was not updated ({e}): `micoff-host \
             uninstall` will not know of this; `fix {name} --revert` still undoes it"
        );
    }
}
