//! Parsers for the text files the doctor reads. No I/O: each takes the file's text.

use std::collections::BTreeMap;

use serde::Serialize;

/// One line pair of /proc/asound/cards.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CardLine {
    pub index: u32,
    /// `PCH`, `Headset`.
    pub id: String,
    /// The ALSA driver name: `HDA-Intel`, `USB-Audio`.
    pub driver: String,
    /// `HDA Intel PCH`.
    pub name: String,
    /// `HDA Intel PCH at 0xdf240000 irq 134`.
    pub long_name: String,
}

/// ```text
///  0 [PCH            ]: HDA-Intel - HDA Intel PCH
///                       HDA Intel PCH at 0xdf240000 irq 134
/// ```
pub fn asound_cards(text: &str) -> Vec<CardLine> {
    let mut cards = Vec::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let Some((head, rest)) = line.split_once("]:") else {
            continue;
        };
        let Some((idx, id)) = head.split_once('[') else {
            continue;
        };
        let Ok(index) = idx.trim().parse() else {
            continue;
        };
        let (driver, name) = match rest.split_once(" - ") {
            Some((d, n)) => (d.trim().to_owned(), n.trim().to_owned()),
            None => (rest.trim().to_owned(), String::new()),
        };
        let long_name = match lines.peek() {
            Some(next) if !next.contains("]:") => {
                let s = next.trim().to_owned();
                lines.next();
                s
            }
            _ => String::new(),
        };
        cards.push(CardLine {
            index,
            id: id.trim().to_owned(),
            driver,
            name,
            long_name,
        });
    }
    cards
}

/// /proc/asound/modules: ` 0 snd_hda_intel`.
pub fn asound_modules(text: &str) -> BTreeMap<u32, String> {
    text.lines()
        .filter_map(|l| {
            let mut it = l.split_whitespace();
            Some((it.next()?.parse().ok()?, it.next()?.to_owned()))
        })
        .collect()
}

/// `irq 134` in a card's long name.
pub fn irq_in_long_name(long_name: &str) -> Option<u32> {
    let words: Vec<&str> = long_name.split_whitespace().collect();
    words
        .windows(2)
        .find(|w| w[0] == "irq")
        .and_then(|w| w[1].trim_end_matches(',').parse().ok())
}

/// `at usb-0000:00:14.0-2, full speed` -> `0000:00:14.0` (the USB host controller's PCI slot).
pub fn usb_controller_in_long_name(long_name: &str) -> Option<String> {
    let i = long_name.find("usb-")?;
    let slot = long_name[i + 4..].get(..12)?;
    is_pci_slot(slot).then(|| slot.to_owned())
}

/// A PCI address as sysfs names devices: `dddd:bb:dd.f` (hex domain, bus, device; function 0-7).
pub fn is_pci_slot(s: &str) -> bool {
    let b = s.as_bytes();
    let hex = |r: std::ops::Range<usize>| b[r].iter().all(u8::is_ascii_hexdigit);
    b.len() == 12
        && b[4] == b':'
        && b[7] == b':'
        && b[10] == b'.'
        && hex(0..4)
        && hex(5..7)
        && hex(8..10)
        && (b'0'..=b'7').contains(&b[11])
}

/// `usb1`, `usb12`: a USB bus (root hub) in a sysfs device path.
pub fn is_usb_bus(s: &str) -> bool {
    s.strip_prefix("usb")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|c| c.is_ascii_digit()))
}

/// hw_params of an open PCM substream (`closed` when it is not open).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HwParams {
    pub format: Option<String>,
    pub channels: Option<u32>,
    pub rate_hz: Option<u32>,
    pub period_size_frames: Option<u64>,
    pub buffer_size_frames: Option<u64>,
}

impl HwParams {
    pub fn period_us(&self) -> Option<u64> {
        frames_to_us(self.period_size_frames?, self.rate_hz?)
    }
    pub fn buffer_us(&self) -> Option<u64> {
        frames_to_us(self.buffer_size_frames?, self.rate_hz?)
    }
}

fn frames_to_us(frames: u64, rate: u32) -> Option<u64> {
    // None rather than an overflow for frame counts no real device has.
    (rate > 0)
        .then(|| frames.checked_mul(1_000_000))
        .flatten()
        .map(|f| f / u64::from(rate))
}

