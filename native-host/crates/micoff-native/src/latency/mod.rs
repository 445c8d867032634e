//! Capture latency: what the audio server grants the browsers' record streams, what micoff has
//! configured, and the writers that configure it.
//!
//! Two mechanisms, one per server (docs/design/capture-latency.md):
//! - pipewire-pulse (0.3.44+): a `pulse.rules` drop-in in
//!   `$XDG_CONFIG_HOME/pipewire/pipewire-pulse.conf.d/` that sets `pulse.min.frag` on the browsers'
//!   capture clients (Chromium's capture context "Chromium input" / "Google Chrome input";
//!   Firefox's one context by its binary: `pulse.min.frag` acts on record streams only), and a
//!   minimum quantum (`pulse.min.quantum`, `pulse.min.req`) on Chromium's playback context
//!   ("Chromium" / "Google Chrome" with the browser's binary), whose ~10 ms would otherwise pace the
//!   graph in a call that plays on the capture's card. It applies to clients that connect after
//!   pipewire-pulse restarts.
//! - PulseAudio (and older PipeWire): `PULSE_LATENCY_MSEC` in the browser's launch environment,
//!   through a copy of the browser's desktop entry in `$XDG_DATA_HOME/applications` (which
//!   overrides the system one), and a wrapper of the browser's command in `~/.local/bin` (for a
//!   browser started by name: a terminal, a launcher). libpulse applies it to every stream of the
//!   process: playback too.
//!
//! Every file written here carries micoff-files' one mark (the marker line, then a meta line, then
//! the sha256 seal: `marker`); nothing without them is ever changed or removed, and a file with them
//! is rewritten or removed whether edited since or not (an older micoff's, without a seal, too). Writes are atomic (temporary file + rename). Nothing is
//! restarted but, on request, an idle Chromium audio service (`restart`): the results say what
//! needs a restart.
//!
//! The wire types (`Browser`, `LatencyStatus`, `LatencySetResult`, ...) are the protocol's
//! ([`crate::protocol`]). The audio server comes in as data ([`ServerView`], asked by the caller),
//! so nothing here depends on the host's `deps`.
//!
//! Module map:
//! - `browser`: capture latency's view of micoff-browsers' table (capture client names, binaries,
//!   commands, desktop entries).
//! - `marker`: how a file says it is micoff's (`MARKER`, `META`, `read_meta`, the seal).
//! - `paths`: where the files go (`Paths`, from an environment).
//! - `content`: the files' text (the drop-in, a desktop entry copy, a wrapper).
//! - `configured`: what micoff's files on disk configure.
//! - `audio_server`: which server it is, the mechanism it takes, what it answered (`ServerView`).
//! - `proc`: what /proc says of the browsers and the audio server (`World`, `ProcWorld`).
//! - `status`: `latency status` (`compute_status`, pure; `status`).
//! - `plan`: what a set is asked (`SetRequest`) and its file operations (`plan`, `Action`).
//! - `apply`: the operations carried out all or nothing, with the rollback.
//! - `message`: the set's result put into words (`compose_set_result`).
//! - `set`: `set_for_server`, `set_from_view`: check, plan, apply (noted in micoff's record),
//!   compose; `planned_diff`: a dry run's diffs.
//! - `restart`: ending an idle Chromium audio service.
//! - `error`: `LatencyError`.

mod apply;
mod audio_server;
mod browser;
mod configured;
mod content;
mod error;
mod marker;
mod message;
mod paths;
mod plan;
mod proc;
mod restart;
mod set;
mod status;

#[cfg(test)]
mod tests;

pub use self::apply::apply;
pub use self::audio_server::{
    parse_version, server_of, ServerView, Unreachable, PIPEWIRE_MIN_RULES,
};
pub use self::configured::{configured_from, our_files, OurFile};
pub use self::content::{
    desktop_entry_content, min_frag, min_req, rule_content, wrapper_content, LATENCY_ENV,
};
pub use self::error::LatencyError;
pub use self::marker::{read_meta, MARKER, META};
pub use self::message::compose_set_result;
pub use self::paths::{Paths, RULE_FILE_NAME};
pub use self::plan::{plan, Action, SetRequest};
pub use self::proc::{ProcWorld, World};
pub use self::restart::{
    audio_services, restart_audio_services, AudioService, RestartResult, AUDIO_SERVICE_SWITCH,
};
pub use self::set::{planned_diff, set_for_server, set_from_view};
pub use self::status::ms;
pub use self::status::{
    capture_streams, compute_status, status, CHROMIUM_DEFAULT_CAPTURE_US, TOLERANCE_US,
};
