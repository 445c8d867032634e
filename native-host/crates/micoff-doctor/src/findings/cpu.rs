//! CPU findings: the model, the frequency governor, SMT.

use crate::commands::{FIX_GOVERNOR, SMT_OFF};
use crate::facts::cpufreq::PERFORMANCE;
use crate::facts::Facts;
use crate::findings::finding::{Finding, Status, F};

pub(crate) fn cpu_model(facts: &Facts) -> Finding {
    let f = F::new("cpu_model", "cpu", "CPU");
    let c = &facts.cpu;
    let cur = format!(
        "{}: {} logical CPUs, {} cores",
        c.model.as_deref().unwrap_or("unknown model"),
        c.logical,
        c.physical_cores
    );
    let status = if c.logical == 0 {
        Status::NotApplicable
    } else {
        Status::Ok
    };
    f.make(
        status,
        cur,
        "Per-thread CPU figures are in % of one of these CPUs.",
    )
}

pub(crate) fn cpu_governor(facts: &Facts) -> Finding {
    let f = F::new(
        "cpu_governor",
        "cpu",
        "CPU speed policy (frequency governor)",
    );
    let why = "Changing speed briefly pauses a core, and power-saving policies speed up late: the \
               audio server's short bursts of work run at a low clock and take longer. \
               `performance` keeps the clock up (at some power cost).";
    if facts.governors.is_empty() {
        return f.make(
            Status::NotApplicable,
            "no speed control (cpufreq): a virtual machine or a fixed clock",
            why,
        );
    }
    let mut by_gov: std::collections::BTreeMap<&str, Vec<&str>> = Default::default();
    for (cpu, g) in &facts.governors {
        by_gov.entry(g).or_default().push(cpu);
    }
    let cur = by_gov
        .iter()
        .map(|(g, cpus)| format!("{g} on {}", cpus.join(",")))
        .collect::<Vec<_>>()
        .join("; ");
    let slow: Vec<&str> = facts
        .governors
        .iter()
        .filter(|(_, g)| g != PERFORMANCE)
        .map(|(cpu, _)| cpu.as_str())
        .collect();
    if slow.is_empty() {
        return f.make(Status::Ok, cur, why);
    }
    // Only where the fixer can set it: a core whose driver does not offer `performance` is left
    // out of the fix (it would refuse the write), and explained instead.
    if slow
        .iter()
        .all(|cpu| facts.no_performance.iter().any(|n| n == cpu))
    {
        return f.make(Status::WorthChanging, cur, why).with_hint(format!(
            "the cpufreq driver of {} offers no {PERFORMANCE} governor, so micoff cannot set it; \
             the firmware's power settings (or another cpufreq driver) decide there",
            slow.join(",")
        ));
    }
    f.make(Status::WorthChanging, cur, why)
        .with_fix(FIX_GOVERNOR)
        .with_hint(
            "until reboot, revertible with --revert; --cpus LIST sets only some cores (e.g. \
             the ones the audio threads run on)",
        )
}

pub(crate) fn cpu_smt(facts: &Facts) -> Finding {
    let f = F::new("cpu_smt", "cpu", "Hyper-threading (SMT)");
    let why = "Two hardware threads share each core, so how quickly the audio thread gets to run \
               varies a little; it matters for live music work under 5 ms, hardly for calls.";
    match facts.smt_active {
        None => f.make(Status::NotApplicable, "not supported", why),
        Some(false) => f.make(Status::Ok, "off", why),
        Some(true) => f
            .make(Status::WorthChanging, "on", why)
            .with_fix(SMT_OFF)
            .with_hint(
                "until reboot (it halves the logical CPUs); add nosmt to the kernel command line \
                 to keep it off",
            ),
    }
}
