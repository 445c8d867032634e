//! Intel HD-audio findings: the controller, the Skylake+ capture udelay, `position_fix` live and
//! configured (micoff's own file included), `power_save`.

use crate::commands::{FIX_HDA, RELOAD_HDA, REVERT_HDA};
use crate::facts::{self, Card, Facts, OurHdaConf};
use crate::findings::finding::{no_sound_card, not_for_no_card, Finding, Status, F};
use crate::hda;
use crate::kernel::{self, UdelayState};
use crate::ours::HDA_CONF_PATH;

fn dev_label(c: &Card) -> String {
    match c.hda_dev {
        Some(d) => format!("card{} (snd_hda_intel #{d})", c.index),
        None => format!("card{}", c.index),
    }
}

pub(crate) fn hda_controller(facts: &Facts) -> Finding {
    let f = F::new("hda_controller", "intel_hda", "Intel HD-audio controller");
    let why = "On Intel processors from Skylake (2015) on, the sound driver of older kernels \
               (snd_hda_intel) keeps the CPU busy for 20 µs each time it checks how far \
               recording has got.";
    if let Some(no_card) = no_sound_card(facts) {
        return f.make(Status::NotApplicable, not_for_no_card(&no_card), why);
    }
    let hda: Vec<&Card> = facts.cards.iter().filter(|c| c.is_hda_intel()).collect();
    if hda.is_empty() {
        return f.make(
            Status::NotApplicable,
            "the Intel HD-audio driver (snd_hda_intel) is not in use",
            why,
        );
    }
    let details: Vec<String> = hda
        .iter()
        .map(|c| match &c.pci {
            Some(p) => format!(
                "{} {}: PCI {:04x}:{:04x}{} -> {}",
                dev_label(c),
                c.id,
                p.vendor,
                p.device,
                p.slot
                    .as_deref()
                    .map(|s| format!(" at {s}"))
                    .unwrap_or_default(),
                c.skylake_plus
                    .as_deref()
                    .map(|n| format!("Intel {n} (Skylake or later)"))
                    .unwrap_or_else(|| "not an Intel Skylake-or-later controller".into())
            ),
            None => format!("{} {}: PCI id unknown", dev_label(c), c.id),
        })
        .collect();
    let skl = hda.iter().filter(|c| c.skylake_plus.is_some()).count();
    let cur = format!(
        "{} card(s) on snd_hda_intel, {skl} Intel Skylake or later",
        hda.len()
    );
    f.make(Status::Ok, cur, why).with_details(details)
}

/// `position_fix=1 (LPIB)`.
fn pf_label(v: i32) -> String {
    format!("position_fix={v} ({})", hda::position_fix_name(v))
}

