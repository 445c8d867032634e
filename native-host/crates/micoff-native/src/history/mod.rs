//! The audio path's CPU history, kept by the host so that the browser is not woken during a call to
//! draw the popup's chart (docs/design/popup-savings.md): 5 minutes of samples, the mute / release /
//! unmute marks, the released intervals and the CPU-seconds they saved. The extension tells the host
//! the phase on every change (a `phase` request: events, not ticks); the popup asks for the history
//! when it opens and subscribes to its samples while it is open.
//!
//! Module map: [`audio_path`] (which of a CPU report's processes and threads are the audio path:
//! pure); [`book`] (the history and the saving's definition over samples and phase changes: pure,
//! unit-tested and held to the extension's former figures by `native-host/tests/history.rs`);
//! [`watch`] (the per-connection task that samples while a call is on or a popup watches).

pub mod audio_path;
pub mod book;
#[cfg(test)]
mod tests;
pub mod watch;

pub use self::audio_path::{audio_path_cpu_pct, is_audio_thread, AUDIO_THREAD_WORDS};
pub use self::book::{CpuHistory, BASELINE_MS, HISTORY_SPAN_MS};
pub use self::watch::{
    anchored_clock, Clock, HistoryWatch, Update, RESOLVE_EVERY, UNWATCHED_INTERVAL,
};
