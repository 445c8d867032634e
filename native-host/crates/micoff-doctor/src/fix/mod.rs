//! The fixers: `fix hda`, `fix client-shm`, `fix governor`. Each writes only files of its own,
//! marked and sealed the one way micoff marks its files (micoff-files' `ours`), through
//! `micoff-files` (atomic, through a symlink when the target is one), keeps a backup of any foreign
//! file it replaces, and reverts exactly what it wrote: a file changed since keeps the user's
//! changes or is left alone with a message. Each fix applied is part of micoff's record
//! ([`recorded`]), so `micoff-host uninstall` runs its `--revert`. The outside world (euid,
//! prompting, commands) goes through [`System`], so tests drive the fixers against a temporary
//! root.

pub mod client_shm;
pub mod governor;
pub mod hda;
pub mod recorded;

use std::io::{self, BufRead, IsTerminal, Write};
use std::path::Path;
use std::process::Command;

use crate::root::Root;

/// First line of every file we write; revert never touches a file without it.
pub use micoff_files::ours::MARKER;

/// What the fixers' files are, written and put back: micoff-files' one scheme.
pub use micoff_files::ours::backup::{
    backup_path, backups, is_applied, BACKUP_LINE, BACKUP_SUFFIX,
};
pub use micoff_files::ours::{ownership_of, Installed, Ownership, Removed};

/// The note on a fixer's seal line, for whoever reads the file.
const SEAL_NOTE: &str =
    "of this file without this line; --revert keeps your edits when it no longer matches";

/// Exit code when a fix was applied but does not (yet) have its effect; the output says why.
pub use micoff_exit::EXIT_PARTIAL;

/// What a fix should do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    DryRun,
    Apply,
    Revert,
}

/// Options shared by the fixers.
#[derive(Debug, Clone)]
pub struct Opts {
    /// The command as its error lines name it (`fix hda`).
    pub name: &'static str,
    pub mode: Mode,
    /// `fix hda`: write even where it would not help.
    pub force: bool,
    /// Agree to running through sudo/pkexec without asking. Nothing else.
    pub yes: bool,
    /// `fix hda`: reload snd_hda_intel without asking (when no stream is open).
    pub reload: bool,
    /// The command that applies this fix as the user asked for it (`--root`, `--cpus`,
    /// `--force` included), for "Apply with: ..." lines.
    pub apply_command: String,
}

impl Opts {
    pub fn new(mode: Mode) -> Self {
        Self {
            name: "fix",
            mode,
            force: false,
            yes: false,
            reload: false,
            apply_command: String::new(),
        }
    }
}

/// The world outside the root.
pub trait System {
    fn euid(&self) -> u32;
    /// Whether we may ask the user (stdin and stdout are terminals).
    fn interactive(&self) -> bool;
    /// Asks a yes/no question on the terminal; `false` unless the answer starts with y.
    fn ask(&mut self, question: &str, out: &mut dyn Write) -> bool;
    /// Runs a command with inherited stdio; its exit code (-1 when killed by a signal).
    fn run(&mut self, program: &str, args: &[String]) -> io::Result<i32>;
    /// Whether `program` is on PATH.
    fn has(&self, program: &str) -> bool;
    /// Whether a graphical session is around (pkexec then shows a dialog).
    fn graphical(&self) -> bool;
    /// This program and its arguments, to re-run it elevated.
    fn self_command(&self) -> (String, Vec<String>);
    /// Whether reloading kernel modules affects `root` (only when it is the real machine).
    fn can_reload(&self, root: &Root) -> bool;
}

/// The real machine.
#[derive(Debug, Default)]
pub struct RealSystem;

