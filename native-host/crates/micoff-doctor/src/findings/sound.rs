//! The sound hardware's findings: which cards, and the PCMs' hardware periods.

use crate::commands::{LARGER_LATENCY, PIPEWIRE_QUANTUM};
use crate::facts::{Card, Facts};
use crate::findings::finding::{fmt_ms, no_sound_card, AudioInput, Finding, Status, F};

/// A hardware period this short means that many interrupts/wakeups per second.
pub const SHORT_PERIOD_US: u64 = 5_000;

fn card_label(c: &Card) -> String {
    format!(
        "card{} {} ({}, {})",
        c.index,
        c.id,
        c.driver,
        c.module.as_deref().unwrap_or("module ?")
    )
}

pub(crate) fn sound_cards(facts: &Facts) -> Finding {
    let f = F::new("sound_cards", "sound", "Sound cards");
    let why = "Which driver serves the microphone decides which of the driver checks below apply.";
    if let Some(no_card) = no_sound_card(facts) {
        return f.make(Status::NotApplicable, no_card, why);
    }
    let details = facts
        .cards
        .iter()
        .map(|c| {
            let mut s = format!("{}: {}", card_label(c), c.name);
            if let Some(p) = &c.pci {
                s.push_str(&format!(" [{:04x}:{:04x}]", p.vendor, p.device));
            }
            if let Some(u) = &c.usb_controller {
                s.push_str(&format!(" on the USB host controller at {u}"));
            }
            s
        })
        .collect::<Vec<_>>();
    let cur = facts
        .cards
        .iter()
        .map(card_label)
        .collect::<Vec<_>>()
        .join(", ");
    f.make(Status::Ok, cur, why).with_details(details)
}

pub(crate) fn pcm_periods(facts: &Facts, audio: AudioInput<'_>) -> Finding {
    let f = F::new(
        "pcm_periods",
        "sound",
        "Open sound devices: how often the hardware wakes the audio server (period)",
    );
    let why = "Each period of the sound hardware ends in an interrupt that wakes the audio \
               server; periods under 5 ms cost CPU in the driver, the server and the programs.";
    let mut details = Vec::new();
    let mut short = false;
    for c in &facts.cards {
        for p in c.pcms.iter().filter(|p| p.state != "closed") {
            let dir = if p.capture { "capture" } else { "playback" };
            let line = match &p.hw_params {
                Some(hw) => {
                    if hw.period_us().is_some_and(|us| us < SHORT_PERIOD_US) {
                        short = true;
                    }
                    format!(
                        "card{} {}/{} {dir} {}: period {} frames ({}), buffer {} frames ({}) at {} Hz",
                        c.index,
                        p.name,
                        p.sub,
                        p.state,
                        hw.period_size_frames.unwrap_or(0),
                        hw.period_us().map(fmt_ms).unwrap_or_else(|| "?".into()),
                        hw.buffer_size_frames.unwrap_or(0),
                        hw.buffer_us().map(fmt_ms).unwrap_or_else(|| "?".into()),
                        hw.rate_hz.unwrap_or(0)
                    )
                }
                None => format!("card{} {}/{} {dir} {}", c.index, p.name, p.sub, p.state),
            };
            details.push(line);
        }
    }
    if details.is_empty() {
        return f.make(Status::NotApplicable, "no sound device open", why);
    }
    let cur = format!("{} open", details.len());
    let finding = if short {
        let pipewire = audio.is_ok_and(|a| a.is_pipewire);
        f.make(
            Status::WorthChanging,
            format!("{cur}, a period under {}", fmt_ms(SHORT_PERIOD_US)),
            why,
        )
        .with_fix(if pipewire {
            PIPEWIRE_QUANTUM
        } else {
            LARGER_LATENCY
        })
        .with_hint(format!(
            "start the browser asking for a larger latency (`{LARGER_LATENCY}`, with your \
             browser's command), or on PipeWire raise the smallest block it works in (its \
             quantum: `{PIPEWIRE_QUANTUM}`, until PipeWire restarts)"
        ))
    } else {
        f.make(Status::Ok, cur, why)
    };
    finding.with_details(details)
}
