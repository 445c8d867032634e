//! micoff's record of what it wrote: one file per user (`$XDG_STATE_HOME/micoff/record.json`,
//! `~/.local/state/micoff/record.json` by default) and one for the system
//! (`/var/lib/micoff/record.json`, written as root), from which `micoff-host uninstall` undoes
//! everything, without guessing from file names (docs/design/uninstall.md).
//!
//! Every write micoff makes for a user or the system goes through a [`Journal`]: it writes the
//! file (micoff-files' one way, [`crate::write_atomic`]) and notes what it wrote, and at the end of
//! the command the notes go into the record, under a lock, merged with what other micoff
//! processes recorded meanwhile ([`Journal::commit`]).
//!
//! What a record holds ([`Entry`]):
//! - a file micoff wrote: its path, its role (`host manifest`, `latency wrapper`, ...), the
//!   command that wrote it, and the sha256 of what was written. Undone here ([`undo`]): removed
//!   while it is exactly that, left and named when it was edited since (the user's now);
//! - a folder micoff made to hold one: removed when it is empty again;
//! - a part a writer undoes by its own rules (`firefox-profile`: the user.js block, each pref with
//!   the value it had before, the add-on copy; `firefox-policies`: each policy entry; `fix`: a
//!   fixer, undone by its own `--revert`): its owner, a key and the writer's own detail (JSON).
//!
//! Module map: [`entry`] (the record's content, [`RECORD_FORMAT`]), [`journal`] (writing through
//! it, and the commit), [`undo`] (putting a recorded file or folder away).

pub mod entry;
pub mod journal;
pub mod undo;

use std::path::{Path, PathBuf};

pub use entry::{Entry, Place, Record, RECORD_FORMAT};
pub use journal::Journal;

/// The record's file name, in micoff's state folder.
pub const RECORD_FILE: &str = "record.json";

/// micoff's system state folder, relative to the root: the record of what `--system` wrote.
pub const SYSTEM_STATE_DIR: &str = "var/lib/micoff";

/// A user's record: `<state home>/micoff/record.json` (`$XDG_STATE_HOME`, else `~/.local/state`).
pub fn user_record(state_home: &Path) -> PathBuf {
    state_home.join("micoff").join(RECORD_FILE)
}

/// The system's record, under `root` (`/` on a real machine).
pub fn system_record(root: &Path) -> PathBuf {
    root.join(SYSTEM_STATE_DIR).join(RECORD_FILE)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
