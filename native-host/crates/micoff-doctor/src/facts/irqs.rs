//! The interrupt lines that matter for audio: a sound card's own, its USB host controller's, any
//! USB host controller's ([`IrqInfo`], [`read_irqs`]).

use serde::Serialize;

use crate::facts::cards::Card;
use crate::parse::{self, IrqLine};
use crate::root::Root;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IrqInfo {
    pub line: IrqLine,
    pub affinity_list: Option<String>,
}

fn is_usb_hcd(action: &str) -> bool {
    ["xhci_hcd", "ehci_hcd", "ohci_hcd", "uhci_hcd"]
        .iter()
        .any(|h| action.starts_with(h))
}

/// IRQ lines that serve a sound card (its own, or its USB host controller's) or any USB host
/// controller.
pub(crate) fn read_irqs(root: &Root, cards: &[Card]) -> Vec<IrqInfo> {
    let lines = parse::interrupts(&root.read("/proc/interrupts").unwrap_or_default());
    let card_irqs: Vec<u32> = cards.iter().flat_map(Card::audio_irqs).collect();
    lines
        .into_iter()
        .filter(|l| {
            card_irqs.contains(&l.irq)
                || l.actions
                    .iter()
                    .any(|a| a.starts_with("snd_") || is_usb_hcd(a))
        })
        .map(|line| IrqInfo {
            affinity_list: root.read_trim(format!("/proc/irq/{}/smp_affinity_list", line.irq)),
            line,
        })
        .collect()
}
