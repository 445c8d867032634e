//! `micoff-host fix client-shm`: turns PulseAudio client shared memory back on (`enable-shm = yes`)
//! in the user's `~/.config/pulse/client.conf`, only where it was turned off (`enable-memfd = no`
//! is left alone: srbchannel works with either). PulseAudio reads only the FIRST client.conf it
//! finds, so a new user file starts as a copy of the system settings. After writing, the effective
//! setting is read again: a `.d` file or `$PULSE_CLIENTCONFIG` can still keep it off (exit 3).

use std::io::{self, Write};
use std::path::PathBuf;

use super::recorded::{note, user as user_record};
use super::{
    install, refuse, uninstall, Installed, Mode, Opts, Removed, System, EXIT_PARTIAL, MARKER,
};
use crate::facts::{self, UserEnv, SYSTEM_CLIENT_CONF};
use crate::parse;
use crate::root::Root;
use micoff_files::ours::Marked;

const KEY: &str = "enable-shm";

fn is_off_line(line: &str) -> bool {
    let t = line.trim();
    if t.starts_with(';') || t.starts_with('#') {
        return false;
    }
    match t.split_once('=') {
        Some((k, v)) => k.trim() == KEY && parse::pulse_bool(v) == Some(false),
        None => false,
    }
}

/// Our version of the user's file: `base` (the user's file or the system settings) with every
/// line turning shm off replaced by its `yes` form (the old line kept as a comment).
pub fn render(base: &str, base_name: &str) -> String {
    let mut s = format!(
        "{MARKER} fix client-shm (micoff). Undo with: micoff-host fix client-shm --revert\n"
    );
    s.push_str(&format!(
        "# Based on {base_name}; shared memory re-enabled so clients can use srbchannel.\n"
    ));
    for line in without_header(base).lines() {
        if is_off_line(line) {
            s.push_str(&format!("{WAS}{}`\n{KEY} = yes\n", line.trim()));
        } else {
            s.push_str(line);
            s.push('\n');
        }
    }
    s
}

/// How [`render`] keeps a line it turned on.
const WAS: &str = "; micoff: was `";

/// `text` without the header of a file of ours (the marker, backup and seal lines, "Based on"):
/// it is never copied again, and never the user's.
fn without_header(text: &str) -> String {
    let Some(marked) = Marked::read(text) else {
        return text.to_owned();
    };
    let body = marked.body();
    match body.split_once('\n') {
        Some((first, rest)) if first.starts_with("# Based on ") => rest.to_owned(),
        None if body.starts_with("# Based on ") => String::new(),
        _ => body,
    }
}

/// A file [`render`] wrote, possibly edited since, with only micoff's lines taken out: the
/// header goes, and each `enable-shm = yes` it put in place of a line turning shm off is that
/// line again. Everything else (the user's own lines, old and new) stays as it is.
pub fn unrender(ours: &str) -> String {
    let body = without_header(ours);
    let mut lines = body.lines().peekable();
    let mut s = String::new();
    while let Some(line) = lines.next() {
        match line.strip_prefix(WAS).and_then(|r| r.strip_suffix('`')) {
            Some(was) => {
                s.push_str(was);
                s.push('\n');
                if lines
                    .peek()
                    .is_some_and(|l| l.trim() == format!("{KEY} = yes"))
                {
                    lines.next();
                }
            }
            None => {
                s.push_str(line);
                s.push('\n');
            }
        }
    }
    s
}

