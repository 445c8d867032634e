//! Turns [`Facts`] (and the audio server's facts) into findings ([`diagnose`]). Pure: no I/O.
//!
//! Module map: `finding` (what a finding is, and the helpers every check shares); one file per
//! category, in the order of the report: `audio_server`, `sound`, `intel_hda`, `cpu`, `kernel`,
//! `irq`, `limits`.

mod audio_server;
mod cpu;
mod finding;
mod intel_hda;
mod irq;
mod kernel;
mod limits;
mod sound;

pub use audio_server::LOW_LATENCY_US;
pub use finding::{AudioInput, Finding, NoAudio, Status};
pub use sound::SHORT_PERIOD_US;

use audio_server::{audio_server, client_shm, device_latency, srbchannel};
use cpu::{cpu_governor, cpu_model, cpu_smt};
use intel_hda::{hda_controller, hda_position_fix, hda_power_save, hda_udelay};
use irq::irq_sharing;
use kernel::{kernel_config, kernel_isolation, kernel_preempt, kernel_threadirqs};
use limits::{cpu_dma_latency, rt_limits};
use sound::{pcm_periods, sound_cards};

use crate::facts::Facts;

/// Every check, in the order of the report.
pub fn diagnose(facts: &Facts, audio: AudioInput<'_>) -> Vec<Finding> {
    vec![
        audio_server(audio),
        device_latency(audio, true),
        device_latency(audio, false),
        srbchannel(facts, audio),
        client_shm(facts, audio),
        sound_cards(facts),
        pcm_periods(facts, audio),
        hda_controller(facts),
        hda_udelay(facts),
        hda_position_fix(facts),
        hda_power_save(facts),
        cpu_model(facts),
        cpu_governor(facts),
        cpu_smt(facts),
        kernel_preempt(facts),
        kernel_threadirqs(facts),
        kernel_isolation(facts),
        kernel_config(facts),
        irq_sharing(facts),
        rt_limits(facts),
        cpu_dma_latency(facts),
    ]
}