pub fn hw_params(text: &str) -> Option<HwParams> {
    if text.trim() == "closed" || text.trim().is_empty() {
        return None;
    }
    let kv = colon_map(text);
    let num = |k: &str| {
        kv.get(k)
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse::<u64>().ok())
    };
    Some(HwParams {
        format: kv.get("format").cloned(),
        channels: num("channels").and_then(|v| u32::try_from(v).ok()),
        rate_hz: num("rate").and_then(|v| u32::try_from(v).ok()),
        period_size_frames: num("period_size"),
        buffer_size_frames: num("buffer_size"),
    })
}

/// /proc/asound/cardN/pcmXY/subZ/status: `closed` or `state: RUNNING` ...
pub fn pcm_state(status: &str) -> String {
    if status.trim() == "closed" {
        return "closed".into();
    }
    colon_map(status)
        .get("state")
        .cloned()
        .unwrap_or_else(|| "unknown".into())
}

fn colon_map(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect()
}

/// One numbered line of /proc/interrupts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IrqLine {
    pub irq: u32,
    pub count: u64,
    /// The handlers on this line (`snd_hda_intel:card0`, `xhci_hcd`); more than one = shared.
    pub actions: Vec<String>,
}

pub fn interrupts(text: &str) -> Vec<IrqLine> {
    let mut lines = text.lines();
    let ncpu = lines
        .next()
        .map(|h| {
            h.split_whitespace()
                .filter(|w| w.starts_with("CPU"))
                .count()
        })
        .unwrap_or(0);
    let mut out = Vec::new();
    for line in lines {
        let Some((num, rest)) = line.split_once(':') else {
            continue;
        };
        let Ok(irq) = num.trim().parse::<u32>() else {
            continue;
        };
        let words: Vec<&str> = rest.split_whitespace().collect();
        let counts = words
            .iter()
            .take(ncpu)
            .take_while(|w| w.chars().all(|c| c.is_ascii_digit()))
            .count();
        // Saturating: counters near u64::MAX (a corrupt or hostile file) must not overflow.
        let count = words[..counts]
            .iter()
            .filter_map(|w| w.parse::<u64>().ok())
            .fold(0u64, u64::saturating_add);
        let tail = &words[counts..];
        // "IR-PCI-MSI 514048-edge snd_hda_intel:card0" / "IO-APIC 16-fasteoi ehci_hcd:usb1, snd_hda_intel"
        let start = tail
            .iter()
            .position(|w| w.ends_with("-edge") || w.ends_with("-level") || w.ends_with("-fasteoi"))
            .map(|p| p + 1)
            .unwrap_or_else(|| tail.len().saturating_sub(1));
        let names = tail.get(start..).unwrap_or_default().join(" ");
        let actions = names
            .split(',')
            .map(|a| a.trim().to_owned())
            .filter(|a| !a.is_empty())
            .collect();
        out.push(IrqLine {
            irq,
            count,
            actions,
        });
    }
    out
}

/// `key = value` lines of PulseAudio's client.conf / daemon.conf (`;` and `#` comments).
pub fn pulse_conf(text: &str) -> Vec<(String, String)> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with(';') && !l.starts_with('#'))
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect()
}

/// PulseAudio's boolean spelling (pa_parse_boolean).
pub fn pulse_bool(v: &str) -> Option<bool> {
    match v.trim().to_ascii_lowercase().as_str() {
        "1" | "y" | "yes" | "t" | "true" | "on" => Some(true),
        "0" | "n" | "no" | "f" | "false" | "off" => Some(false),
        _ => None,
    }
}

/// One `domain type item value` line of limits.conf.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LimitLine {
    pub domain: String,
    pub kind: String,
    pub item: String,
    pub value: String,
}

pub fn limits_conf(text: &str) -> Vec<LimitLine> {
    text.lines()
        .map(|l| l.split('#').next().unwrap_or_default().trim())
        .filter_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            (w.len() == 4).then(|| LimitLine {
                domain: w[0].to_owned(),
                kind: w[1].to_owned(),
                item: w[2].to_owned(),
                value: w[3].to_owned(),
            })
        })
        .collect()
}

