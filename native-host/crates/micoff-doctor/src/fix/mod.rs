//! The fixers: `fix hda`, `fix client-shm`, `fix governor`. Each writes only files of its own
//! (marked with [`MARKER`]) through `micoff-files` (exclusive random temporary file + rename,
//! through a symlink when the target is one), keeps a backup of any foreign file it replaces
//! (never overwriting an earlier backup), records a hash of what it wrote ([`HASH_LINE`]), and
//! reverts exactly what it wrote: a file changed since keeps the user's changes (only micoff's
//! lines go, where the fixer knows them) or is left alone with a message. Everything the outside
//! world does (euid, prompting, running commands) goes through [`System`], so tests drive them
//! against a temporary root.

pub mod client_shm;
pub mod governor;
pub mod hda;

use std::fs;
use std::io::{self, BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::root::Root;

/// First line of every file we write; revert never touches a file without it. Its home is
/// [`crate::ours`], below the facts that look for it.
pub use crate::ours::MARKER;

/// Suffix of the backups kept of files we replaced: `<file>.micoff-backup`, then
/// `<file>.micoff-backup.2`, `.3`, ... (a new backup never replaces an older one).
pub const BACKUP_SUFFIX: &str = ".micoff-backup";

/// Second line of a file of ours that replaced a foreign file: names the backup `--revert` puts
/// back (a file name in the same directory).
pub const BACKUP_LINE: &str = "# micoff: the file this replaced is kept as ";

/// A line of every file we write (after the [`MARKER`] line and any [`BACKUP_LINE`]): the
/// SHA-256 of the file without this line, so `--revert` can tell whether it was edited since.
pub const HASH_LINE: &str = "# micoff: sha256 ";

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

/// The n-th backup name of `path` (n >= 1).
pub fn backup_path(path: &Path, n: u32) -> PathBuf {
    if n <= 1 {
        PathBuf::from(format!("{}{BACKUP_SUFFIX}", path.display()))
    } else {
        PathBuf::from(format!("{}{BACKUP_SUFFIX}.{n}", path.display()))
    }
}

const MAX_BACKUPS: u32 = 999;

/// Every backup of `path` that exists, oldest first.
pub fn backups(path: &Path) -> Vec<PathBuf> {
    (1..=MAX_BACKUPS)
        .map(|n| backup_path(path, n))
        .filter(|b| b.symlink_metadata().is_ok())
        .collect()
}

/// The first backup name of `path` not taken.
fn free_backup(path: &Path) -> io::Result<PathBuf> {
    (1..=MAX_BACKUPS)
        .map(|n| backup_path(path, n))
        .find(|b| b.symlink_metadata().is_err())
        .ok_or_else(|| {
            io::Error::other(format!(
                "{} has {MAX_BACKUPS} backups already; remove some",
                path.display()
            ))
        })
}

/// Whether `line` is one of the lines micoff adds after the [`MARKER`] line of a file of ours.
pub fn is_meta_line(line: &str) -> bool {
    line.starts_with(BACKUP_LINE) || line.starts_with(HASH_LINE)
}

/// The backup a file of ours names in its [`BACKUP_LINE`], as a path next to `path`.
fn backup_named_in(path: &Path, ours: &str) -> Option<PathBuf> {
    let name = ours
        .lines()
        .skip(1)
        .take(2)
        .find_map(|l| l.strip_prefix(BACKUP_LINE))?
        .trim();
    // Only a plain name in the same directory, whatever the file says.
    if name.is_empty() || name.contains('/') || name == "." || name == ".." {
        return None;
    }
    Some(path.with_file_name(name))
}

/// `body` (which starts with the [`MARKER`] line) with the [`BACKUP_LINE`] for `backup` after
/// the first line.
fn with_backup_line(body: &str, backup: Option<&Path>) -> String {
    let Some(name) = backup.and_then(|b| b.file_name()) else {
        return body.to_owned();
    };
    let (first, rest) = body.split_once('\n').unwrap_or((body, ""));
    format!("{first}\n{BACKUP_LINE}{}\n{rest}", name.to_string_lossy())
}

/// `content` with a [`HASH_LINE`] recording it, after the marker line and any backup line.
fn sealed(content: &str) -> String {
    let hash = micoff_files::sha256_hex(content.as_bytes());
    let mut lines: Vec<&str> = content.split_inclusive('\n').collect();
    let at = if lines.get(1).is_some_and(|l| l.starts_with(BACKUP_LINE)) {
        2
    } else {
        1
    }
    .min(lines.len());
    let line = format!(
        "{HASH_LINE}{hash} (of this file without this line; --revert keeps your edits when it \
         no longer matches)\n"
    );
    lines.insert(at, &line);
    lines.concat()
}

/// Whether a file of ours is exactly as micoff wrote it (its [`HASH_LINE`] matches the rest). A
/// file without one (or with two) counts as changed.
pub fn is_unchanged(existing: &str) -> bool {
    let mut lines: Vec<&str> = existing.split_inclusive('\n').collect();
    let found: Vec<usize> = (1..lines.len().min(3))
        .filter(|&i| lines[i].starts_with(HASH_LINE))
        .collect();
    let [at] = found[..] else {
        return false;
    };
    let recorded: String = lines[at][HASH_LINE.len()..].chars().take(64).collect();
    lines.remove(at);
    micoff_files::sha256_hex(lines.concat().as_bytes()) == recorded
}

/// Whether `existing` (a file's text) is ours, unchanged, with exactly `body` (the lines micoff
/// adds aside).
pub fn is_applied(existing: Option<&str>, body: &str) -> bool {
    let Some(existing) = existing.filter(|e| e.starts_with(MARKER) && is_unchanged(e)) else {
        return false;
    };
    let mut lines: Vec<&str> = existing.split_inclusive('\n').collect();
    for _ in 0..2 {
        if lines.get(1).is_some_and(|l| is_meta_line(l)) {
            lines.remove(1);
        }
    }
    lines.concat() == body
}

/// Outcome of [`install`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Installed {
    AlreadyApplied,
    Written {
        /// Where the foreign file we just replaced was kept.
        backup: Option<PathBuf>,
    },
}

