//! `latency set` / `reset`: check the request against the server, [`plan`] the file operations,
//! [`apply`] them all or nothing (unless a dry run), then say what was done
//! ([`compose_set_result`]). Two entries that differ in where the server's facts come from:
//! [`set_for_server`] is told the server, [`set_from_view`] works it out from what the audio
//! server answered (and without one, dry, shows the plans it cannot choose between).

use super::apply::{apply, make_executable};
use super::audio_server::{server_of, ServerView, Unreachable};
use super::configured::{configured_from, our_files};
use super::error::LatencyError;
use super::message::compose_set_result;
use super::paths::Paths;
use super::plan::{plan, Action, SetRequest};
use super::status::push_unique;
use crate::protocol::{
    validate_capture_ms, LatencyServer, LatencySetResult, Mechanism, ServerKind,
};
use micoff_files::diff::unified;
use micoff_files::record::Journal;
use micoff_files::shown;

/// Sets or resets for a server already described: `server` picks the mechanism when the request
/// does not name one; `open_streams` (streams open at it) shapes the restart advice.
pub fn set_for_server(
    paths: &Paths,
    req: &SetRequest,
    server: &LatencyServer,
    open_streams: usize,
) -> Result<LatencySetResult, LatencyError> {
    let mechanism = mechanism_for(req, server)?;
    let actions = plan(paths, req, mechanism);
    let mut unrecorded = None;
    if !req.dry_run {
        let made = apply(&actions).map_err(LatencyError::Failed)?;
        make_executable(paths, &actions).map_err(LatencyError::Failed)?;
        unrecorded = record(paths, &actions, &made).err();
    }
    let mut result = compose_set_result(paths, req, mechanism, server.kind, open_streams, &actions);
    // Said in the result itself, for the command line and the extension alike.
    if let Some(e) = unrecorded {
        result.message.push_str(&format!(
            "\nnote: micoff's record of what it wrote was not updated ({e}): `micoff-host \
             uninstall` cannot undo this latency set (`micoff-host latency reset` can)"
        ));
    }
    Ok(result)
}

/// Sets or resets from what the audio server answered (`view`): its mechanism unless the request
/// names one. A set that needs the server's mechanism is refused when the server could not be
/// asked, unless it is a dry run: that shows the plan of the mechanism micoff's files already use,
/// or of both ([`dry_run_without_server`]). A reset never needs it.
pub fn set_from_view(
    paths: &Paths,
    req: &SetRequest,
    view: &ServerView,
) -> Result<LatencySetResult, LatencyError> {
    if req.capture_ms.is_some() && req.mechanism.is_none() {
        if let Err(unreachable) = &view.info {
            if req.dry_run {
                return dry_run_without_server(paths, req, unreachable);
            }
            return Err(LatencyError::ServerUnavailable(format!(
                "{}; cannot tell which mechanism applies (`micoff-host latency set --mechanism` \
                 chooses one, `--dry-run` shows the plans)",
                unreachable.reason
            )));
        }
    }
    let server = server_of(view.info.as_ref().ok());
    set_for_server(paths, req, &server, view.streams.len())
}

