//! How micoff knows a file as its own: one scheme every writer marks its files with, one verdict
//! ([`Ownership`]: not ours, edited, as written) every remover asks for. A text file carries its
//! mark ([`marked`]: marker line, header lines, the sha256 seal); files an older micoff wrote
//! without a seal are still micoff's ([`old_forms`]); a file that cannot carry a comment (a JSON
//! manifest) is recomputed and compared ([`judge`]); [`backup`]: a foreign file written over is
//! kept and put back. What a remover does with each verdict is its own rule (a fixer's `--revert`
//! keeps an edited file, `latency reset` removes any of its own).

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
