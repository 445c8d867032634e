//! `micoff-host fix governor [--cpus LIST]`: the `performance` governor on the chosen cores
//! until reboot, written in place through micoff-files' link rules (`write_existing`). The previous governors are kept in `/run/micoff-governor` (a tmpfs, like the
//! setting itself) so `--revert` puts back exactly what was there.

use std::io::{self, Write};

use micoff_exit::EXIT_OK;

use super::recorded::{note, system as system_record};
use super::{escalate, write_atomic, Mode, Opts, System, MARKER};
use crate::facts::cpufreq::{self, governor_path, PERFORMANCE as SET};
use crate::root::Root;

pub const STATE_PATH: &str = "/run/micoff-governor";

/// The CPU numbers the kernel knows (`/sys/devices/system/cpu/cpuN`, online or not), ascending.
pub fn present_cpus(root: &Root) -> Vec<u32> {
    let mut v: Vec<u32> = root
        .list("/sys/devices/system/cpu")
        .iter()
        .filter_map(|n| n.strip_prefix("cpu")?.parse().ok())
        .collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// `0-2,5` -> [0, 1, 2, 5], checked against the CPUs `present`: a backwards range (`5-2`), a CPU
/// that is not there or an empty list is an error that says which. A range is checked before it
/// is expanded, so `0-4294967295` costs nothing.
pub fn parse_cpu_list(s: &str, present: &[u32]) -> Result<Vec<u32>, String> {
    let known = || match (present.first(), present.last()) {
        (Some(a), Some(b)) if a == b => format!("this machine has cpu{a} only"),
        (Some(a), Some(b)) => format!("this machine has cpu{a} to cpu{b}"),
        _ => "this machine lists no CPU in /sys/devices/system/cpu".to_owned(),
    };
    let number = |t: &str| -> Result<u32, String> {
        t.trim()
            .parse()
            .map_err(|_| format!("`{}` is not a CPU number", t.trim()))
    };
    let mut v = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (a, b) = match part.split_once('-') {
            Some((a, b)) => (number(a)?, number(b)?),
            None => {
                let n = number(part)?;
                (n, n)
            }
        };
        if a > b {
            return Err(format!("`{part}` runs backwards (write {b}-{a})"));
        }
        // Every number in a..=b must be present; checking the ends and the count first keeps
        // a huge range from being expanded.
        let inside = present.iter().filter(|c| (a..=b).contains(*c)).count() as u64;
        if inside != u64::from(b - a) + 1 {
            let missing = (a..=b).find(|c| !present.contains(c)).unwrap_or(b);
            return Err(format!(
                "cpu{missing} in `{part}` does not exist; {}",
                known()
            ));
        }
        v.extend(present.iter().copied().filter(|c| (a..=b).contains(c)));
    }
    if v.is_empty() {
        return Err(format!("`{s}` names no CPU"));
    }
    v.sort_unstable();
    v.dedup();
    Ok(v)
}

/// (cpu, current governor) for the chosen cores that have cpufreq.
fn chosen(root: &Root, cpus: Option<&[u32]>) -> Vec<(String, String)> {
    cpufreq::read_governors(root)
        .into_iter()
        .filter(|(n, _)| {
            n.strip_prefix("cpu")
                .and_then(|r| r.parse::<u32>().ok())
                .is_some_and(|i| match cpus {
                    Some(c) => c.contains(&i),
                    None => true,
                })
        })
        .collect()
}