/// Writes our file at `path` (`body` starts with the [`MARKER`] line). A foreign file there is
/// first copied to a new backup (the next free `<path>.micoff-backup[.N]`), and our file names
/// that backup so `--revert` puts exactly it back. An older file of ours is replaced, keeping
/// the backup it named; a file of ours that was edited since counts as foreign (it gets a backup).
/// Existing backups are never overwritten, so no foreign file is lost: not even when the user
/// replaced our file by hand between two applies. A symlink at `path` stays a link (the file it
/// points to is written); the file keeps the mode of the one it replaces (new files: 0644).
pub fn install(path: &Path, body: &str) -> io::Result<Installed> {
    let existing = fs::read_to_string(path).ok();
    if is_applied(existing.as_deref(), body) {
        return Ok(Installed::AlreadyApplied);
    }
    let (content, backup) = match &existing {
        Some(old) if old.starts_with(MARKER) && is_unchanged(old) => {
            let kept = backup_named_in(path, old);
            (with_backup_line(body, kept.as_deref()), None)
        }
        Some(_) => {
            let b = free_backup(path)?;
            micoff_files::copy_new(path, &b)?;
            (with_backup_line(body, Some(&b)), Some(b))
        }
        None => (body.to_owned(), None),
    };
    let mode = micoff_files::read_with_mode(path).map_or(0o644, |(_, m)| m);
    write_atomic(path, sealed(&content).as_bytes(), mode)?;
    Ok(Installed::Written { backup })
}

/// Outcome of [`uninstall`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Removed {
    NothingThere,
    /// The file there was not written by micoff; it was left alone.
    NotOurs,
    Removed {
        /// The backup put back in its place.
        restored: Option<PathBuf>,
        /// Older backups that stay (of files replaced by earlier applies and then replaced
        /// again by hand): micoff never deletes a foreign file.
        left: Vec<PathBuf>,
    },
    /// Ours, but changed since micoff wrote it: the user's changes were kept and only micoff's
    /// lines removed (the file is the user's now).
    KeptEdits {
        /// Every backup, which all stay (the last one is the file micoff had replaced).
        left: Vec<PathBuf>,
    },
    /// Ours, but changed since micoff wrote it, and the fixer cannot tell its lines from the
    /// user's: left alone.
    Changed {
        /// The file micoff had replaced, still kept.
        backup: Option<PathBuf>,
    },
}

