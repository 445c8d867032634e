//! What uninstall did, line by line, and its exit code: 0 when everything micoff wrote is gone
//! (or never was), 3 when it had to leave something (a file edited since, one it could not remove,
//! a profile in use, a policy entry that blocks micoff until every Firefox has started).

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};

use micoff_exit::{EXIT_OK, EXIT_PARTIAL};
use micoff_files::shown;

/// The report and its counts.
pub struct Tally<'o> {
    out: &'o mut dyn Write,
    dry_run: bool,
    removed: usize,
    left: usize,
    /// Files and folders removed (a dry run: that would be), for the folders' turn.
    removed_paths: BTreeSet<PathBuf>,
    code: i32,
}

impl<'o> Tally<'o> {
    pub fn new(out: &'o mut dyn Write, dry_run: bool) -> Self {
        Self {
            out,
            dry_run,
            removed: 0,
            left: 0,
            removed_paths: BTreeSet::new(),
            code: EXIT_OK,
        }
    }

    /// The writer, for the parts that report themselves (the installer's and fixers' lines).
    pub fn out(&mut self) -> &mut dyn Write {
        &mut *self.out
    }

    fn would(&self) -> &'static str {
        if self.dry_run {
            "would remove"
        } else {
            "removed"
        }
    }

    /// A line of its own.
    pub fn say(&mut self, text: &str) {
        let _ = writeln!(self.out, "{text}");
    }

    /// A recorded file removed.
    pub fn removed(&mut self, path: &Path, role: &str) {
        self.removed += 1;
        self.removed_paths.insert(path.to_path_buf());
        let _ = writeln!(self.out, "{} {} ({role})", self.would(), shown(path));
    }

    /// A folder micoff made, removed (empty).
    pub fn removed_folder(&mut self, path: &Path) {
        self.removed_paths.insert(path.to_path_buf());
        let _ = writeln!(
            self.out,
            "{} {} (a folder micoff made, empty now)",
            self.would(),
            shown(path)
        );
    }

    /// A file a part removed and reported itself (a dry run: would have), for the folders' turn.
    pub fn gone(&mut self, path: PathBuf) {
        self.removed_paths.insert(path);
    }

    /// A file left on purpose that is not micoff's to remove (the package's): not a leftover.
    pub fn kept(&mut self, path: &Path, why: &str) {
        let _ = writeln!(self.out, "{} {why}", shown(path));
    }

    /// A file left behind that micoff wrote (edited since, or not removable).
    pub fn left_file(&mut self, path: &Path, why: &str) {
        self.left += 1;
        let _ = writeln!(self.out, "left {}: {why}", shown(path));
    }

    /// Something else left behind, said in full.
    pub fn left(&mut self, text: &str) {
        self.left += 1;
        let _ = writeln!(self.out, "left: {text}");
    }

    /// A part's own exit code (the installer's, a fixer's): anything but 0 left something.
    pub fn part_code(&mut self, code: i32) {
        if code != EXIT_OK {
            self.left += 1;
        }
    }

    /// A part removed something it reported itself.
    pub fn part_removed(&mut self) {
        self.removed += 1;
    }

    /// The record itself could not be written.
    pub fn failed_code(&mut self, code: i32) {
        self.code = code;
        self.left += 1;
    }

    pub fn removed_paths(&self) -> &BTreeSet<PathBuf> {
        &self.removed_paths
    }

    /// The summary line and the exit code.
    pub fn finish(self) -> i32 {
        let what = if self.dry_run { "would be" } else { "was" };
        let summary = match (self.removed, self.left) {
            (0, 0) => "nothing of micoff's to remove".to_owned(),
            (_, 0) => format!("everything micoff wrote {what} removed or put back"),
            (_, n) => format!(
                "{n} thing(s) left (named above with why); run this again once that is settled"
            ),
        };
        let _ = writeln!(self.out, "micoff-host uninstall: {summary}");
        if self.left > 0 {
            EXIT_PARTIAL
        } else {
            self.code
        }
    }
}