pub fn run(
    root: &Root,
    env: &UserEnv,
    opts: &Opts,
    sys: &mut dyn System,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> io::Result<i32> {
    let Some(user_conf) = env.user_client_conf() else {
        return refuse(
            opts,
            "no home folder known ($HOME is not set)",
            "run it as your user, in your own session",
            err,
        );
    };
    let path = root.path(&user_conf);
    let shown = user_conf.display().to_string();
    if sys.euid() == 0
        && root.is_system()
        && opts.mode != Mode::DryRun
        && env.user.as_deref() != Some("root")
    {
        return refuse(
            opts,
            &format!("it edits your own {shown}, and this runs as root"),
            "run it as your user, not as root",
            err,
        );
    }
    let record = user_record(root, env);
    if opts.mode == Mode::Revert {
        let removed = uninstall(&path, Some(&unrender))?;
        if !matches!(removed, Removed::Changed { .. }) {
            note(record, "client-shm", None, out);
        }
        return match removed {
            Removed::NothingThere => {
                writeln!(
                    out,
                    "fix client-shm --revert: nothing to revert ({shown} does not exist)."
                )?;
                Ok(0)
            }
            Removed::NotOurs => refuse(
                opts,
                &format!("--revert: {shown} was not written by micoff; left alone"),
                "it is your own file: change it yourself if you need to",
                err,
            ),
            Removed::Changed { .. } => refuse(
                opts,
                &format!("--revert: {shown} was changed since micoff wrote it; left alone"),
                "remove it (or the lines you do not want) yourself",
                err,
            ),
            Removed::KeptEdits { left } => {
                writeln!(
                    out,
                    "fix client-shm --revert: {shown} was changed since micoff wrote it: kept \
                     your changes, took out only micoff's lines."
                )?;
                for b in left {
                    writeln!(
                        out,
                        "A backup stays: {}; delete it if you do not need it.",
                        b.display()
                    )?;
                }
                writeln!(out, "Restart the browser for it to take effect.")?;
                Ok(0)
            }
            Removed::Removed { restored, left } => {
                writeln!(out, "fix client-shm --revert: removed {shown}.")?;
                if let Some(b) = restored {
                    writeln!(out, "Put back your previous file (from {}).", b.display())?;
                }
                for b in left {
                    writeln!(
                        out,
                        "An older backup stays: {}; delete it if you do not need it.",
                        b.display()
                    )?;
                }
                writeln!(out, "Restart the browser for it to take effect.")?;
                Ok(0)
            }
        };
    }
    let conf = facts::read_client_conf(root, env);
    if let Some(p) = &env.pulse_clientconfig {
        writeln!(
            err,
            "warning: $PULSE_CLIENTCONFIG points at {}; clients started with it ignore {shown}.",
            p.display()
        )?;
    }
    if conf.shm_on() {
        writeln!(
            out,
            "fix client-shm: nothing to do: shared memory is on ({}).",
            conf.file.as_deref().unwrap_or("no client.conf, defaults")
        )?;
        if conf.memfd_off() {
            writeln!(
                out,
                "({} only turns memfd off: clients use POSIX shared memory, srbchannel works.)",
                conf.memfd_off_lines()
            )?;
        }
        return Ok(0);
    }
    // The text we start from: the user's own file, else the system file and its .d.
    let user_exists = path.exists();
    let (base, base_name) = if user_exists {
        (root.read(&user_conf).unwrap_or_default(), shown.clone())
    } else {
        let mut text = root.read(SYSTEM_CLIENT_CONF).unwrap_or_default();
        let dot_d = format!("{SYSTEM_CLIENT_CONF}.d");
        for n in root
            .list(&dot_d)
            .into_iter()
            .filter(|n| n.ends_with(".conf"))
        {
            let p = PathBuf::from(&dot_d).join(&n);
            text.push_str(&format!("# from {}\n", p.display()));
            text.push_str(&root.read(&p).unwrap_or_default());
        }
        (text, SYSTEM_CLIENT_CONF.to_owned())
    };
    let content = render(&base, &base_name);
    match opts.mode {
        Mode::DryRun => {
            writeln!(out, "fix client-shm (dry run): would write {shown}:")?;
            match root.read(&user_conf) {
                Some(old) => write!(out, "{}", super::diff(&old, &content))?,
                None => {
                    for l in content.lines() {
                        writeln!(out, "  {l}")?;
                    }
                }
            }
            if !conf.fixable_by_user_conf() {
                writeln!(
                    out,
                    "Shared memory would stay off: {}.",
                    still_off_reason(&conf, &shown)
                )?;
            }
            writeln!(out, "Nothing changed. Apply with: {}", opts.apply_command)?;
            Ok(0)
        }
        Mode::Apply => {
            let installed = install(&path, &content)?;
            note(
                record,
                "client-shm",
                Some(serde_json::json!({ "path": user_conf })),
                out,
            );
            match installed {
                Installed::AlreadyApplied => {
                    writeln!(out, "fix client-shm: already applied ({shown}).")?
                }
                Installed::Written { backup } => {
                    writeln!(out, "fix client-shm: wrote {shown}.")?;
                    if let Some(b) = backup {
                        writeln!(
                            out,
                            "Your previous file is kept as {} (--revert puts it back).",
                            b.display()
                        )?;
                    }
                }
            }
            // What clients get now.
            let after = facts::read_client_conf(root, env);
            if after.shm_on() {
                writeln!(out, "New clients use it: restart the browser.")?;
                Ok(0)
            } else {
                writeln!(
                    out,
                    "Shared memory is still off for clients: {}.",
                    still_off_reason(&after, &shown)
                )?;
                Ok(EXIT_PARTIAL)
            }
        }
        Mode::Revert => Ok(0),
    }
}

/// Why clients still get `enable-shm = no` with our file in place.
fn still_off_reason(c: &facts::ShmConf, ours: &str) -> String {
    if c.from_env {
        format!(
            "$PULSE_CLIENTCONFIG makes clients read {} instead of {ours} ({}); set enable-shm = \
             yes there or unset the variable",
            c.file.as_deref().unwrap_or("?"),
            c.shm_off_lines()
        )
    } else {
        format!(
            "{} (micoff does not edit files in client.conf.d); set enable-shm = yes there",
            c.shm_off_lines()
        )
    }
}