pub(crate) fn hda_udelay(facts: &Facts) -> Finding {
    let f = F::new(
        "hda_udelay",
        "intel_hda",
        "Recording busy-wait in the kernel (Intel Skylake or later)",
    );
    let why = format!(
        "Kernels before 5.16 keep the CPU busy for 20 µs (a udelay) each time the sound driver \
         checks how far recording has got, unless they carry the November 2021 fix ({} or \
         later in those series). PulseAudio checks constantly, so recording burns CPU in the \
         kernel: measured, up to 29 % of the recording thread's time. The driver option \
         position_fix=1 (or 0, 2, 3, 4, 6) reads the position another way and avoids it; the \
         default (-1) and 5 do not.",
        kernel::udelay_fixed_in_stable_list()
    );
    if let Some(no_card) = no_sound_card(facts) {
        return f.make(Status::NotApplicable, not_for_no_card(&no_card), why);
    }
    let skl: Vec<&Card> = facts
        .cards
        .iter()
        .filter(|c| c.is_intel_skl_hda())
        .collect();
    if skl.is_empty() {
        return f.make(
            Status::NotApplicable,
            "no Intel Skylake-or-later sound controller in use",
            why,
        );
    }
    let k = &facts.kernel;
    let Some(v) = k.version else {
        return f.make(
            Status::NotApplicable,
            format!("kernel version unreadable ({:?})", k.release),
            why,
        );
    };
    let kdesc = if k.release.starts_with(&v.to_string()) {
        format!("kernel {v}")
    } else {
        format!("kernel {v} ({})", k.release)
    };
    match kernel::skl_capture_udelay(v) {
        UdelayState::Removed => f.make(Status::Ok, format!("{kdesc}: has the fix"), why),
        UdelayState::NotIntroduced => f.make(
            Status::Ok,
            format!("{kdesc}: older than the code with the busy-wait"),
            why,
        ),
        UdelayState::Present => {
            let live = |c: &Card| facts.live_position_fix(c.position_fix_index());
            let unfixed: Vec<&Card> = skl
                .iter()
                .copied()
                .filter(|c| !hda::bypasses_skl_udelay(live(c)))
                .collect();
            if unfixed.is_empty() {
                let by: Vec<String> = skl
                    .iter()
                    .map(|c| format!("{} {}", dev_label(c), pf_label(live(c))))
                    .collect();
                return f.make(
                    Status::Ok,
                    format!("{kdesc} has the busy-wait, avoided by {}", by.join(", ")),
                    why,
                );
            }
            let names = unfixed
                .iter()
                .map(|c| format!("{} {}", dev_label(c), pf_label(live(c))))
                .collect::<Vec<_>>()
                .join(", ");
            let cur = format!("{kdesc} still has the busy-wait, and {names} use it");
            // Already configured (by anyone) for the next load: only the reload is missing.
            let pending = facts
                .next_position_fix(&unfixed, None)
                .filter(|next| next.on_udelay.is_empty());
            // A setting applied after micoff's own file that keeps a controller on the udelay:
            // `fix hda` cannot win against it (it would write, then say so and exit 3).
            let overriding = facts.next_position_fix(&unfixed, None).filter(|n| {
                !n.on_udelay.is_empty()
                    && n.file != HDA_CONF_PATH
                    && facts::applied_after_ours(&n.file)
            });
            if let Some(next) = overriding {
                let values = next
                    .on_udelay
                    .iter()
                    .map(|c| format!("{} position_fix={}", dev_label(c), next.value_for(c)))
                    .collect::<Vec<_>>()
                    .join(", ");
                return f.make(Status::WorthChanging, cur, why).with_hint(format!(
                    "{} sets {values} and is applied after {HDA_CONF_PATH}, so micoff's fix \
                     cannot win: change its position_fix there (1 avoids the busy-wait), then \
                     reload the sound driver while nothing plays or records, or restart",
                    next.file
                ));
            }
            match pending {
                Some(facts::NextPositionFix { file, .. }) => f
                    .make(
                        Status::WorthChanging,
                        format!("{cur} until the sound driver (snd_hda_intel) is reloaded"),
                        why,
                    )
                    .with_fix(RELOAD_HDA)
                    .with_hint(format!(
                        "{file} already sets a position_fix that avoids it; it takes effect \
                         when the sound driver is reloaded while nothing plays or records on \
                         the card, or after a restart"
                    )),
                None => f
                    .make(Status::WorthChanging, cur, why)
                    .with_fix(FIX_HDA)
                    .with_hint(format!(
                        "writes position_fix=1 for those controllers into {HDA_CONF_PATH} and \
                         offers to reload the sound driver; or upgrade the kernel to {}",
                        kernel::udelay_fixed_release_for(v)
                    )),
            }
        }
    }
}

