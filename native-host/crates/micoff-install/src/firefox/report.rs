//! The report of Firefox's part: one line per file, and the tally behind its exit code.

use std::io::Write;
use std::path::{Path, PathBuf};

use micoff_files::shown;

/// Report lines and the tally behind the exit code.
pub struct Report<'o> {
    out: &'o mut dyn Write,
    pub total: usize,
    pub failed: usize,
    pub refused: usize,
    /// Files removed (a dry run: that would be): uninstall's turn of the folders micoff made
    /// counts them gone.
    pub removed: Vec<PathBuf>,
}

impl<'o> Report<'o> {
    /// An empty report writing to `out`.
    pub fn new(out: &'o mut dyn Write) -> Self {
        Self {
            out,
            total: 0,
            failed: 0,
            refused: 0,
            removed: Vec::new(),
        }
    }

    /// Work done, or found already done.
    pub fn ok(&mut self, path: &Path, what: &str) {
        self.total += 1;
        let _ = writeln!(self.out, "Firefox: {} {what}", shown(path));
    }

    /// A file removed (a dry run: that would be), said with `what`.
    pub fn removed(&mut self, path: &Path, what: &str) {
        self.removed.push(path.to_path_buf());
        self.ok(path, what);
    }

    /// Work asked for that failed (an I/O error).
    pub fn failed(&mut self, path: &Path, what: &str) {
        self.total += 1;
        self.failed += 1;
        let _ = writeln!(self.out, "Firefox: {} {what}", shown(path));
    }

    /// Work asked for and not done on purpose: what is there is not micoff's, or cannot work.
    pub fn refused(&mut self, path: &Path, what: &str) {
        self.total += 1;
        self.refused += 1;
        let _ = writeln!(self.out, "Firefox: {} {what}", shown(path));
    }

    /// Done, but not what was asked: the clean-up of a folder micoff wrote into before. Printed, not
    /// counted, so it never stands for an install that found no Firefox.
    pub fn aside(&mut self, path: &Path, what: &str) {
        let _ = writeln!(self.out, "Firefox: {} {what}", shown(path));
    }

    /// A line about no one file (a summary, a warning).
    pub fn note(&mut self, text: &str) {
        let _ = writeln!(self.out, "Firefox: {text}");
    }

    /// Lines printed as they are (a dry run's diff).
    pub fn text(&mut self, text: &str) {
        let _ = write!(self.out, "{text}");
    }
}
