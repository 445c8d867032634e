//! Interrupt findings: whether a sound card's interrupt is shared, and which cores take it.

use crate::facts::{self, Facts};
use crate::findings::finding::{no_sound_card, not_for_no_card, Finding, Status, F};

fn irq_line_label(i: &facts::IrqInfo) -> String {
    format!(
        "IRQ {} {}{} cpus {}",
        i.line.irq,
        i.line.actions.join(", "),
        if i.line.actions.len() > 1 {
            " [shared]"
        } else {
            ""
        },
        i.affinity_list.as_deref().unwrap_or("?")
    )
}

pub(crate) fn irq_sharing(facts: &Facts) -> Finding {
    let f = F::new("irq_sharing", "irq", "Sound card interrupts");
    let why = "When a sound card shares its interrupt (a USB card: its USB controller's) with \
               another device, both drivers run on every interrupt and audio waits behind the \
               other device; `cpus` lists the cores that take it (smp_affinity_list).";
    let mut details: Vec<String> = facts
        .irqs
        .iter()
        .map(|i| format!("{} ({} interrupts)", irq_line_label(i), i.line.count))
        .collect();
    if let Some(no_card) = no_sound_card(facts) {
        return f
            .make(Status::NotApplicable, not_for_no_card(&no_card), why)
            .with_details(details);
    }
    // (who, line) for every line that carries a card's audio.
    let mut relevant: Vec<(String, &facts::IrqInfo)> = Vec::new();
    for c in &facts.cards {
        let who = match &c.usb_controller {
            Some(slot) => format!("card{} {} via USB {slot}", c.index, c.id),
            None => format!("card{} {}", c.index, c.id),
        };
        let irqs = c.audio_irqs();
        if irqs.is_empty() {
            if c.is_usb() {
                details.push(format!(
                    "card{}: the interrupt of its USB host controller is unknown",
                    c.index
                ));
            }
            continue;
        }
        for irq in irqs {
            if let Some(i) = facts.irqs.iter().find(|i| i.line.irq == irq) {
                relevant.push((who.clone(), i));
            }
        }
    }
    // Lines of snd_* handlers no card claimed (a card whose IRQ is not in its long name).
    let unclaimed: Vec<&facts::IrqInfo> = facts
        .irqs
        .iter()
        .filter(|i| {
            i.line.actions.iter().any(|a| a.starts_with("snd_"))
                && !relevant.iter().any(|(_, r)| r.line.irq == i.line.irq)
        })
        .collect();
    for i in unclaimed {
        relevant.push((i.line.actions.join(", "), i));
    }
    if relevant.is_empty() {
        return f
            .make(
                Status::NotApplicable,
                "no sound card interrupt found in /proc/interrupts",
                why,
            )
            .with_details(details);
    }
    let shared: Vec<String> = relevant
        .iter()
        .filter(|(_, i)| i.line.actions.len() > 1)
        .map(|(who, i)| format!("{who}: IRQ {} ({})", i.line.irq, i.line.actions.join(", ")))
        .collect();
    let cur = relevant
        .iter()
        .map(|(who, i)| format!("{who}: {}", irq_line_label(i)))
        .collect::<Vec<_>>()
        .join("; ");
    let finding = if shared.is_empty() {
        f.make(Status::Ok, format!("not shared: {cur}"), why)
    } else {
        f.make(
            Status::WorthChanging,
            format!("shared: {}", shared.join("; ")),
            why,
        )
        .with_hint(
            "no setting unshares an old-style (legacy) interrupt: plug the other device (or the \
             USB headset) into a port on another controller (lsusb -t shows which), or turn on \
             message-signalled interrupts (MSI) for it in its driver's options",
        )
    };
    finding.with_details(details)
}
