//! The audio path of a CPU report: the audio server and Chromium's audio service whole, plus the
//! audio threads of every other process. The same selection as the popup's "Audio path CPU" line
//! (`audioPathCpuPct` in extension/src/shared/cpu-view.ts; `native-host/tests/history.rs` checks
//! the two spell it alike). Pure.

use crate::protocol::{CpuReport, Role};

/// Thread names (Linux `comm`, 15 characters) doing audio work, matched case-insensitively as
/// substrings: Chromium `AudioInputDevic`, `AudioOutputDevi`, `AudioProcessing`, `ThreadPoolAudio`,
/// `WebRTC_W_and_N`, `threaded-ml` (libpulse); Firefox `GraphRunner`, `AudioIP~allback`, `cubeb*`.
/// cpu-view.ts's `AUDIO_THREAD` is these words joined by `|`.
pub const AUDIO_THREAD_WORDS: [&str; 8] = [
    "audio",
    "webrtc",
    "threaded-ml",
    "graphrunner",
    "cubeb",
    "pulse",
    "capture",
    "media",
];

/// Whether a thread's `comm` names audio work (ASCII case folding, as a JavaScript `/i` pattern).
pub fn is_audio_thread(comm: &str) -> bool {
    let comm = comm.to_ascii_lowercase();
    AUDIO_THREAD_WORDS.iter().any(|w| comm.contains(w))
}

/// Processes whose every thread is audio work.
fn is_audio_process(role: Role) -> bool {
    role == Role::AudioService || role.is_audio_server()
}

/// The audio path's CPU, % of one core (`cpu_pct`: from `stat`, as the popup has always charted).
/// Counts the threads listed in the report: take it before the report is trimmed to a frame.
pub fn audio_path_cpu_pct(report: &CpuReport) -> f64 {
    let mut sum = 0.0;
    for p in &report.processes {
        if is_audio_process(p.role) {
            sum += p.rates.cpu_pct;
        } else {
            for t in p.threads.iter().filter(|t| is_audio_thread(&t.comm)) {
                sum += t.rates.cpu_pct;
            }
        }
    }
    sum
}