/// Removes our file at `path` and puts back the file it replaced (the backup it names), exactly:
/// a symlink at `path` stays a link pointing where it pointed. Never touches a file we did not
/// write, whatever the caller asks. A file of ours changed since it was written: with `strip`
/// (the fixer's "remove only micoff's lines") the result of it replaces the file and every backup
/// stays; without, the file is left alone ([`Removed::Changed`]).
pub fn uninstall(path: &Path, strip: Option<&dyn Fn(&str) -> String>) -> io::Result<Removed> {
    let Ok(existing) = fs::read_to_string(path) else {
        return Ok(Removed::NothingThere);
    };
    if !existing.starts_with(MARKER) {
        return Ok(Removed::NotOurs);
    }
    let backup = backup_named_in(path, &existing).filter(|b| b.symlink_metadata().is_ok());
    if !is_unchanged(&existing) {
        let Some(strip) = strip else {
            return Ok(Removed::Changed { backup });
        };
        let (_, mode) = micoff_files::read_with_mode(path)?;
        write_atomic(path, strip(&existing).as_bytes(), mode)?;
        return Ok(Removed::KeptEdits {
            left: backups(path),
        });
    }
    let restored = match backup {
        Some(b) => {
            micoff_files::restore(&b, path)?;
            Some(b)
        }
        None => {
            micoff_files::remove(path)?;
            None
        }
    };
    Ok(Removed::Removed {
        restored,
        left: backups(path),
    })
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
///
/// The elevated run gets the arguments as they were: agreeing to sudo is not agreeing to
/// anything else (`fix hda` asks about the module reload again on the terminal, or needs
/// `--reload`).
pub fn escalate(
    what: &str,
    opts: &Opts,
    sys: &mut dyn System,
    out: &mut dyn Write,
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
    let mut full = vec![exe];
    full.extend(args);
    sys.run(tool, &full)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

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
                backup: Some(backup_path(&p, 1))
            }
        );
        let text = fs::read_to_string(&p).unwrap();
        let unsealed = format!("{MARKER}\n{BACKUP_LINE}x.conf.micoff-backup\nours\n");
        assert_eq!(
            text,
            format!(
                "{MARKER}\n{BACKUP_LINE}x.conf.micoff-backup\n{HASH_LINE}{} (of this file without \
                 this line; --revert keeps your edits when it no longer matches)\nours\n",
                micoff_files::sha256_hex(unsealed.as_bytes())
            )
        );
        assert!(is_unchanged(&text));
        assert!(!is_unchanged(&text.replace("ours", "theirs")));
        assert!(is_applied(Some(&text), &ours));
        assert_eq!(install(&p, &ours).unwrap(), Installed::AlreadyApplied);
        // A newer version of ours replaces ours, keeping the backup it names.
        let ours2 = format!("{MARKER}\nours 2\n");
        assert_eq!(
            install(&p, &ours2).unwrap(),
            Installed::Written { backup: None }
        );
        assert!(fs::read_to_string(&p)
            .unwrap()
            .contains("kept as x.conf.micoff-backup\n"));
        assert_eq!(fs::read_to_string(backup_path(&p, 1)).unwrap(), "theirs\n");
        let r = uninstall(&p, None).unwrap();
        assert_eq!(
            r,
            Removed::Removed {
                restored: Some(backup_path(&p, 1)),
                left: vec![]
            }
        );
        assert_eq!(fs::read_to_string(&p).unwrap(), "theirs\n");
        assert_eq!(uninstall(&p, None).unwrap(), Removed::NotOurs);
        fs::remove_file(&p).unwrap();
        assert_eq!(uninstall(&p, None).unwrap(), Removed::NothingThere);
        // No temporary files left behind.
        assert_eq!(fs::read_dir(dir.path().join("etc")).unwrap().count(), 0);
    }

    #[test]
    fn a_foreign_file_that_replaced_ours_gets_its_own_backup() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.conf");
        let ours = format!("{MARKER}\nours\n");
        fs::write(&p, "A\n").unwrap();
        install(&p, &ours).unwrap();
        // The user puts their own file B in place of ours; apply again.
        fs::write(&p, "B\n").unwrap();
        assert_eq!(
            install(&p, &ours).unwrap(),
            Installed::Written {
                backup: Some(backup_path(&p, 2))
            }
        );
        assert_eq!(fs::read_to_string(backup_path(&p, 1)).unwrap(), "A\n");
        assert_eq!(fs::read_to_string(backup_path(&p, 2)).unwrap(), "B\n");
        // Revert puts back B (what this apply replaced) and leaves A's backup alone.
        assert_eq!(
            uninstall(&p, None).unwrap(),
            Removed::Removed {
                restored: Some(backup_path(&p, 2)),
                left: vec![backup_path(&p, 1)]
            }
        );
        assert_eq!(fs::read_to_string(&p).unwrap(), "B\n");
        assert_eq!(names(dir.path()), ["x.conf", "x.conf.micoff-backup"]);
    }

    #[test]
    fn ours_written_over_nothing_restores_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.conf");
        let ours = format!("{MARKER}\nours\n");
        fs::write(&p, "A\n").unwrap();
        install(&p, &ours).unwrap();
        // The user deletes our file, then applies again: ours replaced nothing this time.
        fs::remove_file(&p).unwrap();
        install(&p, &ours).unwrap();
        let text = fs::read_to_string(&p).unwrap();
        assert!(is_applied(Some(&text), &ours));
        assert!(!text.contains(BACKUP_LINE), "{text}");
        assert_eq!(
            uninstall(&p, None).unwrap(),
            Removed::Removed {
                restored: None,
                left: vec![backup_path(&p, 1)]
            }
        );
        assert!(!p.exists());
        assert_eq!(fs::read_to_string(backup_path(&p, 1)).unwrap(), "A\n");
    }

    #[test]
    fn a_backup_line_cannot_point_outside_the_directory() {
        let p = Path::new("/etc/modprobe.d/x.conf");
        let evil = format!("{MARKER}\n{BACKUP_LINE}../../passwd\n");
        assert_eq!(backup_named_in(p, &evil), None);
        let ok = format!("{MARKER}\n{BACKUP_LINE}x.conf.micoff-backup.2\n");
        assert_eq!(
            backup_named_in(p, &ok),
            Some(PathBuf::from("/etc/modprobe.d/x.conf.micoff-backup.2"))
        );
    }

    /// A symlink planted at the temporary name micoff used to pick
    /// (`.<name>.micoff-tmp-<pid>`) is not followed.
    #[test]
    fn install_does_not_follow_a_symlink_planted_at_a_temporary_name() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        fs::write(&victim, "precious\n").unwrap();
        let etc = dir.path().join("etc");
        fs::create_dir_all(&etc).unwrap();
        std::os::unix::fs::symlink(
            &victim,
            etc.join(format!(".x.conf.micoff-tmp-{}", std::process::id())),
        )
        .unwrap();
        let p = etc.join("x.conf");
        install(&p, &format!("{MARKER}\nours\n")).unwrap();
        assert_eq!(fs::read_to_string(&victim).unwrap(), "precious\n");
        assert!(fs::read_to_string(&p).unwrap().ends_with("ours\n"));
    }

    /// A target that is a symlink stays one, pointing where it pointed, and
    /// revert restores the content it had.
    #[test]
    fn a_symlinked_target_stays_a_link_through_install_and_uninstall() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("dotfiles.conf");
        fs::write(&real, "theirs\n").unwrap();
        let p = dir.path().join("x.conf");
        std::os::unix::fs::symlink("dotfiles.conf", &p).unwrap();
        install(&p, &format!("{MARKER}\nours\n")).unwrap();
        assert_eq!(fs::read_link(&p).unwrap(), PathBuf::from("dotfiles.conf"));
        assert!(fs::read_to_string(&real).unwrap().ends_with("ours\n"));
        assert!(matches!(
            uninstall(&p, None).unwrap(),
            Removed::Removed { .. }
        ));
        assert_eq!(fs::read_link(&p).unwrap(), PathBuf::from("dotfiles.conf"));
        assert_eq!(fs::read_to_string(&real).unwrap(), "theirs\n");
        assert_eq!(names(dir.path()), ["dotfiles.conf", "x.conf"]);
    }

    #[test]
    fn diff_lines() {
        assert_eq!(diff("a\nb\n", "a\nc\n"), "- b\n+ c\n");
    }
}
