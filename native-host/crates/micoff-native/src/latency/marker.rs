//! How a latency file says it is micoff's: micoff-files' one mark (its [`MARKER`] line first, after
//! a wrapper's `#!` line, and the sha256 seal of what was written) with a [`META`] header line
//! saying what it configures. Nothing without them is ever changed or removed; a file of ours goes
//! or is rewritten whether edited or not (files from before the seal included).

use std::collections::HashMap;

/// First line of every file micoff writes (shared with the doctor's fixes).
pub use micoff_files::ours::MARKER;
use micoff_files::ours::{seal, Marked};

/// The header line of every latency file micoff writes: what it configures, as `key=value` words.
pub const META: &str = "# micoff-latency:";

/// The note on a latency file's seal line.
const SEAL_NOTE: &str = "of this file without this line";

/// `content` (its [`MARKER`] and [`META`] lines first) sealed with the sha256 of what it is.
pub(super) fn sealed(content: &str) -> String {
    seal(content, SEAL_NOTE)
}

/// The `key=value` words of a file of ours (its [`META`] line), or None for a foreign file.
pub fn read_meta(content: &str) -> Option<HashMap<String, String>> {
    let marked = Marked::read(content)?;
    let meta = marked.header().find_map(|l| l.strip_prefix(META))?;
    Some(
        meta.split_whitespace()
            .filter_map(|w| w.split_once('='))
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect(),
    )
}
