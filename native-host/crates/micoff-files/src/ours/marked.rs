//! The mark on a text file micoff writes, and reading it back. Pure: text in, text or a verdict
//! out. In order: a script's `#!` line when it is one; the marker line (MARKER, then the writer's
//! words: `# Written by micoff-host fix hda (micoff) …`); header lines each beginning `# micoff`
//! (what the file configures, the backup it replaced: `# micoff-latency: capture_ms=40 …`); the
//! seal, `# micoff: sha256 <hex> (<note>)`, the sha256 of the file without that line; then the
//! file's own lines.

use super::old_forms;
use super::{sha256_hex, Ownership};

/// The first line (after a script's `#!` line) of every text file micoff writes; nothing without
/// it is ever changed or removed.
pub const MARKER: &str = "# Written by micoff-host";

/// How every header line begins (the seal's included).
pub const HEADER_PREFIX: &str = "# micoff";

/// The seal line: the SHA-256 of the file without this line follows, then a note in parentheses.
pub const SEAL: &str = "# micoff: sha256 ";

const SHA256_HEX_LEN: usize = 64;

/// A marked text, taken apart.
#[derive(Debug, Clone)]
pub struct Marked<'a> {
    /// Every line, each with its newline.
    lines: Vec<&'a str>,
    /// Where the marker line is (after a `#!` line: 1).
    marker_at: usize,
    /// Where the file's own lines begin (after the marker, the header and the seal).
    body_at: usize,
}

impl<'a> Marked<'a> {
    /// `text` taken apart, or None when it carries no marker (not micoff's).
    pub fn read(text: &'a str) -> Option<Self> {
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        let marker_at = usize::from(lines.first().is_some_and(|l| l.starts_with("#!")));
        if !lines.get(marker_at)?.starts_with(MARKER) {
            return None;
        }
        let body_at = marker_at
            + 1
            + lines[marker_at + 1..]
                .iter()
                .take_while(|l| l.starts_with(HEADER_PREFIX))
                .count();
        Some(Self {
            lines,
            marker_at,
            body_at,
        })
    }

    /// The marker line (without its newline).
    pub fn marker_line(&self) -> &'a str {
        line(self.lines[self.marker_at])
    }

    /// micoff's header lines (without their newlines), the seal's left out.
    pub fn header(&self) -> impl Iterator<Item = &'a str> + '_ {
        self.lines[self.marker_at + 1..self.body_at]
            .iter()
            .map(|l| line(l))
            .filter(|l| !l.starts_with(SEAL))
    }

    /// The file's own lines, after the marker, the header and the seal.
    pub fn body(&self) -> String {
        self.lines[self.body_at..].concat()
    }

    /// The text without its seal line(s): what the seal's sha256 is of.
    pub fn unsealed(&self) -> String {
        self.unsealed_without(|_| false)
    }

    /// The text without its seal line(s), and without the header lines `drop` picks.
    pub fn unsealed_without(&self, drop: impl Fn(&str) -> bool) -> String {
        let header = self.marker_at + 1..self.body_at;
        let seals = self.seal_at();
        self.lines
            .iter()
            .enumerate()
            .filter(|(i, l)| {
                let dropped = header.contains(i) && drop(line(l));
                !seals.contains(i) && !dropped
            })
            .map(|(_, l)| *l)
            .collect()
    }

    /// Whether the text is as micoff wrote it: its one seal matches the rest of it.
    pub fn ownership(&self) -> Ownership {
        let seals = self.seal_at();
        let [at] = seals[..] else {
            if seals.is_empty() {
                return old_forms::unsealed();
            }
            return Ownership::Edited(format!(
                "{} sha256 record lines where micoff writes one",
                seals.len()
            ));
        };
        let recorded: String = self.lines[at][SEAL.len()..]
            .chars()
            .take(SHA256_HEX_LEN)
            .collect();
        if sha256_hex(self.unsealed().as_bytes()) == recorded {
            Ownership::AsWritten
        } else {
            Ownership::Edited("changed since micoff wrote it (its sha256 differs)".to_owned())
        }
    }

    /// Where the seal lines are (header lines only).
    fn seal_at(&self) -> Vec<usize> {
        (self.marker_at + 1..self.body_at)
            .filter(|&i| self.lines[i].starts_with(SEAL))
            .collect()
    }
}

/// `l` without its line ending.
fn line(l: &str) -> &str {
    l.strip_suffix('\n').unwrap_or(l)
}

/// Whose `text` is: micoff's and as written, micoff's and edited (or unprovable), or not.
pub fn ownership_of(text: &str) -> Ownership {
    match Marked::read(text) {
        Some(marked) => marked.ownership(),
        None => Ownership::NotOurs(format!("no `{MARKER}` line at its top")),
    }
}

/// `content` (marked: [`MARKER`] first, after any `#!` line) with its seal after the header:
/// `# micoff: sha256 <hex> (<note>)`. Text without a marker is returned as it is (there is no
/// header to seal); a header that ends the text without a newline gets one.
pub fn seal(content: &str, note: &str) -> String {
    let needs_newline = match Marked::read(content) {
        None => return content.to_owned(),
        Some(m) => m.body_at == m.lines.len() && !content.ends_with('\n'),
    };
    let content = if needs_newline {
        format!("{content}\n")
    } else {
        content.to_owned()
    };
    let seal = format!("{SEAL}{} ({note})\n", sha256_hex(content.as_bytes()));
    let Some(marked) = Marked::read(&content) else {
        return content;
    };
    let mut lines = marked.lines;
    lines.insert(marked.body_at, &seal);
    lines.concat()
}