/// `Max realtime priority  0  0` and `Max locked memory  8388608  8388608  bytes` of
/// /proc/<pid>/limits: (soft, hard).
pub fn proc_limits(text: &str, name: &str) -> Option<(String, String)> {
    let line = text.lines().find(|l| l.starts_with(name))?;
    let mut it = line[name.len()..].split_whitespace();
    Some((it.next()?.to_owned(), it.next()?.to_owned()))
}

/// Selected `CONFIG_X=y` lines of a kernel config (plain text).
pub fn kernel_config(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter_map(|l| {
            let l = l.trim();
            if let Some(name) = l
                .strip_prefix("# ")
                .and_then(|r| r.strip_suffix(" is not set"))
            {
                return Some((name.to_owned(), "n".to_owned()));
            }
            let (k, v) = l.split_once('=')?;
            k.starts_with("CONFIG_")
                .then(|| (k.to_owned(), v.trim_matches('"').to_owned()))
        })
        .collect()
}

/// `isolcpus=2,3 threadirqs quiet` -> [("isolcpus", Some("2,3")), ("threadirqs", None), ...].
pub fn cmdline(text: &str) -> Vec<(String, Option<String>)> {
    // Everything after a lone `--` goes to init, not the kernel.
    text.split_whitespace()
        .take_while(|w| *w != "--")
        .map(|w| match w.split_once('=') {
            Some((k, v)) => (k.to_owned(), Some(v.to_owned())),
            None => (w.to_owned(), None),
        })
        .collect()
}

/// /proc/cpuinfo: model name, logical CPU count, physical core count (distinct
/// `physical id`/`core id` pairs; falls back to the logical count).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CpuInfo {
    pub model: Option<String>,
    pub logical: usize,
    pub physical_cores: usize,
}

