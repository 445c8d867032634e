//! micoff's record of what it wrote: one per user (`$XDG_STATE_HOME/micoff/record.json`) and one
//! for the system (`/var/lib/micoff/record.json`), from which `uninstall` undoes everything
//! (docs/design/uninstall.md). Every write goes through a [`Journal`] that writes the file and
//! notes it; the notes are merged into the record under a lock at the end ([`Journal::commit`]). An
//! [`Entry`] is a file (path, role, command, sha256: [`undo`] removes it while unchanged), a folder
//! micoff made (removed when empty), or a part a writer undoes by its own rules (`firefox-profile`,
//! `firefox-policies`, `fix`). Module map: [`entry`] ([`RECORD_FORMAT`]), [`journal`], [`undo`].

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
