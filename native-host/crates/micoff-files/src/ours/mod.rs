//! How micoff knows a file as its own: the one scheme every writer (the fixers, capture latency,
//! the installer) marks its files with, and the one verdict ([`Ownership`]) every remover asks for.
//!
//! - A text file micoff writes carries its mark ([`marked`]): the marker line at its top (after a
//!   script's `#!`), micoff's header lines, and the seal, the sha256 of the file without the seal
//!   line. Reading it back gives [`Ownership::NotOurs`] (no marker), [`Ownership::Edited`] (the
//!   seal does not match, or there is none) or [`Ownership::AsWritten`].
//! - Files an older micoff wrote without a seal are still micoff's, and removable by the rules of
//!   whoever wrote them ([`old_forms`]: which ones, and what can be said of them).
//! - A file that cannot carry a comment (the JSON manifest a browser validates) has its record in
//!   micoff instead: what micoff writes there is recomputed and compared; [`judge`] gives the same
//!   verdict from the writer's two checks.
//! - [`backup`]: a marked file written over a foreign one keeps a backup of it, named in the
//!   header, and putting micoff's file away puts the backup back.
//!
//! What a remover does with each verdict is its own rule (a fixer's `--revert` keeps an edited
//! file, `latency reset` removes any file of its own); the verdict is the same for all.

pub mod backup;
pub mod marked;
pub mod old_forms;

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;

use sha2::{Digest, Sha256};

pub use backup::{install, uninstall, Installed, Removed};
pub use marked::{ownership_of, seal, Marked, MARKER};

/// Whose a file found where micoff writes one is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ownership {
    /// Not micoff's: why.
    NotOurs(String),
    /// micoff's, but changed since micoff wrote it, or with no record to tell: what.
    Edited(String),
    /// micoff's, and still as micoff wrote it.
    AsWritten,
}

impl Ownership {
    /// micoff's, edited or not.
    pub fn is_ours(&self) -> bool {
        !matches!(self, Ownership::NotOurs(_))
    }
}

/// The verdict on a file that cannot carry micoff's mark: `ours` says whether it is micoff's at
/// all, `as_written` (asked only then) whether it is still what micoff writes; each `Err` says why
/// not.
pub fn judge(
    ours: Result<(), String>,
    as_written: impl FnOnce() -> Result<(), String>,
) -> Ownership {
    if let Err(why) = ours {
        return Ownership::NotOurs(why);
    }
    match as_written() {
        Err(why) => Ownership::Edited(why),
        Ok(()) => Ownership::AsWritten,
    }
}

/// Hex SHA-256 of `bytes`: the record of what micoff wrote.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
