//! How a latency file says it is micoff's: [`MARKER`] as its first line (after a wrapper's `#!`
//! line), then a [`META`] line with what it configures. Nothing without them is ever changed or
//! removed.

use std::collections::HashMap;

/// First line of every file micoff writes (shared with the doctor's fixes).
pub use micoff_doctor::fix::MARKER;

/// Second line of every latency file micoff writes: what it configures, as `key=value` words.
pub const META: &str = "# micoff-latency:";

/// The `key=value` words of a file of ours (its [`META`] line), or None for a foreign file. A
/// wrapper's `#!` line comes before the marker.
pub fn read_meta(content: &str) -> Option<HashMap<String, String>> {
    let mut lines = content.lines().peekable();
    if lines.peek().is_some_and(|l| l.starts_with("#!")) {
        lines.next();
    }
    if lines.next()? != MARKER {
        return None;
    }
    let meta = lines.next()?.strip_prefix(META)?;
    Some(
        meta.split_whitespace()
            .filter_map(|w| w.split_once('='))
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect(),
    )
}
