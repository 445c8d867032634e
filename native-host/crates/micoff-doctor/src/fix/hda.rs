//! `micoff-host fix hda`: `position_fix=1` (LPIB) for Intel Skylake+ HD-audio cards on kernels
//! that still spin `udelay(20)` in `azx_get_pos_skl()`, in one file of ours:
//! `/etc/modprobe.d/micoff-hda.conf`.

use std::io::{self, Write};

use super::{escalate, install, uninstall, Installed, Mode, Opts, Removed, System, MARKER};
use crate::facts::{self, Card, Facts, UserEnv};
use crate::findings::RELOAD_HDA;
use crate::hda;
use crate::kernel::{self, UdelayState};
use crate::root::Root;

pub const CONF_PATH: &str = "/etc/modprobe.d/micoff-hda.conf";
pub const LIVE_PARAM: &str = "/sys/module/snd_hda_intel/parameters/position_fix";

/// Why the fix would not help here (`None`: it would).
pub fn why_not(facts: &Facts) -> Option<String> {
    if !facts.cards.iter().any(Card::is_intel_skl_hda) {
        return Some(if facts.cards.is_empty() {
            "there is no sound card".into()
        } else {
            "no Intel Skylake-or-later HD-audio controller is driven by snd_hda_intel".into()
        });
    }
    let Some(v) = facts.kernel.version else {
        return Some(format!(
            "the kernel version ({:?}) is unreadable, so it is unknown whether it has the udelay",
            facts.kernel.release
        ));
    };
    match kernel::skl_capture_udelay(v) {
        UdelayState::Present => None,
        UdelayState::Removed => Some(format!(
            "kernel {v} no longer has the Skylake+ capture udelay; LPIB would not save anything"
        )),
        UdelayState::NotIntroduced => Some(format!(
            "kernel {v} predates azx_get_pos_skl(); there is no udelay to avoid"
        )),
    }
}

/// Card indices to set to 1: Intel Skylake+ cards on snd_hda_intel, or with `force` and none of
/// those, every Intel card on snd_hda_intel.
pub fn target_cards(facts: &Facts, force: bool) -> Vec<&Card> {
    let skl: Vec<&Card> = facts
        .cards
        .iter()
        .filter(|c| c.is_intel_skl_hda())
        .collect();
    if !skl.is_empty() || !force {
        return skl;
    }
    facts
        .cards
        .iter()
        .filter(|c| {
            c.is_hda_intel()
                && c.pci
                    .as_ref()
                    .is_some_and(|p| p.vendor == hda::INTEL_VENDOR)
        })
        .collect()
}

/// The file's text. `position_fix` is a per-card array: value k is card index k, -1 keeps the
/// driver default for cards that are not ours to change.
pub fn render(targets: &[&Card]) -> String {
    let max = targets.iter().map(|c| c.index).max().unwrap_or(0);
    let values: Vec<String> = (0..=max)
        .map(|i| {
            if targets.iter().any(|c| c.index == i) {
                "1".to_owned()
            } else {
                "-1".to_owned()
            }
        })
        .collect();
    let mut s = format!("{MARKER} fix hda (micoff). Undo with: micoff-host fix hda --revert\n");
    s.push_str(
        "# Intel Skylake+ HD-audio: read the stream position from LPIB (position_fix=1) instead\n\
         # of azx_get_pos_skl(), which spins udelay(20) on every capture position query on\n\
         # kernels before 5.16 and before the November 2021 stable updates.\n\
         # One value per card index (-1 = driver default). Card indices can change when\n\
         # devices are added; run `micoff-host doctor` after hardware changes.\n",
    );
    for c in targets {
        let pci = c
            .pci
            .as_ref()
            .map(|p| format!(" {:04x}:{:04x}", p.vendor, p.device))
            .unwrap_or_default();
        let name = c.skylake_plus.as_deref().unwrap_or("Intel HDA");
        s.push_str(&format!("# card{} {}:{pci} {name}\n", c.index, c.id));
    }
    s.push_str(&format!(
        "options snd_hda_intel position_fix={}\n",
        values.join(",")
    ));
    s
}