impl System for RealSystem {
    fn euid(&self) -> u32 {
        crate::uid::current_euid()
    }
    fn interactive(&self) -> bool {
        io::stdin().is_terminal() && io::stdout().is_terminal()
    }
    fn ask(&mut self, question: &str, out: &mut dyn Write) -> bool {
        let _ = write!(out, "{question} [y/N] ");
        let _ = out.flush();
        let mut line = String::new();
        if io::stdin().lock().read_line(&mut line).is_err() {
            return false;
        }
        line.trim().to_ascii_lowercase().starts_with('y')
    }
    fn run(&mut self, program: &str, args: &[String]) -> io::Result<i32> {
        let status = Command::new(program).args(args).status()?;
        Ok(status.code().unwrap_or(-1))
    }
    fn has(&self, program: &str) -> bool {
        std::env::var_os("PATH")
            .is_some_and(|paths| std::env::split_paths(&paths).any(|d| d.join(program).is_file()))
    }
    fn graphical(&self) -> bool {
        std::env::var_os("DISPLAY").is_some() || std::env::var_os("WAYLAND_DISPLAY").is_some()
    }
    fn self_command(&self) -> (String, Vec<String>) {
        let exe = std::env::current_exe()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|_| "micoff-host".into());
        (exe, std::env::args().skip(1).collect())
    }
    fn can_reload(&self, root: &Root) -> bool {
        root.is_system()
    }
}

/// The one safe file writer (shared with `micoff-host install`).
pub use micoff_files::write_atomic;

/// Writes the fixer's file at `path` (`body` starts with the [`MARKER`] line), sealed, over a
/// foreign file only after keeping a backup of it (micoff-files' `ours::install`).
pub fn install(path: &Path, body: &str) -> io::Result<Installed> {
    micoff_files::ours::install(path, body, SEAL_NOTE)
}

/// Removes the fixer's file at `path` and puts back the file it replaced; an edited file is
/// stripped of micoff's lines by `strip`, or left alone (micoff-files' `ours::uninstall`).
pub fn uninstall(path: &Path, strip: Option<&dyn Fn(&str) -> String>) -> io::Result<Removed> {
    micoff_files::ours::uninstall(path, strip)
}

/// A line diff good enough for a dozen-line config file.
pub fn diff(old: &str, new: &str) -> String {
    let mut s = String::new();
    let old_lines: Vec<&str> = old.lines().collect();
    let new_lines: Vec<&str> = new.lines().collect();
    for l in &old_lines {
        if !new_lines.contains(l) {
            s.push_str(&format!("- {l}\n"));
        }
    }
    for l in &new_lines {
        if !old_lines.contains(l) {
            s.push_str(&format!("+ {l}\n"));
        }
    }
    s
}

/// A fixer that does not do what it was asked: its error line on `err` (micoff-exit's one
/// style), and the exit code 1.
pub fn refuse(opts: &Opts, what: &str, todo: &str, err: &mut dyn Write) -> io::Result<i32> {
    micoff_exit::report(err, opts.name, what, todo);
    Ok(micoff_exit::EXIT_ERROR)
}

/// Not root: say exactly what we would do, then re-run through pkexec or sudo if the user
/// agrees (`--yes`, or a yes on the terminal). Returns the exit code to use.
///
/// The elevated run gets the arguments as they were: agreeing to sudo is not agreeing to
/// anything else (`fix hda` asks about the module reload again on the terminal, or needs
/// `--reload`).
pub fn escalate(
    what: &str,
    opts: &Opts,
    sys: &mut dyn System,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> io::Result<i32> {
    let (exe, args) = sys.self_command();
    let tool = if sys.graphical() && sys.has("pkexec") {
        Some("pkexec")
    } else if sys.has("sudo") {
        Some("sudo")
    } else if sys.has("pkexec") {
        Some("pkexec")
    } else {
        None
    };
    let Some(tool) = tool else {
        return refuse(
            opts,
            &format!("{what} needs root, and neither sudo nor pkexec is available"),
            "run it as root",
            err,
        );
    };
    let agreed = opts.yes
        || (sys.interactive() && sys.ask(&format!("{what} needs root. Run it with {tool}?"), out));
    if !agreed {
        return refuse(
            opts,
            &format!("{what} needs root; nothing changed"),
            &format!("run: {tool} {exe} {}", args.join(" ")),
            err,
        );
    }
    writeln!(out, "running: {tool} {exe} {}", args.join(" "))?;
    let mut full = vec![exe];
    full.extend(args);
    sys.run(tool, &full)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diff_lines() {
        assert_eq!(diff("a\nb\n", "a\nc\n"), "- b\n+ c\n");
    }
}
