//! `micoff-host fix hda`: `position_fix=1` (LPIB) for Intel Skylake+ HD-audio controllers on
//! kernels that still spin `udelay(20)` in `azx_get_pos_skl()`, in one file of ours:
//! `/etc/modprobe.d/micoff-hda.conf`. It acts only where that helps: not on fixed kernels, not
//! without such a controller, not where a position_fix that avoids the udelay is already set.

use std::io::{self, Write};

use super::recorded::{note, system as system_record};
use super::{
    escalate, install, is_applied, ownership_of, refuse, uninstall, Installed, Mode, Opts,
    Ownership, Removed, System, EXIT_PARTIAL, MARKER,
};
use crate::commands::RELOAD_HDA;
use crate::facts::{self, Card, Facts, OurHdaConf, UserEnv, LIVE_POSITION_FIX};
use crate::hda;
use crate::kernel;
use crate::ours::HDA_CONF_PATH;
use crate::root::Root;

/// The value we write for our controllers.
const LPIB: i32 = 1;

fn skl_cards(facts: &Facts) -> Vec<&Card> {
    facts
        .cards
        .iter()
        .filter(|c| c.is_intel_skl_hda())
        .collect()
}

/// Why the fix would not help here (`None`: it would).
pub fn why_not(facts: &Facts) -> Option<String> {
    let skl = skl_cards(facts);
    if skl.is_empty() {
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
    kernel::no_skl_udelay(v).or_else(|| already_avoided(facts, &skl))
}

/// `Some(why)` when a position_fix set by someone else (modprobe.d, the kernel command line)
/// already keeps every Skylake+ controller off the udelay path on the next load. Our own file as
/// micoff wrote it does not count here (that is "already applied"); edited since, it is one more
/// setting of someone's, which the fix replaces (keeping a backup) when it keeps the udelay.
fn already_avoided(facts: &Facts, skl: &[&Card]) -> Option<String> {
    let ours = (facts.micoff_hda_conf == OurHdaConf::AsWritten).then_some(HDA_CONF_PATH);
    let next = facts.next_position_fix(skl, ours)?;
    if !next.on_udelay.is_empty() {
        return None;
    }
    let file = &next.file;
    let values = skl
        .iter()
        .map(|c| format!("card{} position_fix={}", c.index, next.value_for(c)))
        .collect::<Vec<_>>()
        .join(", ");
    let live_ok = skl
        .iter()
        .all(|c| hda::bypasses_skl_udelay(facts.live_position_fix(c.position_fix_index())));
    Some(if live_ok {
        format!("{file} already sets {values}, which avoids the udelay, and it is live")
    } else {
        format!(
            "{file} already sets {values}, which avoids the udelay; it is not live yet: reload the \
             module with no stream open ({RELOAD_HDA}) or reboot"
        )
    })
}

/// Intel controllers on snd_hda_intel that `--force` covers where no Skylake+ one is found.
fn intel_cards(facts: &Facts) -> Vec<&Card> {
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

/// The controllers to set: the Intel Skylake+ ones on snd_hda_intel, or with `force` and none
/// of those, every Intel one on snd_hda_intel.
pub fn target_cards(facts: &Facts, force: bool) -> Vec<&Card> {
    let skl = skl_cards(facts);
    if !skl.is_empty() || !force {
        return skl;
    }
    intel_cards(facts)
}

/// The file's text. `position_fix` is a per-controller array indexed by snd_hda_intel's probe
/// order (not the ALSA card number); -1 keeps the driver default for controllers that are not
/// ours to change.
pub fn render(targets: &[&Card]) -> String {
    let max = targets
        .iter()
        .map(|c| c.position_fix_index())
        .max()
        .unwrap_or(0);
    let values: Vec<String> = (0..=max)
        .map(|i| {
            if targets.iter().any(|c| c.position_fix_index() == i) {
                LPIB.to_string()
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
         # One value per controller in snd_hda_intel's probe order (not the ALSA card number),\n\
         # -1 = driver default. The order can change when devices are added; run\n\
         # `micoff-host doctor` after hardware changes.\n",
    );
    for c in targets {
        let pci = c
            .pci
            .as_ref()
            .map(|p| format!(" {:04x}:{:04x}", p.vendor, p.device))
            .unwrap_or_default();
        let name = c.skylake_plus.as_deref().unwrap_or("Intel HDA");
        s.push_str(&format!(
            "# entry {}: card{} {}:{pci} {name}\n",
            c.position_fix_index(),
            c.index,
            c.id
        ));
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
    if opts.mode == Mode::Revert {
        return revert(root, opts, sys, out, err);
    }
    let facts = facts::gather(root, env);
    let path = root.path(HDA_CONF_PATH);
    let why_not = why_not(&facts);
    let targets = target_cards(&facts, opts.force);
    if let Some(reason) = &why_not {
        if !opts.force {
            writeln!(out, "fix hda: nothing to do: {reason}.")?;
            writeln!(out, "No file was written. (--force writes it anyway.)")?;
            return Ok(0);
        }
        if targets.is_empty() {
            return refuse(
                opts,
                &format!(
                    "--force refused: {reason}, and no Intel HD-audio controller on \
                     snd_hda_intel has a position_fix entry to set; nothing was written"
                ),
                "there is nothing for this fix to change on this machine",
                err,
            );
        }
        writeln!(
            err,
            "warning: --force: writing {HDA_CONF_PATH} although {reason}."
        )?;
    }
    let content = render(&targets);
    let existing = std::fs::read_to_string(&path).ok();
    warn_about_other_settings(&facts, err)?;
    if is_applied(existing.as_deref(), &content) {
        writeln!(out, "fix hda: already applied ({HDA_CONF_PATH}).")?;
        if report_overridden(&facts, &targets, "", out)? {
            return Ok(EXIT_PARTIAL);
        }
        let live = live_of(&facts);
        if opts.mode == Mode::DryRun || sys.euid() != 0 || live_bypasses(live, &targets) {
            report_live(live, &targets, out)?;
            return Ok(0);
        }
        return offer_reload(root, &facts, &targets, opts, sys, out, err);
    }
    if opts.mode == Mode::DryRun {
        writeln!(out, "fix hda (dry run): would write {HDA_CONF_PATH}:")?;
        match &existing {
            Some(old) => {
                if !ownership_of(old).is_ours() {
                    writeln!(
                        out,
                        "replacing a file micoff did not write (a backup is kept):"
                    )?;
                }
                write!(out, "{}", super::diff(old, &content))?;
            }
            None => {
                for l in content.lines() {
                    writeln!(out, "  {l}")?;
                }
            }
        }
        writeln!(out, "Nothing changed. Apply with: {}", opts.apply_command)?;
        return Ok(0);
    }
    // Apply.
    if sys.euid() != 0 {
        writeln!(out, "fix hda would write {HDA_CONF_PATH}:")?;
        for l in content.lines() {
            writeln!(out, "  {l}")?;
        }
        return escalate("Writing /etc/modprobe.d", opts, sys, out, err);
    }
    let installed = install(&path, &content)?;
    note(
        system_record(root),
        "hda",
        Some(serde_json::json!({ "path": HDA_CONF_PATH })),
        out,
    );
    match installed {
        Installed::AlreadyApplied => writeln!(out, "fix hda: already applied ({HDA_CONF_PATH}).")?,
        Installed::Written { backup } => {
            writeln!(out, "fix hda: wrote {HDA_CONF_PATH}.")?;
            if let Some(b) = backup {
                writeln!(
                    out,
                    "The file that was there is kept as {} (--revert puts it back).",
                    b.display()
                )?;
            }
        }
    }
    // What modprobe will actually pass now, with our file among the others (only the modprobe
    // options changed: the rest of the facts still holds).
    let after = Facts {
        modprobe_hda: facts::read_modprobe_hda(root, facts.cmdline.as_deref()),
        ..facts.clone()
    };
    if report_overridden(&after, &targets, " after a reload", out)? {
        return Ok(EXIT_PARTIAL);
    }
    // Writing the file does not change the live value: the one read above still holds.
    let live = live_of(&facts);
    if live_bypasses(live, &targets) {
        report_live(live, &targets, out)?;
        return Ok(0);
    }
    writeln!(
        out,
        "It takes effect after the snd_hda_intel module is reloaded or the machine rebooted."
    )?;
    offer_reload(root, &facts, &targets, opts, sys, out, err)
}

/// Other position_fix settings and whether they win over ours (modprobe applies options in
/// file-name order, then the kernel command line; the last value wins).
fn warn_about_other_settings(facts: &Facts, err: &mut dyn Write) -> io::Result<()> {
    for o in facts
        .modprobe_hda
        .iter()
        .filter(|o| o.file != HDA_CONF_PATH && o.position_fix.is_some())
    {
        let wins = facts::applied_after_ours(&o.file);
        writeln!(
            err,
            "note: {} also sets position_fix ({}); {}. micoff does not edit it.",
            o.file,
            o.line,
            if wins {
                "it is applied after ours and wins"
            } else {
                "ours is applied after it and wins"
            }
        )?;
    }
    Ok(())
}

/// The setting that keeps a target on the udelay path on the next load despite our file.
fn overridden(facts: &Facts, targets: &[&Card]) -> Option<(String, String)> {
    let next = facts.next_position_fix(targets, None)?;
    if next.file == HDA_CONF_PATH || next.on_udelay.is_empty() {
        return None;
    }
    let bad: Vec<String> = next
        .on_udelay
        .iter()
        .map(|c| format!("card{} position_fix={}", c.index, next.value_for(c)))
        .collect();
    Some((next.file, bad.join(", ")))
}

/// When a setting read after our file keeps a target on the udelay path, says so and returns
/// true. `when` ends the "the udelay stays" clause (`""`, `" after a reload"`).
fn report_overridden(
    facts: &Facts,
    targets: &[&Card],
    when: &str,
    out: &mut dyn Write,
) -> io::Result<bool> {
    let Some((file, values)) = overridden(facts, targets) else {
        return Ok(false);
    };
    writeln!(
        out,
        "But {file} is read after {HDA_CONF_PATH} and sets {values}: the udelay stays{when}. micoff \
         does not edit that file; change or remove its position_fix there."
    )?;
    Ok(true)
}

/// The live `position_fix` array as `facts` read it (`None`: snd_hda_intel is not loaded).
fn live_of(facts: &Facts) -> Option<&[i32]> {
    facts.hda_params.as_ref().map(|p| p.position_fix.as_slice())
}

/// Reads the live `position_fix` array again (after a reload).
fn read_live(root: &Root) -> Option<Vec<i32>> {
    root.read(LIVE_POSITION_FIX)
        .map(|s| hda::parse_int_array(&s))
}

/// Whether every target's live value keeps it off the udelay path.
fn live_bypasses(live: Option<&[i32]>, targets: &[&Card]) -> bool {
    live.is_some_and(|live| {
        targets
            .iter()
            .all(|c| hda::bypasses_skl_udelay(hda::position_fix_for(live, c.position_fix_index())))
    })
}

fn report_live(live: Option<&[i32]>, targets: &[&Card], out: &mut dyn Write) -> io::Result<()> {
    match live {
        Some(values) => {
            let per: Vec<String> = targets
                .iter()
                .map(|c| {
                    let v = hda::position_fix_for(values, c.position_fix_index());
                    format!("card{}={v} ({})", c.index, hda::position_fix_name(v))
                })
                .collect();
            if live_bypasses(live, targets) {
                writeln!(
                    out,
                    "Live value verified: position_fix {}: the udelay is avoided.",
                    per.join(", ")
                )
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

/// Reloads snd_hda_intel when no PCM of its cards is open and the user agrees (`--reload`, or a
/// yes on the terminal: agreeing to sudo is not agreeing to this), then checks the live value.
fn offer_reload(
    root: &Root,
    facts: &Facts,
    targets: &[&Card],
    opts: &Opts,
    sys: &mut dyn System,
    out: &mut dyn Write,
    err: &mut dyn Write,
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
    let agreed = opts.reload
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
        return refuse(
            opts,
            &format!("modprobe -r snd_hda_intel failed ({code}): the module is in use"),
            "reboot to apply the file",
            err,
        );
    }
    let code = sys.run("modprobe", &["snd_hda_intel".into()])?;
    if code != 0 {
        return refuse(
            opts,
            &format!("modprobe snd_hda_intel failed ({code})"),
            "see `sudo dmesg` for why, or reboot",
            err,
        );
    }
    let live = read_live(root);
    report_live(live.as_deref(), targets, out)?;
    if live_bypasses(live.as_deref(), targets) {
        Ok(0)
    } else {
        refuse(
            opts,
            "the reloaded module still uses the slow position read",
            "run `micoff-host doctor` to see which setting wins",
            err,
        )
    }
}

/// Removes exactly the file an earlier apply wrote and puts back the file it replaced. A file
/// micoff did not write is never removed (there is no override).
fn revert(
    root: &Root,
    opts: &Opts,
    sys: &mut dyn System,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> io::Result<i32> {
    let path = root.path(HDA_CONF_PATH);
    let Ok(Some(text)) = micoff_files::read_regular_text(&path, micoff_files::MAX_TEXT_BYTES)
    else {
        note(system_record(root), "hda", None, out);
        writeln!(
            out,
            "fix hda --revert: nothing to revert ({HDA_CONF_PATH} does not exist)."
        )?;
        return Ok(0);
    };
    match ownership_of(&text) {
        Ownership::NotOurs(_) => {
            note(system_record(root), "hda", None, out);
            return not_ours(opts, err);
        }
        Ownership::Edited(_) => return changed_since(None, opts, out, err),
        Ownership::AsWritten => {}
    }
    if sys.euid() != 0 {
        writeln!(out, "fix hda --revert would remove {HDA_CONF_PATH}.")?;
        return escalate(
            "Removing /etc/modprobe.d/micoff-hda.conf",
            opts,
            sys,
            out,
            err,
        );
    }
    let removed = uninstall(&path, None)?;
    if !matches!(removed, Removed::Changed { .. }) {
        note(system_record(root), "hda", None, out);
    }
    match removed {
        Removed::NothingThere => writeln!(out, "fix hda --revert: nothing to revert.")?,
        Removed::Changed { backup } => return changed_since(backup.as_deref(), opts, out, err),
        Removed::KeptEdits { .. } => {}
        Removed::NotOurs => return not_ours(opts, err),
        Removed::Removed { restored, left } => {
            writeln!(out, "fix hda --revert: removed {HDA_CONF_PATH}.")?;
            if let Some(b) = restored {
                writeln!(
                    out,
                    "Put back the file it had replaced (from {}).",
                    b.display()
                )?;
            }
            for b in left {
                writeln!(
                    out,
                    "An older backup stays: {} (a file replaced by an earlier apply, then \
                     replaced again by hand); delete it if you do not need it.",
                    b.display()
                )?;
            }
            writeln!(
                out,
                "The previous setting returns after the module is reloaded ({RELOAD_HDA}) or the \
                 machine rebooted."
            )?;
        }
    }
    Ok(0)
}

/// `--revert` found a file at our path that micoff did not write.
fn not_ours(opts: &Opts, err: &mut dyn Write) -> io::Result<i32> {
    refuse(
        opts,
        &format!("--revert: {HDA_CONF_PATH} was not written by micoff; left alone"),
        "it is someone else's: change it yourself if you need to",
        err,
    )
}

/// `--revert` found our file changed since micoff wrote it: every line of it is micoff's, so
/// whatever changed was someone's decision; it stays, and the user is told what to do.
fn changed_since(
    backup: Option<&std::path::Path>,
    opts: &Opts,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> io::Result<i32> {
    if let Some(b) = backup {
        writeln!(out, "The file it had replaced is kept as {}.", b.display())?;
    }
    refuse(
        opts,
        &format!(
            "--revert: {HDA_CONF_PATH} was changed since micoff wrote it; left alone so those \
             changes are not lost"
        ),
        "remove it (or the lines you do not want) yourself",
        err,
    )
}