/// A dry run of a set with no audio server to ask: the plan of the mechanism micoff's files on
/// disk already use, or when there are none the plans of both (pipewire-pulse's rule, PulseAudio's
/// launch environment), each as that server would get it, in one result (`mechanism` null when
/// both are shown), saying first which server could not be reached.
fn dry_run_without_server(
    paths: &Paths,
    req: &SetRequest,
    unreachable: &Unreachable,
) -> Result<LatencySetResult, LatencyError> {
    // An unknown server: the advice on restarting says it could not tell whether streams are open.
    let on = |mechanism: Mechanism| {
        let server = LatencyServer {
            kind: ServerKind::Unknown,
            version: None,
            mechanism,
        };
        set_for_server(paths, req, &server, 0)
    };
    let head = format!(
        "no audio server reachable ({}), so which mechanism applies is not known",
        unreachable.reason
    );
    if let Some((_, mechanism, _, _)) = configured_from(&our_files(paths)) {
        let mut r = on(mechanism)?;
        r.message = format!(
            "{head}; micoff's files use {}, so this is its plan:\n{}",
            mechanism.name(),
            r.message
        );
        return Ok(r);
    }
    let rule = on(Mechanism::PipewirePulseRule)?;
    let env = on(Mechanism::LaunchEnvironment)?;
    let union = |a: &[String], b: &[String]| {
        let mut all = a.to_vec();
        for x in b {
            push_unique(&mut all, x);
        }
        all
    };
    let mut both = LatencySetResult {
        mechanism: None,
        changed_files: union(&rule.changed_files, &env.changed_files),
        skipped_files: union(&rule.skipped_files, &env.skipped_files),
        needs_restart: union(&rule.needs_restart, &env.needs_restart),
        ..env.clone()
    };
    both.message = format!(
        "{head}; the plan on each (`--mechanism` picks one):\n\
         on pipewire-pulse 0.3.44 or later ({}):\n{}\n\
         on PulseAudio or an older PipeWire ({}):\n{}",
        Mechanism::PipewirePulseRule.name(),
        indent(&rule.message),
        Mechanism::LaunchEnvironment.name(),
        indent(&env.message),
    );
    Ok(both)
}

fn indent(text: &str) -> String {
    text.lines()
        .map(|l| format!("  {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// What a set or reset with `mechanism` would change in the files, as unified diffs (a dry run
/// shows them: the rule, the desktop entry copies, the wrappers).
pub fn planned_diff(paths: &Paths, req: &SetRequest, mechanism: Mechanism) -> String {
    let mut out = String::new();
    for a in plan(paths, req, mechanism) {
        let (path, after) = match &a {
            Action::Write { path, content } => (path, content.as_str()),
            Action::Remove { path } => (path, ""),
            Action::Unchanged { .. } | Action::Skip { .. } => continue,
        };
        let before = micoff_files::read_regular_text(path, micoff_files::MAX_TEXT_BYTES)
            .ok()
            .flatten();
        out.push_str(&unified(&shown(path), before.as_deref(), after));
    }
    out
}

/// The command micoff's record names for the latency files.
const BY: &str = "latency set";

/// Notes what a set or reset wrote and removed in micoff's record (`latency reset` and
/// `micoff-host uninstall` take them back). A record that cannot be written does not undo the set:
/// why is returned, for the result's message.
fn record(paths: &Paths, actions: &[Action], made: &[std::path::PathBuf]) -> Result<(), String> {
    let Some(at) = paths.record() else {
        return Ok(());
    };
    let mut journal = Journal::at(at, BY);
    journal.made_folders(made);
    for a in actions {
        match a {
            Action::Write { path, content } => {
                journal.wrote(path, content.as_bytes(), paths.role_of(path));
            }
            // Written by an older micoff before it kept a record: recorded now.
            Action::Unchanged { path } => {
                if let Ok(Some(now)) =
                    micoff_files::read_regular(path, micoff_files::MAX_TEXT_BYTES)
                {
                    journal.wrote(path, &now, paths.role_of(path));
                }
            }
            Action::Remove { path } => journal.forget_file(path),
            Action::Skip { .. } => {}
        }
    }
    journal.commit().map_err(|e| e.to_string())
}

/// The mechanism `req` uses on `server`; refuses a `capture_ms` out of range and a rule where
/// PulseAudio would ignore it.
fn mechanism_for(req: &SetRequest, server: &LatencyServer) -> Result<Mechanism, LatencyError> {
    if let Some(ms) = req.capture_ms {
        validate_capture_ms(ms).map_err(LatencyError::Failed)?;
    }
    let mechanism = req.mechanism.unwrap_or(server.mechanism);
    if req.capture_ms.is_some()
        && mechanism == Mechanism::PipewirePulseRule
        && server.kind == ServerKind::Pulseaudio
    {
        return Err(LatencyError::Failed(
            "a pipewire-pulse rule has no effect on PulseAudio: use the launch environment".into(),
        ));
    }
    Ok(mechanism)
}
