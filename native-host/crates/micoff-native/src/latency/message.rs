//! The result of `latency set` / `reset` put into words: which files changed or were skipped,
//! what needs a restart, and the message that says what to do next, line by line. Composed from
//! the plan after the work is done ([`super::set`]); it changes nothing (it only looks up the
//! browsers' own commands in `$PATH` for the wrapper notes).

use std::collections::BTreeSet;
use std::path::Path;

use super::browser::browser_list;
use super::content::LATENCY_ENV;
use super::paths::Paths;
use super::plan::{wrappers_in, Action, SetRequest};
use super::status::push_unique;
use crate::protocol::{Browser, LatencySetResult, Mechanism, ServerKind};

/// What a set with `actions` did (or, dry, would do) and what follows from it. `server_kind` and
/// `open_streams` (streams open at the server) decide the advice on restarting pipewire-pulse.
pub fn compose_set_result(
    paths: &Paths,
    req: &SetRequest,
    mechanism: Mechanism,
    server_kind: ServerKind,
    open_streams: usize,
    actions: &[Action],
) -> LatencySetResult {
    let files = FileLines::of(paths, actions, req.dry_run);
    let mut lines = files.lines;
    let mut needs_restart = Vec::new();
    if files.rule_changed {
        rule_restart_lines(
            &mut lines,
            &mut needs_restart,
            server_kind,
            open_streams,
            &req.browsers,
        );
    }
    for b in &files.env_changed {
        push_unique(&mut needs_restart, b.name());
    }
    if !files.env_changed.is_empty() {
        lines.extend(launch_env_lines(
            paths,
            actions,
            &files.env_changed,
            req.capture_ms.is_some(),
        ));
    }
    if let Some(ms) = req.capture_ms {
        let configures_any = actions
            .iter()
            .any(|a| matches!(a, Action::Write { .. } | Action::Unchanged { .. }));
        if mechanism == Mechanism::LaunchEnvironment && !configures_any {
            lines.push(no_desktop_entry_line(paths, &req.browsers, ms));
        }
    }
    if files.changed.is_empty() && files.skipped.is_empty() && req.capture_ms.is_none() {
        lines.push("nothing of micoff's is configured".into());
    }
    LatencySetResult {
        capture_ms: req.capture_ms,
        mechanism: req.capture_ms.map(|_| mechanism),
        dry_run: req.dry_run,
        changed_files: files.changed,
        skipped_files: files.skipped,
        needs_restart,
        message: lines.join("\n"),
    }
}

/// One line per action, and what the actions touched.
struct FileLines {
    changed: Vec<String>,
    skipped: Vec<String>,
    lines: Vec<String>,
    /// The pipewire-pulse drop-in was written or removed.
    rule_changed: bool,
    /// Browsers whose desktop entry copy or wrapper was written or removed.
    env_changed: BTreeSet<Browser>,
}

impl FileLines {
    fn of(paths: &Paths, actions: &[Action], dry_run: bool) -> Self {
        let verb = |now: &str, later: &str| if dry_run { later } else { now }.to_owned();
        let mut out = FileLines {
            changed: Vec::new(),
            skipped: Vec::new(),
            lines: Vec::new(),
            rule_changed: false,
            env_changed: BTreeSet::new(),
        };
        for a in actions {
            match a {
                Action::Write { path, .. } => {
                    out.changed.push(path.display().to_string());
                    out.lines.push(format!(
                        "{} {}",
                        verb("wrote", "would write"),
                        path.display()
                    ));
                }
                Action::Remove { path } => {
                    out.changed.push(path.display().to_string());
                    out.lines.push(format!(
                        "{} {}",
                        verb("removed", "would remove"),
                        path.display()
                    ));
                }
                Action::Unchanged { path } => out
                    .lines
                    .push(format!("{} is already as wanted", path.display())),
                Action::Skip { path, why } => {
                    out.skipped.push(path.display().to_string());
                    out.lines.push(format!("skipped: {why}"));
                }
            }
            if let Action::Write { path, .. } | Action::Remove { path } = a {
                if *path == paths.rule_file() {
                    out.rule_changed = true;
                }
                if let Some(b) = launch_file_browser(paths, path) {
                    out.env_changed.insert(b);
                }
            }
        }
        out
    }
}