pub(crate) fn hda_position_fix(facts: &Facts) -> Finding {
    let f = F::new(
        "hda_position_fix",
        "intel_hda",
        "How the sound driver reads the position (snd_hda_intel position_fix)",
    );
    let why = "position_fix holds one value per controller (entry n is the n-th controller the \
               driver finds, not sound card n), read when the driver loads: a value set in \
               /etc/modprobe.d only counts after the driver is reloaded or the machine \
               restarted.";
    if let Some(no_card) = no_sound_card(facts) {
        return f.make(Status::NotApplicable, not_for_no_card(&no_card), why);
    }
    let cards: Vec<&Card> = facts.cards.iter().filter(|c| c.is_hda_intel()).collect();
    let (Some(params), false) = (facts.hda_params.as_ref(), cards.is_empty()) else {
        return f.make(
            Status::NotApplicable,
            "the Intel HD-audio driver (snd_hda_intel) is not in use",
            why,
        );
    };
    let live: Vec<String> = cards
        .iter()
        .map(|c| {
            let v = hda::position_fix_for(&params.position_fix, c.position_fix_index());
            format!("{}={v} ({})", dev_label(c), hda::position_fix_name(v))
        })
        .collect();
    let mut details: Vec<String> = facts
        .modprobe_hda
        .iter()
        .map(|o| format!("{}: {}", o.file, o.line))
        .collect();
    // What modprobe would pass on the next load (the last position_fix= wins).
    let pending: Vec<String> = match facts.configured_position_fix(None) {
        Some((conf, _)) => cards
            .iter()
            .filter(|c| {
                hda::position_fix_for(&conf, c.position_fix_index())
                    != hda::position_fix_for(&params.position_fix, c.position_fix_index())
            })
            .map(|c| dev_label(c))
            .collect(),
        None => Vec::new(),
    };
    let cur = format!("live: {}", live.join(", "));
    // micoff's own file on a kernel that no longer needs it (upgraded since `fix hda`): the way
    // out is removing it, never a reload that would make a stale value take effect.
    if let Some(why_useless) = (facts.micoff_hda_conf != OurHdaConf::Absent)
        .then(|| facts.kernel.version.and_then(kernel::no_skl_udelay))
        .flatten()
    {
        if !pending.is_empty() {
            details.push(format!(
                "configured value differs from the live one for {}",
                pending.join(", ")
            ));
        }
        let finding = f.make(
            Status::WorthChanging,
            format!("{cur}; {HDA_CONF_PATH} (written by micoff-host fix hda) is no longer needed"),
            why,
        );
        // `fix hda --revert` removes the file only as micoff wrote it; an edited one it leaves
        // alone, so it is not offered then.
        let finding = if facts.micoff_hda_conf == OurHdaConf::AsWritten {
            finding.with_fix(REVERT_HDA).with_hint(format!(
                "{why_useless}: revert it; do not reload the sound driver to make it take \
                 effect (the kernel's default returns at the next driver load or restart)"
            ))
        } else {
            finding.with_hint(format!(
                "{why_useless}: remove {HDA_CONF_PATH} yourself (it was edited since micoff \
                 wrote it, so `fix hda --revert` leaves it alone); do not reload the sound \
                 driver to make it take effect"
            ))
        };
        return finding.with_details(details);
    }
    if pending.is_empty() {
        f.make(Status::Ok, cur, why).with_details(details)
    } else {
        details.push(format!(
            "configured value differs from the live one for {}",
            pending.join(", ")
        ));
        f.make(
            Status::WorthChanging,
            format!("{cur}; /etc/modprobe.d sets another value, waiting for a driver reload"),
            why,
        )
        .with_fix(RELOAD_HDA)
        .with_hint(
            "reload the sound driver while nothing plays or records on the card (close the \
             programs using it), or restart",
        )
        .with_details(details)
    }
}

pub(crate) fn hda_power_save(facts: &Facts) -> Finding {
    let f = F::new(
        "hda_power_save",
        "intel_hda",
        "Sound chip power saving (snd_hda_intel power_save)",
    );
    let why = "With power saving on, the sound chip (codec) switches off after that many idle \
               seconds; opening the microphone then takes longer and may click. It costs no CPU \
               while recording.";
    if let Some(no_card) = no_sound_card(facts) {
        return f.make(Status::NotApplicable, not_for_no_card(&no_card), why);
    }
    match facts.hda_params.as_ref() {
        Some(p) if facts.cards.iter().any(|c| c.is_hda_intel()) => {
            let ps = p.power_save.as_deref().unwrap_or("?");
            let cur = if ps == "0" {
                "0 (the sound chip stays on)".to_owned()
            } else {
                format!("{ps} s (the sound chip switches off when idle)")
            };
            f.make(Status::Ok, cur, why)
        }
        _ => f.make(
            Status::NotApplicable,
            "the Intel HD-audio driver (snd_hda_intel) is not in use",
            why,
        ),
    }
}
