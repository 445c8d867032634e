//! The fixers: `fix hda`, `fix client-shm`, `fix governor`. Each writes only files of its own
//! (marked with [`MARKER`]), atomically, keeps a backup of anything it replaces, and can revert
//! exactly what it wrote. Everything the outside world does (euid, prompting, running
//! commands) goes through [`System`], so tests drive them against a temporary root.

pub mod client_shm;
pub mod governor;
pub mod hda;

use std::fs;
use std::io::{self, BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::root::Root;

/// First line of every file we write; revert refuses files without it (unless `--force`).
pub const MARKER: &str = "# Written by micoff-host";

/// Suffix of the backup kept of a file we replaced.
pub const BACKUP_SUFFIX: &str = ".micoff-backup";

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
    pub mode: Mode,
    pub force: bool,
    /// Agree to escalation and to the module reload without asking.
    pub yes: bool,
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
        crate::facts::current_euid()
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

/// Writes `content` to `path` through a temporary file in the same directory and a rename, so
/// readers see the old file or the new one, never half of one.
pub fn write_atomic(path: &Path, content: &str, mode: u32) -> io::Result<()> {
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let dir = path
        .parent()
        .ok_or_else(|| io::Error::other(format!("{} has no parent", path.display())))?;
    fs::create_dir_all(dir)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.micoff-tmp-{}", std::process::id()));
    let result = (|| {
        let mut f = fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(mode)
            .open(&tmp)?;
        f.write_all(content.as_bytes())?;
        f.set_permissions(fs::Permissions::from_mode(mode))?;
        f.sync_all()?;
        fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

pub fn backup_path(path: &Path) -> PathBuf {
    PathBuf::from(format!("{}{BACKUP_SUFFIX}", path.display()))
}

/// Outcome of [`install`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Installed {
    AlreadyApplied,
    Written { backup: Option<PathBuf> },
}

/// Writes our file at `path`; a foreign file there is kept as `<path>.micoff-backup` first (an
/// older file of ours is simply replaced, and an existing backup is never overwritten).
pub fn install(path: &Path, content: &str) -> io::Result<Installed> {
    let existing = fs::read_to_string(path).ok();
    if existing.as_deref() == Some(content) {
        return Ok(Installed::AlreadyApplied);
    }
    let mut backup = None;
    if let Some(old) = &existing {
        let b = backup_path(path);
        if !old.starts_with(MARKER) && !b.exists() {
            fs::copy(path, &b)?;
            backup = Some(b);
        }
    }
    write_atomic(path, content, 0o644)?;
    Ok(Installed::Written { backup })
}

/// Outcome of [`uninstall`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Removed {
    NothingThere,
    NotOurs,
    Removed { restored: Option<PathBuf> },
}

/// Removes our file at `path` and puts the backup back if there is one.
pub fn uninstall(path: &Path, force: bool) -> io::Result<Removed> {
    let Ok(existing) = fs::read_to_string(path) else {
        return Ok(Removed::NothingThere);
    };
    if !existing.starts_with(MARKER) && !force {
        return Ok(Removed::NotOurs);
    }
    let b = backup_path(path);
    if b.exists() {
        fs::rename(&b, path)?;
        Ok(Removed::Removed { restored: Some(b) })
    } else {
        fs::remove_file(path)?;
        Ok(Removed::Removed { restored: None })
    }
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

/// Not root: say exactly what we would do, then re-run through pkexec or sudo if the user
/// agrees (`--yes`, or a yes on the terminal). Returns the exit code to use.
pub fn escalate(
    what: &str,
    opts: &Opts,
    sys: &mut dyn System,
    out: &mut dyn Write,
) -> io::Result<i32> {
    let (exe, mut args) = sys.self_command();
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
        writeln!(
            out,
            "{what} needs root, and neither sudo nor pkexec is available."
        )?;
        return Ok(1);
    };
    let agreed = opts.yes
        || (sys.interactive() && sys.ask(&format!("{what} needs root. Run it with {tool}?"), out));
    if !agreed {
        writeln!(
            out,
            "{what} needs root; nothing changed. Run: {tool} {exe} {}",
            args.join(" ")
        )?;
        return Ok(1);
    }
    writeln!(out, "running: {tool} {exe} {}", args.join(" "))?;
    // The elevated run must not ask again for what was agreed here.
    if !args.iter().any(|a| a == "--yes" || a == "-y") {
        args.push("--yes".into());
    }
    let mut full = vec![exe];
    full.extend(args);
    sys.run(tool, &full)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn install_backup_uninstall() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("etc/x.conf");
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(&p, "theirs\n").unwrap();
        let ours = format!("{MARKER}\nours\n");
        let r = install(&p, &ours).unwrap();
        assert_eq!(
            r,
            Installed::Written {
                backup: Some(backup_path(&p))
            }
        );
        assert_eq!(install(&p, &ours).unwrap(), Installed::AlreadyApplied);
        // A newer version of ours replaces ours without touching the backup.
        let ours2 = format!("{MARKER}\nours 2\n");
        assert_eq!(
            install(&p, &ours2).unwrap(),
            Installed::Written { backup: None }
        );
        assert_eq!(fs::read_to_string(backup_path(&p)).unwrap(), "theirs\n");
        let r = uninstall(&p, false).unwrap();
        assert!(matches!(r, Removed::Removed { restored: Some(_) }));
        assert_eq!(fs::read_to_string(&p).unwrap(), "theirs\n");
        assert_eq!(uninstall(&p, false).unwrap(), Removed::NotOurs);
        fs::remove_file(&p).unwrap();
        assert_eq!(uninstall(&p, false).unwrap(), Removed::NothingThere);
        // No temporary files left behind.
        assert_eq!(fs::read_dir(dir.path().join("etc")).unwrap().count(), 0);
    }

    #[test]
    fn diff_lines() {
        assert_eq!(diff("a\nb\n", "a\nc\n"), "- b\n+ c\n");
    }
}