pub fn cpuinfo(text: &str) -> CpuInfo {
    let mut model = None;
    let mut logical = 0;
    let mut cores = std::collections::BTreeSet::new();
    let mut phys = String::new();
    for line in text.lines() {
        let Some((k, v)) = line.split_once(':') else {
            continue;
        };
        let (k, v) = (k.trim(), v.trim());
        match k {
            "processor" => logical += 1,
            "model name" if model.is_none() => model = Some(v.to_owned()),
            "physical id" => phys = v.to_owned(),
            "core id" => {
                cores.insert(format!("{phys}/{v}"));
            }
            _ => {}
        }
    }
    CpuInfo {
        model,
        logical,
        physical_cores: if cores.is_empty() {
            logical
        } else {
            cores.len()
        },
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn cards_and_modules() {
        let text = " 0 [PCH            ]: HDA-Intel - HDA Intel PCH\n                      HDA Intel PCH at 0xdf240000 irq 134\n 1 [Headset        ]: USB-Audio - Jabra EVOLVE LINK\n                      GN Audio A/S Jabra EVOLVE LINK at usb-0000:00:14.0-2, full speed\n";
        let cards = asound_cards(text);
        assert_eq!(cards.len(), 2);
        assert_eq!(cards[0].id, "PCH");
        assert_eq!(cards[0].driver, "HDA-Intel");
        assert_eq!(irq_in_long_name(&cards[0].long_name), Some(134));
        assert_eq!(cards[1].index, 1);
        assert_eq!(
            usb_controller_in_long_name(&cards[1].long_name).as_deref(),
            Some("0000:00:14.0")
        );
        assert!(asound_cards("--- no soundcards ---\n").is_empty());
        assert!(is_pci_slot("0000:00:1f.3"));
        assert!(is_pci_slot("0000:3c:00.0"));
        assert!(!is_pci_slot("0000:00:1f.8"));
        assert!(!is_pci_slot("pci0000:00"));
        assert!(!is_pci_slot("0000:00:1g.3"));
        assert!(is_usb_bus("usb1") && is_usb_bus("usb12"));
        assert!(!is_usb_bus("usb") && !is_usb_bus("1-2") && !is_usb_bus("usbmon"));
        let m = asound_modules(" 0 snd_hda_intel\n 1 snd_usb_audio\n");
        assert_eq!(m.get(&1).map(String::as_str), Some("snd_usb_audio"));
    }

    #[test]
    fn pcm_files() {
        let hw = hw_params("access: MMAP_INTERLEAVED\nformat: S16_LE\nsubformat: STD\nchannels: 2\nrate: 48000 (48000/1)\nperiod_size: 1024\nbuffer_size: 16384\n").unwrap();
        assert_eq!(hw.rate_hz, Some(48000));
        assert_eq!(hw.period_us(), Some(21333));
        assert_eq!(hw.buffer_us(), Some(341333));
        assert_eq!(hw_params("closed\n"), None);
        assert_eq!(pcm_state("closed\n"), "closed");
        assert_eq!(pcm_state("state: RUNNING\nowner_pid   : 1234\n"), "RUNNING");
    }

    #[test]
    fn interrupt_lines() {
        let text = "           CPU0       CPU1       \n  0:         36          0   IO-APIC   2-edge      timer\n 16:        100         20   IO-APIC  16-fasteoi   ehci_hcd:usb1, snd_hda_intel:card0\n134:       5000       6000   IR-PCI-MSI 514048-edge      snd_hda_intel:card0\nNMI:          0          0   Non-maskable interrupts\n";
        let irqs = interrupts(text);
        assert_eq!(irqs.len(), 3);
        assert_eq!(
            irqs[1].actions,
            vec!["ehci_hcd:usb1", "snd_hda_intel:card0"]
        );
        assert_eq!(irqs[1].count, 120);
        assert_eq!(irqs[2].irq, 134);
        assert_eq!(irqs[2].actions, vec!["snd_hda_intel:card0"]);
    }

    #[test]
    fn conf_files() {
        let c = pulse_conf("; enable-shm = yes\nenable-shm = no\n# x\n enable-memfd=0\n");
        assert_eq!(
            c,
            vec![
                ("enable-shm".to_owned(), "no".to_owned()),
                ("enable-memfd".to_owned(), "0".to_owned())
            ]
        );
        assert_eq!(pulse_bool("No"), Some(false));
        assert_eq!(pulse_bool("maybe"), None);
        let l = limits_conf("# c\n@audio - rtprio 95 # comment\n*  soft core 0\nbad line\n");
        assert_eq!(l.len(), 2);
        assert_eq!(l[0].item, "rtprio");
        let pl = "Limit                     Soft Limit           Hard Limit           Units     \nMax locked memory         8388608              8388608              bytes     \nMax realtime priority     0                    0                    \n";
        assert_eq!(
            proc_limits(pl, "Max realtime priority"),
            Some(("0".into(), "0".into()))
        );
        let k = kernel_config("CONFIG_HZ=250\n# CONFIG_PREEMPT_RT is not set\nCONFIG_X=\"a\"\n");
        assert_eq!(k.get("CONFIG_PREEMPT_RT").map(String::as_str), Some("n"));
        assert_eq!(k.get("CONFIG_X").map(String::as_str), Some("a"));
        let c = cmdline("BOOT_IMAGE=/vmlinuz quiet threadirqs isolcpus=2,3 -- init-arg");
        assert!(c.contains(&("threadirqs".into(), None)));
        assert!(c.contains(&("isolcpus".into(), Some("2,3".into()))));
        assert!(!c.iter().any(|(k, _)| k == "init-arg"));
    }

    #[test]
    fn cpu() {
        let t = "processor\t: 0\nmodel name\t: Intel(R) Core(TM) i3-6100U CPU @ 2.30GHz\nphysical id\t: 0\ncore id\t\t: 0\n\nprocessor\t: 1\nmodel name\t: Intel(R) Core(TM) i3-6100U CPU @ 2.30GHz\nphysical id\t: 0\ncore id\t\t: 1\n\nprocessor\t: 2\nphysical id\t: 0\ncore id\t\t: 0\n\nprocessor\t: 3\nphysical id\t: 0\ncore id\t\t: 1\n";
        let c = cpuinfo(t);
        assert_eq!(c.logical, 4);
        assert_eq!(c.physical_cores, 2);
        assert!(c.model.unwrap_or_default().contains("i3-6100U"));
    }
}