pub fn run(
    root: &Root,
    cpus: Option<&[u32]>,
    opts: &Opts,
    sys: &mut dyn System,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> io::Result<i32> {
    let state_path = root.path(STATE_PATH);
    if opts.mode == Mode::Revert {
        let Some(state) = root.read(STATE_PATH) else {
            writeln!(out, "fix governor --revert: nothing to revert.")?;
            return Ok(EXIT_OK);
        };
        if sys.euid() != 0 {
            return escalate("Restoring CPU governors", opts, sys, out, err);
        }
        let mut left = 0;
        for line in state.lines().filter(|l| !l.starts_with('#')) {
            let Some((cpu, gov)) = line.split_once(' ') else {
                continue;
            };
            // Only a core still on the governor micoff set: anything else was chosen since
            // (by the user, a power daemon) and is not ours to undo.
            match root.read_trim(governor_path(cpu)) {
                Some(now) if now == SET => {
                    micoff_files::write_existing(&root.path(governor_path(cpu)), gov.as_bytes())?;
                    writeln!(out, "{cpu}: {SET} -> {gov}")?;
                }
                Some(now) => {
                    left += 1;
                    writeln!(
                        out,
                        "{cpu}: left at {now}: it was changed after micoff set {SET} (it was {gov} before)"
                    )?;
                }
                None => {
                    left += 1;
                    writeln!(
                        out,
                        "{cpu}: left alone: it has no cpufreq governor now (offline?)"
                    )?;
                }
            }
        }
        std::fs::remove_file(&state_path)?;
        note(system_record(root), "governor", None, out);
        if left == 0 {
            writeln!(out, "fix governor --revert: previous governors restored.")?;
        } else {
            writeln!(
                out,
                "fix governor --revert: previous governors restored where micoff's {SET} was still set; {left} core(s) left as they are."
            )?;
        }
        return Ok(EXIT_OK);
    }
    let cores = chosen(root, cpus);
    if cores.is_empty() {
        writeln!(
            out,
            "fix governor: nothing to do: no cpufreq governor on the chosen cores (virtual machine or fixed frequency)."
        )?;
        return Ok(EXIT_OK);
    }
    let todo: Vec<&(String, String)> = cores.iter().filter(|(_, g)| g != SET).collect();
    if todo.is_empty() {
        writeln!(
            out,
            "fix governor: already applied (performance on {}).",
            names(&cores)
        )?;
        return Ok(EXIT_OK);
    }
    // A core whose cpufreq driver does not offer `performance` cannot be set (the kernel refuses
    // the write); the doctor does not offer the fix for those either.
    let (todo, cannot): (Vec<_>, Vec<_>) = todo
        .into_iter()
        .partition(|(cpu, _)| cpufreq::offers(root, cpu, SET));
    if !cannot.is_empty() {
        writeln!(
            out,
            "{}: left as they are: their cpufreq driver does not offer {SET}.",
            cannot
                .iter()
                .map(|(c, _)| c.as_str())
                .collect::<Vec<_>>()
                .join(",")
        )?;
    }
    if todo.is_empty() {
        writeln!(
            out,
            "fix governor: nothing to do: no chosen core can take {SET}."
        )?;
        return Ok(EXIT_OK);
    }
    for (cpu, g) in &todo {
        writeln!(out, "{cpu}: {g} -> {SET}")?;
    }
    if opts.mode == Mode::DryRun {
        writeln!(
            out,
            "Nothing changed (dry run). Apply with: {} (until reboot)",
            opts.apply_command
        )?;
        return Ok(EXIT_OK);
    }
    if sys.euid() != 0 {
        return escalate("Setting CPU governors", opts, sys, out, err);
    }
    // Keep the first recorded value of each core across repeated applies.
    let mut state = root.read(STATE_PATH).unwrap_or_else(|| {
        format!("{MARKER} fix governor: previous governors, one `cpuN governor` per line\n")
    });
    for (cpu, g) in &todo {
        if !state
            .lines()
            .any(|l| l.split(' ').next() == Some(cpu.as_str()))
        {
            state.push_str(&format!("{cpu} {g}\n"));
        }
    }
    write_atomic(&state_path, state.as_bytes(), 0o644)?;
    note(
        system_record(root),
        "governor",
        Some(serde_json::json!({ "state": STATE_PATH })),
        out,
    );
    // In place (a kernel setting), and through a link only where micoff-files follows one: a
    // `--root` tree may hold links someone else planted.
    for (cpu, _) in &todo {
        micoff_files::write_existing(&root.path(governor_path(cpu)), SET.as_bytes())?;
    }
    let set: Vec<(String, String)> = cores
        .iter()
        .filter(|(cpu, g)| g == SET || todo.iter().any(|(t, _)| t == cpu))
        .cloned()
        .collect();
    writeln!(
        out,
        "fix governor: performance on {} until reboot (undo: micoff-host fix governor --revert).",
        names(&set)
    )?;
    Ok(EXIT_OK)
}

fn names(cores: &[(String, String)]) -> String {
    cores
        .iter()
        .map(|(c, _)| c.as_str())
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists() {
        let present: Vec<u32> = (0..8).collect();
        assert_eq!(parse_cpu_list("0-2,5", &present), Ok(vec![0, 1, 2, 5]));
        assert_eq!(parse_cpu_list(" 5, 2-3,2 ", &present), Ok(vec![2, 3, 5]));
        assert!(parse_cpu_list("x", &present).is_err());
        assert!(parse_cpu_list("1-", &present).is_err());
        assert!(parse_cpu_list("", &present)
            .unwrap_err()
            .contains("names no CPU"));
        let e = parse_cpu_list("5-2", &present).unwrap_err();
        assert!(e.contains("`5-2` runs backwards"), "{e}");
        let e = parse_cpu_list("0-4294967295", &present).unwrap_err();
        assert!(
            e.contains("cpu8 in `0-4294967295` does not exist; this machine has cpu0 to cpu7"),
            "{e}"
        );
        let e = parse_cpu_list("4294967295", &present).unwrap_err();
        assert!(e.contains("cpu4294967295"), "{e}");
        // A hole (cpu2 not listed) inside a range.
        let e = parse_cpu_list("1-3", &[0, 1, 3]).unwrap_err();
        assert!(e.starts_with("cpu2 in `1-3` does not exist"), "{e}");
        assert!(parse_cpu_list("0", &[])
            .unwrap_err()
            .contains("lists no CPU"));
    }
}
