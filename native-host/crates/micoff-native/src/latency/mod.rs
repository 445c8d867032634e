//! Capture latency (docs/design/capture-latency.md): what the audio server grants the browsers'
//! record streams, what micoff configured, and the writers, one mechanism per server: a
//! pipewire-pulse `pulse.rules` drop-in (`pulse.min.frag` on capture clients, a minimum quantum on
//! Chromium's playback), or `PULSE_LATENCY_MSEC` in the browser's launch environment (a desktop
//! entry copy and a PATH wrapper). Every file carries micoff-files' mark; writes are atomic. Wire
//! types are [`crate::protocol`]'s; the server comes in as data ([`ServerView`]). Modules:
//! `browser`, `marker`, `paths`, `content`, `configured`, `audio_server`, `proc`, `status`, `plan`,
//! `apply` (all or nothing), `message`, `set`, `restart` (an idle Chromium audio service), `error`.

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
