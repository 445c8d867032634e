//! `micoff-host fix client-shm`: turns PulseAudio client shared memory back on
//! (`enable-shm = yes`, `enable-memfd = yes`) in the user's `~/.config/pulse/client.conf`, only
//! where it was turned off.
//!
//! PulseAudio reads only the FIRST client.conf it finds (`$PULSE_CLIENTCONFIG`, the user's, then
//! /etc/pulse/client.conf) plus that file's `.d` directory. So when the user has no file of
//! their own, ours starts as a copy of the system settings, or creating it would drop them.

use std::io::{self, Write};
use std::path::PathBuf;

use super::{install, uninstall, Installed, Mode, Opts, Removed, System, MARKER};
use crate::facts::{self, UserEnv};
use crate::parse;
use crate::root::Root;

const KEYS: [&str; 2] = ["enable-shm", "enable-memfd"];

fn is_off_line(line: &str) -> bool {
    let t = line.trim();
    if t.starts_with(';') || t.starts_with('#') {
        return false;
    }
    match t.split_once('=') {
        Some((k, v)) => KEYS.contains(&k.trim()) && parse::pulse_bool(v) == Some(false),
        None => false,
    }
}

/// Our version of the user's file: `base` (the user's file or the system settings) with every
/// line turning shm/memfd off replaced by its `yes` form (the old line kept as a comment).
pub fn render(base: &str, base_name: &str) -> String {
    let mut s = format!(
        "{MARKER} fix client-shm (micoff). Undo with: micoff-host fix client-shm --revert\n"
    );
    s.push_str(&format!(
        "# Based on {base_name}; shared memory re-enabled so clients can use srbchannel.\n"
    ));
    for line in base.lines() {
        if line.starts_with(MARKER) {
            continue;
        }
        if is_off_line(line) {
            let key = line.split_once('=').map(|(k, _)| k.trim()).unwrap_or("");
            s.push_str(&format!("; micoff: was `{}`\n{key} = yes\n", line.trim()));
        } else {
            s.push_str(line);
            s.push('\n');
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
        writeln!(
            out,
            "fix client-shm: no home directory known ($HOME unset)."
        )?;
        return Ok(1);
    };
    let path = root.path(&user_conf);
    let shown = user_conf.display().to_string();
    if sys.euid() == 0
        && root.is_system()
        && opts.mode != Mode::DryRun
        && env.user.as_deref() != Some("root")
    {
        writeln!(
            out,
            "fix client-shm edits your own {shown}; run it as your user, not as root."
        )?;
        return Ok(1);
    }
    if opts.mode == Mode::Revert {
        return match uninstall(&path, opts.force)? {
            Removed::NothingThere => {
                writeln!(
                    out,
                    "fix client-shm --revert: nothing to revert ({shown} does not exist)."
                )?;
                Ok(0)
            }
            Removed::NotOurs => {
                writeln!(
                    out,
                    "fix client-shm --revert: {shown} was not written by micoff; left alone."
                )?;
                Ok(1)
            }
            Removed::Removed { restored } => {
                writeln!(out, "fix client-shm --revert: removed {shown}.")?;
                if let Some(b) = restored {
                    writeln!(out, "Restored your previous file from {}.", b.display())?;
                }
                writeln!(out, "Restart the browser for it to take effect.")?;
                Ok(0)
            }
        };
    }
    let facts = facts::gather(root, env);
    let conf = &facts.client_conf;
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
        return Ok(0);
    }
    // The text we start from: the user's own file, else the system file and its .d.
    let user_exists = path.exists();
    let (base, base_name) = if user_exists {
        (root.read(&user_conf).unwrap_or_default(), shown.clone())
    } else {
        let mut text = root.read("/etc/pulse/client.conf").unwrap_or_default();
        for n in root
            .list("/etc/pulse/client.conf.d")
            .into_iter()
            .filter(|n| n.ends_with(".conf"))
        {
            let p = PathBuf::from("/etc/pulse/client.conf.d").join(&n);
            text.push_str(&format!("# from {}\n", p.display()));
            text.push_str(&root.read(&p).unwrap_or_default());
        }
        (text, "/etc/pulse/client.conf".to_owned())
    };
    // Lines in a .d directory of the user's file we do not edit.
    let user_dot_d: Vec<&String> = conf
        .disabled_by
        .iter()
        .filter(|d| d.contains("client.conf.d/") && user_exists)
        .collect();
    for d in &user_dot_d {
        writeln!(
            err,
            "warning: {d} also turns it off; micoff does not edit that file."
        )?;
    }
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
            writeln!(
                out,
                "Nothing changed. Apply with: micoff-host fix client-shm --apply"
            )?;
        }
        Mode::Apply => match install(&path, &content)? {
            Installed::AlreadyApplied => {
                writeln!(out, "fix client-shm: already applied ({shown}).")?
            }
            Installed::Written { backup } => {
                writeln!(out, "fix client-shm: wrote {shown}.")?;
                if let Some(b) = backup {
                    writeln!(out, "Your previous file was kept as {}.", b.display())?;
                }
                writeln!(out, "New clients use it: restart the browser.")?;
            }
        },
        Mode::Revert => {}
    }
    Ok(0)
}
