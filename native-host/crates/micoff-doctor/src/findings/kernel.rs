//! Kernel findings: preemption model, threaded interrupts, CPU isolation, the build options.

use crate::facts::Facts;
use crate::findings::finding::{no_sound_card, not_for_no_card, Finding, Status, F};
use crate::kernel::{self, PreemptBuild};

fn has_arg(facts: &Facts, key: &str) -> Option<Option<String>> {
    let cmdline = facts.cmdline.as_deref()?;
    Some(
        crate::parse::cmdline(cmdline)
            .into_iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.unwrap_or_default()),
    )
}

fn grub_hint(arg: &str) -> String {
    format!(
        "add {arg} to GRUB_CMDLINE_LINUX_DEFAULT in /etc/default/grub, run sudo update-grub \
         (grub2-mkconfig or grubby on Fedora-like systems) and reboot"
    )
}

pub(crate) fn kernel_preempt(facts: &Facts) -> Finding {
    let f = F::new(
        "kernel_preempt",
        "kernel",
        "How soon the kernel lets a woken thread run (preemption)",
    );
    let why = "With full preemption a woken audio thread runs as soon as it is ready instead of \
               waiting for the kernel to finish what it is doing (lower, steadier latency).";
    if let Some(no_card) = no_sound_card(facts) {
        return f.make(Status::NotApplicable, not_for_no_card(&no_card), why);
    }
    let Some(pv) = facts.proc_version.as_deref() else {
        return f.make(Status::NotApplicable, "/proc/version unreadable", why);
    };
    let preempt_arg = has_arg(facts, "preempt").flatten();
    match kernel::preempt_build(pv) {
        PreemptBuild::Rt => f.make(Status::Ok, "PREEMPT_RT", why),
        PreemptBuild::Full => f.make(Status::Ok, "PREEMPT (full)", why),
        PreemptBuild::Dynamic => match preempt_arg.as_deref() {
            Some("full") => f.make(Status::Ok, "PREEMPT_DYNAMIC, preempt=full", why),
            other => f
                .make(
                    Status::WorthChanging,
                    format!(
                        "PREEMPT_DYNAMIC, preempt={}",
                        other.unwrap_or("(default, usually voluntary)")
                    ),
                    why,
                )
                .with_hint(grub_hint("preempt=full")),
        },
        PreemptBuild::NoneOrVoluntary => f
            .make(
                Status::WorthChanging,
                "none or voluntary (the kernel's build string has no PREEMPT)",
                why,
            )
            .with_hint(
                "install a low-latency kernel or one built with PREEMPT_DYNAMIC (Debian 12's and \
                 Ubuntu 22.04's are), then add preempt=full to the kernel command line",
            ),
    }
}

pub(crate) fn kernel_threadirqs(facts: &Facts) -> Finding {
    let f = F::new(
        "kernel_threadirqs",
        "kernel",
        "Interrupt handlers as threads (threadirqs)",
    );
    let why = "With `threadirqs` each device's interrupt work runs as a thread whose priority can \
               be raised for the sound card (e.g. by the rtirq package), so other devices do not \
               delay audio.";
    if let Some(no_card) = no_sound_card(facts) {
        return f.make(Status::NotApplicable, not_for_no_card(&no_card), why);
    }
    let rt = facts
        .proc_version
        .as_deref()
        .is_some_and(|v| kernel::preempt_build(v) == PreemptBuild::Rt);
    match has_arg(facts, "threadirqs") {
        None => f.make(Status::NotApplicable, "/proc/cmdline unreadable", why),
        Some(Some(_)) => f.make(Status::Ok, "threadirqs on the command line", why),
        Some(None) if rt => f.make(Status::Ok, "PREEMPT_RT (always threaded)", why),
        Some(None) => f
            .make(Status::WorthChanging, "not set", why)
            .with_hint(grub_hint("threadirqs")),
    }
}

pub(crate) fn kernel_isolation(facts: &Facts) -> Finding {
    let f = F::new(
        "kernel_isolation",
        "kernel",
        "Cores kept for audio (isolcpus, nohz_full, irqaffinity)",
    );
    let why = "Keeping a core for audio alone is for live music work with round trips under \
               1 ms; calls do not need it. Shown so the interrupts' core lists below make sense.";
    if let Some(no_card) = no_sound_card(facts) {
        return f.make(Status::NotApplicable, not_for_no_card(&no_card), why);
    }
    let Some(_) = facts.cmdline.as_deref() else {
        return f.make(Status::NotApplicable, "/proc/cmdline unreadable", why);
    };
    let set: Vec<String> = ["isolcpus", "nohz_full", "irqaffinity", "rcu_nocbs"]
        .iter()
        .filter_map(|k| has_arg(facts, k).flatten().map(|v| format!("{k}={v}")))
        .collect();
    let cur = if set.is_empty() {
        "none".to_owned()
    } else {
        set.join(" ")
    };
    f.make(Status::Ok, cur, why)
}

pub(crate) fn kernel_config(facts: &Facts) -> Finding {
    let f = F::new(
        "kernel_config",
        "kernel",
        "Kernel build options (precise timers)",
    );
    let why = "Precise (high-resolution) timers let the audio server wake exactly when the \
               buffer needs it; without them its wakeups are rounded to the kernel's clock tick \
               (1-10 ms).";
    if let Some(no_card) = no_sound_card(facts) {
        return f.make(Status::NotApplicable, not_for_no_card(&no_card), why);
    }
    let Some(cfg) = facts.config.as_ref() else {
        return f.make(
            Status::NotApplicable,
            "no readable kernel config (/boot/config-*, /proc/config.gz)",
            why,
        );
    };
    let get = |k: &str| cfg.get(k).map(String::as_str).unwrap_or("n");
    let cur = format!(
        "HIGH_RES_TIMERS={} NO_HZ_IDLE={} NO_HZ_FULL={} PREEMPT_RT={} HZ={} ({})",
        get("CONFIG_HIGH_RES_TIMERS"),
        get("CONFIG_NO_HZ_IDLE"),
        get("CONFIG_NO_HZ_FULL"),
        get("CONFIG_PREEMPT_RT"),
        cfg.get("CONFIG_HZ").map(String::as_str).unwrap_or("?"),
        facts.config_file.as_deref().unwrap_or("?")
    );
    if get("CONFIG_HIGH_RES_TIMERS") == "y" {
        f.make(Status::Ok, cur, why)
    } else {
        f.make(Status::WorthChanging, cur, why)
            .with_hint("use a distribution kernel (built with CONFIG_HIGH_RES_TIMERS=y)")
    }
}
