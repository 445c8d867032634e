//! The audio path's CPU history, kept by the host so the browser is not woken during a call to draw
//! the popup's chart (docs/design/popup-savings.md): 5 minutes of samples, the mute / release /
//! unmute marks and the CPU-seconds releases saved. The extension sends each phase change.
//!
//! Module map: [`audio_path`] (which processes and threads are the audio path: pure); [`book`] (the
//! history and the saving's definition: pure, held to the extension's former figures by
//! `native-host/tests/history.rs`); [`watch`] (the per-connection sampling task).

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
