//! Limits findings: realtime priority and locked memory for the user, /dev/cpu_dma_latency.

use crate::commands::shell_word;
use crate::facts::Facts;
use crate::findings::finding::{Finding, Status, F};

pub(crate) fn rt_limits(facts: &Facts) -> Finding {
    let f = F::new(
        "rt_limits",
        "limits",
        "Real-time priority for audio (RTPRIO, MEMLOCK limits)",
    );
    let why = "Audio threads get real-time priority (they run before other work) only as far as \
               your limits allow (PulseAudio and PipeWire can also ask the RealtimeKit service, \
               rtkit); the memory limit lets them keep their buffers in RAM.";
    let l = &facts.limits;
    let Some(user) = l.user.as_deref() else {
        return f.make(Status::NotApplicable, "user unknown", why);
    };
    let rtprio = l
        .rtprio
        .as_ref()
        .map(|(v, _)| v.clone())
        .or_else(|| l.process_rtprio.as_ref().map(|(s, _)| s.clone()));
    let memlock = l
        .memlock
        .as_ref()
        .map(|(v, _)| v.clone())
        .or_else(|| l.process_memlock.as_ref().map(|(s, _)| s.clone()));
    let cur = format!(
        "{user}: rtprio {}, memlock {}{}",
        rtprio.as_deref().unwrap_or("0 (default)"),
        memlock.as_deref().unwrap_or("default"),
        l.rtprio
            .as_ref()
            .map(|(_, f)| format!(" ({f})"))
            .unwrap_or_default()
    );
    if user == "root" {
        return f.make(
            Status::Ok,
            format!("{cur}; root may use any real-time priority"),
            why,
        );
    }
    let rt_ok = rtprio
        .as_deref()
        .is_some_and(|v| v == "unlimited" || v.parse::<u32>().is_ok_and(|n| n > 0));
    if rt_ok {
        f.make(Status::Ok, cur, why)
    } else {
        f.make(Status::WorthChanging, cur, why)
            .with_fix(format!(
                "printf '@audio - rtprio 95\\n@audio - memlock unlimited\\n' | sudo tee \
                 /etc/security/limits.d/95-audio.conf && sudo usermod -aG audio {}",
                shell_word(user)
            ))
            .with_hint("log in again afterwards: limits and group membership apply to new sessions")
    }
}

pub(crate) fn cpu_dma_latency(facts: &Facts) -> Finding {
    let f = F::new(
        "cpu_dma_latency",
        "limits",
        "Keeping CPUs out of deep sleep (/dev/cpu_dma_latency)",
    );
    let why = "A program holding this device open keeps the CPUs out of their deepest sleep \
               states, whose wake-up delay otherwise holds audio up (JACK and PipeWire can use \
               it).";
    if facts.cpu_dma_latency {
        f.make(Status::Ok, "present", why)
    } else {
        f.make(Status::NotApplicable, "missing (container?)", why)
    }
}
