//! `latency set` / `reset`: check the request against the server, [`plan`] the file operations,
//! [`apply`] them all or nothing (unless a dry run), then say what was done
//! ([`compose_set_result`]). Two entries that differ in where the server's facts come from:
//! [`set_for_server`] is told the server, [`set_from_view`] works it out from what the audio
//! server answered.

use super::apply::{apply, make_executable};
use super::audio_server::{server_of, ServerView};
use super::error::LatencyError;
use super::message::compose_set_result;
use super::paths::Paths;
use super::plan::{plan, Action, SetRequest};
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
    if !req.dry_run {
        let made = apply(&actions).map_err(LatencyError::Failed)?;
        make_executable(paths, &actions).map_err(LatencyError::Failed)?;
        record(paths, &actions, &made);
    }
    Ok(compose_set_result(
        paths,
        req,
        mechanism,
        server.kind,
        open_streams,
        &actions,
    ))
}

/// Sets or resets from what the audio server answered (`view`): its mechanism unless the request
/// names one. A set that needs the server's mechanism is refused when the server could not be
/// asked; a reset never needs it.
pub fn set_from_view(
    paths: &Paths,
    req: &SetRequest,
    view: &ServerView,
) -> Result<LatencySetResult, LatencyError> {
    if req.capture_ms.is_some() && req.mechanism.is_none() {
        if let Err(unreachable) = &view.info {
            return Err(LatencyError::ServerUnavailable(format!(
                "{}; cannot tell which mechanism applies (`micoff-host latency set --mechanism` \
                 chooses one)",
                unreachable.reason
            )));
        }
    }
    let server = server_of(view.info.as_ref().ok());
    set_for_server(paths, req, &server, view.streams.len())
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
/// it is said on stderr.
fn record(paths: &Paths, actions: &[Action], made: &[std::path::PathBuf]) {
    let Some(at) = paths.record() else {
        return;
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
    if let Err(e) = journal.commit() {
        tracing::warn!(
            "micoff's record of what it wrote was not updated: {e}; `micoff-host uninstall` \
             cannot undo this latency set (`micoff-host latency reset` can)"
        );
    }
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