/// Runs `fix hda`. Returns the exit code.
pub fn run(
    root: &Root,
    env: &UserEnv,
    opts: &Opts,
    sys: &mut dyn System,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> io::Result<i32> {
    let facts = facts::gather(root, env);
    let path = root.path(CONF_PATH);
    if opts.mode == Mode::Revert {
        return revert(root, opts, sys, out);
    }
    if let Some(reason) = why_not(&facts) {
        if !opts.force {
            writeln!(out, "fix hda: nothing to do: {reason}.")?;
            writeln!(out, "No file was written. (--force writes it anyway.)")?;
            return Ok(0);
        }
        writeln!(
            err,
            "warning: --force: writing {CONF_PATH} although {reason}."
        )?;
    }
    let targets = target_cards(&facts, opts.force);
    if targets.is_empty() {
        writeln!(
            out,
            "fix hda: there is no Intel HD-audio card on snd_hda_intel to cover; nothing written."
        )?;
        return Ok(1);
    }
    let content = render(&targets);
    let existing = std::fs::read_to_string(&path).ok();
    for o in facts
        .modprobe_hda
        .iter()
        .filter(|o| o.file != CONF_PATH && o.line.contains("position_fix="))
    {
        writeln!(
            err,
            "warning: {} also sets position_fix ({}); modprobe uses the last one it reads. \
             micoff does not edit that file.",
            o.file, o.line
        )?;
    }
    if existing.as_deref() == Some(content.as_str()) {
        writeln!(out, "fix hda: already applied ({CONF_PATH}).")?;
        if opts.mode == Mode::DryRun || sys.euid() != 0 || live_matches(root, &targets) {
            report_live(root, &targets, out)?;
            return Ok(0);
        }
        return offer_reload(root, &facts, &targets, opts, sys, out);
    }
    if opts.mode == Mode::DryRun {
        writeln!(out, "fix hda (dry run): would write {CONF_PATH}:")?;
        match &existing {
            Some(old) => {
                writeln!(out, "replacing the current file (backup kept):")?;
                write!(out, "{}", super::diff(old, &content))?;
            }
            None => {
                for l in content.lines() {
                    writeln!(out, "  {l}")?;
                }
            }
        }
        writeln!(
            out,
            "Nothing changed. Apply with: sudo micoff-host fix hda --apply"
        )?;
        return Ok(0);
    }
    // Apply.
    if sys.euid() != 0 {
        writeln!(out, "fix hda would write {CONF_PATH}:")?;
        for l in content.lines() {
            writeln!(out, "  {l}")?;
        }
        return escalate("Writing /etc/modprobe.d", opts, sys, out);
    }
    match install(&path, &content)? {
        Installed::AlreadyApplied => writeln!(out, "fix hda: already applied ({CONF_PATH}).")?,
        Installed::Written { backup } => {
            writeln!(out, "fix hda: wrote {CONF_PATH}.")?;
            if let Some(b) = backup {
                writeln!(out, "The previous file was kept as {}.", b.display())?;
            }
        }
    }
    if live_matches(root, &targets) {
        report_live(root, &targets, out)?;
        return Ok(0);
    }
    writeln!(
        out,
        "It takes effect after the snd_hda_intel module is reloaded or the machine rebooted."
    )?;
    offer_reload(root, &facts, &targets, opts, sys, out)
}

fn live_values(root: &Root) -> Option<Vec<i32>> {
    root.read(LIVE_PARAM).map(|s| hda::parse_int_array(&s))
}

fn live_matches(root: &Root, targets: &[&Card]) -> bool {
    live_values(root).is_some_and(|live| {
        targets
            .iter()
            .all(|c| hda::position_fix_for(&live, c.index) == 1)
    })
}

fn report_live(root: &Root, targets: &[&Card], out: &mut dyn Write) -> io::Result<()> {
    match live_values(root) {
        Some(live) => {
            let per: Vec<String> = targets
                .iter()
                .map(|c| format!("card{}={}", c.index, hda::position_fix_for(&live, c.index)))
                .collect();
            if live_matches(root, targets) {
                writeln!(out, "Live value verified: position_fix {}.", per.join(", "))
            } else {
                writeln!(
                    out,
                    "Live value still {} (reload the module or reboot: {RELOAD_HDA}).",
                    per.join(", ")
                )
            }
        }
        None => writeln!(
            out,
            "snd_hda_intel is not loaded; the value applies when it loads."
        ),
    }
}

/// Reloads snd_hda_intel when no PCM of its cards is open and the user agrees, then checks the
/// live parameter.
fn offer_reload(
    root: &Root,
    facts: &Facts,
    targets: &[&Card],
    opts: &Opts,
    sys: &mut dyn System,
    out: &mut dyn Write,
) -> io::Result<i32> {
    let busy: Vec<String> = facts
        .cards
        .iter()
        .filter(|c| c.is_hda_intel())
        .flat_map(|c| {
            c.pcms
                .iter()
                .filter(|p| p.state != "closed")
                .map(move |p| format!("card{} {}/{} ({})", c.index, p.name, p.sub, p.state))
        })
        .collect();
    if !busy.is_empty() {
        writeln!(
            out,
            "Not reloading: a stream is open on {}. Close the programs using it (or stop the audio \
             server), then run `{RELOAD_HDA}`, or reboot.",
            busy.join(", ")
        )?;
        return Ok(0);
    }
    if !sys.can_reload(root) {
        writeln!(out, "To apply it now: {RELOAD_HDA}")?;
        return Ok(0);
    }
    let agreed = opts.yes
        || (sys.interactive()
            && sys.ask(
                "No stream is open on the card. Reload snd_hda_intel now?",
                out,
            ));
    if !agreed {
        writeln!(out, "To apply it now: {RELOAD_HDA}")?;
        return Ok(0);
    }
    let code = sys.run("modprobe", &["-r".into(), "snd_hda_intel".into()])?;
    if code != 0 {
        writeln!(
            out,
            "modprobe -r snd_hda_intel failed ({code}); the module is in use. Reboot to apply."
        )?;
        return Ok(1);
    }
    let code = sys.run("modprobe", &["snd_hda_intel".into()])?;
    if code != 0 {
        writeln!(out, "modprobe snd_hda_intel failed ({code}).")?;
        return Ok(1);
    }
    report_live(root, targets, out)?;
    Ok(if live_matches(root, targets) { 0 } else { 1 })
}

fn revert(root: &Root, opts: &Opts, sys: &mut dyn System, out: &mut dyn Write) -> io::Result<i32> {
    let path = root.path(CONF_PATH);
    if !path.exists() {
        writeln!(
            out,
            "fix hda --revert: nothing to revert ({CONF_PATH} does not exist)."
        )?;
        return Ok(0);
    }
    if sys.euid() != 0 {
        writeln!(out, "fix hda --revert would remove {CONF_PATH}.")?;
        return escalate("Removing /etc/modprobe.d/micoff-hda.conf", opts, sys, out);
    }
    match uninstall(&path, opts.force)? {
        Removed::NothingThere => writeln!(out, "fix hda --revert: nothing to revert.")?,
        Removed::NotOurs => {
            writeln!(
                out,
                "fix hda --revert: {CONF_PATH} was not written by micoff; left alone (--force removes it)."
            )?;
            return Ok(1);
        }
        Removed::Removed { restored } => {
            writeln!(out, "fix hda --revert: removed {CONF_PATH}.")?;
            if let Some(b) = restored {
                writeln!(out, "Restored the previous file from {}.", b.display())?;
            }
            writeln!(
                out,
                "The driver default returns after the module is reloaded ({RELOAD_HDA}) or the machine rebooted."
            )?;
        }
    }
    Ok(0)
}