/// pipewire-pulse reads its rules only when it starts, and a browser's capture context only
/// reconnects when its audio service restarts: when, and how safely, to restart each.
fn rule_restart_lines(
    lines: &mut Vec<String>,
    needs_restart: &mut Vec<String>,
    server_kind: ServerKind,
    open_streams: usize,
    browsers: &[Browser],
) {
    push_unique(needs_restart, "pipewire-pulse");
    lines.push(if server_kind == ServerKind::Unknown {
        "pipewire-pulse reads its rules when it starts: the server could not be reached to \
         tell whether a stream is open; restart it only while none is \
         (`systemctl --user restart pipewire-pulse`)"
            .to_owned()
    } else if open_streams == 0 {
        "pipewire-pulse reads its rules when it starts: no stream is open, so restarting it \
         now is safe (`systemctl --user restart pipewire-pulse`)"
            .to_owned()
    } else {
        format!(
            "pipewire-pulse reads its rules when it starts: {open_streams} stream(s) are open, and \
             restarting it cuts them; restart it after the call \
             (`systemctl --user restart pipewire-pulse`)"
        )
    });
    for b in Browser::ALL.into_iter().filter(|b| *b != Browser::Firefox) {
        if browsers.is_empty() || browsers.contains(&b) {
            push_unique(needs_restart, b.name());
        }
    }
    lines.push(
        "then restart the browser's audio service so its capture context reconnects (until \
         then a running Chromium cannot capture at all): \
         `micoff-host latency restart-audio-service` ends Chromium's/Chrome's when it has no \
         stream open (it comes back by itself; or Shift+Esc, end \"Utility: Audio Service\"); \
         Firefox: restart Firefox"
            .into(),
    );
}

/// A launch environment changes only when the browser starts again; what the wrappers need of
/// `$PATH`; and that the variable changes playback too (`setting`: not a removal).
fn launch_env_lines(
    paths: &Paths,
    actions: &[Action],
    env_changed: &BTreeSet<Browser>,
    setting: bool,
) -> Vec<String> {
    let mut lines = vec![format!(
        "quit and start {} again (from its menu entry, or by its command) for the launch \
         environment to change",
        env_changed
            .iter()
            .map(|b| b.name())
            .collect::<Vec<_>>()
            .join(", ")
    )];
    if setting {
        lines.extend(wrapper_notes(paths, actions));
        lines.push(format!(
            "note: {LATENCY_ENV} sets the latency of every stream of the browser: playback \
             latency changes too (mouth-to-ear latency grows)"
        ));
    }
    lines
}

/// Nothing to write the launch environment into: the user starts the browser with it.
fn no_desktop_entry_line(paths: &Paths, browsers: &[Browser], capture_ms: u32) -> String {
    format!(
        "no desktop entry of {} was found in {}: start the browser with `env {LATENCY_ENV}={} \
         <browser>` yourself",
        if browsers.is_empty() {
            browser_list(&Browser::ALL)
        } else {
            browser_list(browsers)
        },
        paths
            .data_dirs
            .iter()
            .map(|d| d.join("applications").display().to_string())
            .collect::<Vec<_>>()
            .join(":"),
        capture_ms
    )
}

/// The browser a launch-environment file of micoff's configures: a desktop entry copy in the
/// user's applications folder or a wrapper in `~/.local/bin`, by its name.
fn launch_file_browser(paths: &Paths, path: &Path) -> Option<Browser> {
    let name = path.file_name()?.to_str()?;
    let parent = path.parent()?;
    Browser::ALL.into_iter().find(|b| {
        (parent == paths.user_applications() && b.desktop_ids().contains(&name))
            || (paths.bin_home.as_deref() == Some(parent) && b.commands().any(|c| c == name))
    })
}

/// What the user needs to know about the PATH wrappers among `actions`: a shell finds them only
/// when `~/.local/bin` comes before the browser's own command in `$PATH`.
fn wrapper_notes(paths: &Paths, actions: &[Action]) -> Vec<String> {
    let mut notes = Vec::new();
    for w in wrappers_in(paths, actions) {
        let Some(cmd) = w.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let Some(target) = paths.real_command(cmd) else {
            continue;
        };
        let bin = w
            .parent()
            .map_or_else(String::new, |p| p.display().to_string());
        notes.push(if paths.wrapper_first(&target) {
            format!(
                "`{cmd}` started by name (a terminal, a launcher) runs {} through it",
                w.display()
            )
        } else {
            format!(
                "{} is not in PATH before {}: `{cmd}` started by name still runs {} without \
                 {LATENCY_ENV}; put {bin} first in PATH (e.g. `export PATH=\"{bin}:$PATH\"` in \
                 your shell profile) or start the browser from its menu entry",
                bin,
                target
                    .parent()
                    .map_or_else(String::new, |p| p.display().to_string()),
                target.display(),
            )
        });
    }
    notes
}
