//! The sound cards: /proc/asound, each card's PCI or USB device in sysfs, its interrupts and its
//! PCMs ([`Card`], [`read_cards`]).

use std::path::PathBuf;

use serde::Serialize;

use crate::hda;
use crate::parse::{self, HwParams};
use crate::root::Root;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PciId {
    pub slot: Option<String>,
    pub vendor: u16,
    pub device: u16,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Pcm {
    /// `pcm0c`, `pcm3p`.
    pub name: String,
    pub capture: bool,
    pub sub: String,
    /// `closed`, `RUNNING`, `PREPARED`, ...
    pub state: String,
    pub hw_params: Option<HwParams>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Card {
    pub index: u32,
    pub id: String,
    pub driver: String,
    pub name: String,
    pub long_name: String,
    /// Kernel module from /proc/asound/modules (`snd_hda_intel`, `snd_usb_audio`).
    pub module: Option<String>,
    pub pci: Option<PciId>,
    /// Set for Intel Skylake-or-later HD-audio controllers.
    pub skylake_plus: Option<String>,
    /// The card's own interrupt (PCI cards).
    pub irq: Option<u32>,
    /// For a card on snd_hda_intel: its index in snd_hda_intel's own probe order, which is what
    /// the `position_fix` array is indexed by (not the ALSA card number). Approximated as the
    /// rank of the card's number among the ALSA numbers of the snd_hda_intel cards: the driver
    /// probes its controllers in PCI order and, with the default `index=-1`, each takes the next
    /// free ALSA number, so the two orders agree unless `index=` options reorder the cards.
    pub hda_dev: Option<u32>,
    /// For a USB card: the PCI slot of the USB host controller it hangs off.
    pub usb_controller: Option<String>,
    /// For a USB card: that host controller's interrupts (empty when unknown).
    pub controller_irqs: Vec<u32>,
    pub pcms: Vec<Pcm>,
}

impl Card {
    /// An Intel Skylake+ controller driven by snd_hda_intel: the one `fix hda` is about.
    pub fn is_intel_skl_hda(&self) -> bool {
        self.module.as_deref() == Some("snd_hda_intel") && self.skylake_plus.is_some()
    }

    /// The entry of snd_hda_intel's `position_fix` array that applies to this card:
    /// [`Card::hda_dev`], or the ALSA card number when that is unknown.
    pub fn position_fix_index(&self) -> u32 {
        self.hda_dev.unwrap_or(self.index)
    }

    pub fn is_hda_intel(&self) -> bool {
        self.module.as_deref() == Some("snd_hda_intel")
            || (self.module.is_none() && self.driver == "HDA-Intel")
    }

    pub fn all_closed(&self) -> bool {
        self.pcms.iter().all(|p| p.state == "closed")
    }

    /// The interrupts that carry this card's audio: its own, or its USB host controller's.
    pub fn audio_irqs(&self) -> Vec<u32> {
        match self.irq {
            Some(i) => vec![i],
            None => self.controller_irqs.clone(),
        }
    }

    pub fn is_usb(&self) -> bool {
        self.usb_controller.is_some()
            || self.module.as_deref() == Some("snd_usb_audio")
            || self.driver == "USB-Audio"
    }
}

pub(crate) fn read_cards(root: &Root) -> Vec<Card> {
    let lines = parse::asound_cards(&root.read("/proc/asound/cards").unwrap_or_default());
    let modules = parse::asound_modules(&root.read("/proc/asound/modules").unwrap_or_default());
    let mut cards: Vec<Card> = lines
        .into_iter()
        .map(|l| {
            let dev = format!("/sys/class/sound/card{}/device", l.index);
            let pci = match (
                root.read(format!("{dev}/vendor"))
                    .and_then(|v| hda::parse_hex_id(&v)),
                root.read(format!("{dev}/device"))
                    .and_then(|v| hda::parse_hex_id(&v)),
            ) {
                (Some(vendor), Some(device)) => Some(PciId {
                    slot: root.link_name(&dev),
                    vendor,
                    device,
                }),
                _ => None,
            };
            let module = modules.get(&l.index).cloned();
            let skylake_plus = pci
                .as_ref()
                .and_then(|p| hda::skylake_plus_name(p.vendor, p.device))
                .map(str::to_owned);
            let irq = parse::irq_in_long_name(&l.long_name).or_else(|| {
                pci.as_ref()
                    .and_then(|_| root.read_trim(format!("{dev}/irq")))
                    .and_then(|v| v.parse().ok())
                    .filter(|v| *v != 0)
            });
            let (usb_controller, controller_irqs) = if pci.is_none() {
                usb_host(root, &dev, &l.long_name)
            } else {
                (None, Vec::new())
            };
            Card {
                usb_controller,
                controller_irqs,
                pcms: read_pcms(root, l.index),
                index: l.index,
                id: l.id,
                driver: l.driver,
                name: l.name,
                long_name: l.long_name,
                module,
                pci,
                skylake_plus,
                irq,
                hda_dev: None,
            }
        })
        .collect();
    // snd_hda_intel's probe order, approximated by the ALSA numbers of its cards (see
    // `Card::hda_dev`); /proc/asound/cards lists them by number already, sort to be sure.
    let mut hda: Vec<(u32, usize)> = cards
        .iter()
        .enumerate()
        .filter(|(_, c)| c.is_hda_intel())
        .map(|(i, c)| (c.index, i))
        .collect();
    hda.sort_unstable();
    for (dev, (_, i)) in (0u32..).zip(hda) {
        cards[i].hda_dev = Some(dev);
    }
    cards
}

/// The PCI slot and interrupts of the USB host controller a USB sound card hangs off: the nearest
/// PCI device above the first `usbN` bus in the card's resolved sysfs device path
/// (`/sys/devices/pci0000:00/0000:00:14.0/usb1/1-2/1-2:1.0` -> `0000:00:14.0`), or failing that
/// the slot in the card's long name (`... at usb-0000:00:14.0-2, full speed`).
fn usb_host(root: &Root, device_link: &str, long_name: &str) -> (Option<String>, Vec<u32>) {
    let from_sysfs = root.canonical(device_link).and_then(|path| {
        let parts: Vec<String> = path
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        let bus = parts.iter().position(|p| parse::is_usb_bus(p))?;
        let host = parts[..bus].iter().rposition(|p| parse::is_pci_slot(p))?;
        let dir: PathBuf = parts[..=host].iter().collect();
        Some((parts[host].clone(), dir))
    });
    let (slot, dir) = match from_sysfs {
        Some((slot, dir)) => (slot, dir),
        None => match parse::usb_controller_in_long_name(long_name) {
            Some(slot) => {
                let dir = PathBuf::from(format!("/sys/bus/pci/devices/{slot}"));
                (slot, dir)
            }
            None => return (None, Vec::new()),
        },
    };
    (Some(slot), pci_irqs(root, &dir))
}

/// A PCI device's interrupts: its MSI/MSI-X vectors (`msi_irqs/`), else its legacy `irq`.
fn pci_irqs(root: &Root, dir: &std::path::Path) -> Vec<u32> {
    let mut msi: Vec<u32> = root
        .list(dir.join("msi_irqs"))
        .iter()
        .filter_map(|n| n.parse().ok())
        .collect();
    if !msi.is_empty() {
        msi.sort_unstable();
        return msi;
    }
    root.read_trim(dir.join("irq"))
        .and_then(|v| v.parse().ok())
        .filter(|v| *v != 0)
        .into_iter()
        .collect()
}

fn read_pcms(root: &Root, card: u32) -> Vec<Pcm> {
    let base = format!("/proc/asound/card{card}");
    let mut pcms = Vec::new();
    for name in root.list(&base) {
        let capture = name.starts_with("pcm") && name.ends_with('c');
        let playback = name.starts_with("pcm") && name.ends_with('p');
        if !capture && !playback {
            continue;
        }
        for sub in root
            .list(format!("{base}/{name}"))
            .into_iter()
            .filter(|s| s.starts_with("sub"))
        {
            let dir = format!("{base}/{name}/{sub}");
            let state = root
                .read(format!("{dir}/status"))
                .map(|s| parse::pcm_state(&s))
                .unwrap_or_else(|| "closed".into());
            let hw_params = root
                .read(format!("{dir}/hw_params"))
                .and_then(|s| parse::hw_params(&s));
            pcms.push(Pcm {
                name: name.clone(),
                capture,
                sub,
                state,
                hw_params,
            });
        }
    }
    pcms
}
