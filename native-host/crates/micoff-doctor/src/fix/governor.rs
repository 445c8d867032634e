//! `micoff-host fix governor [--cpus LIST]`: the `performance` governor on the chosen cores
//! until reboot. The previous governors are kept in `/run/micoff-governor` (a tmpfs, like the
//! setting itself) so `--revert` puts back exactly what was there.

use std::io::{self, Write};

use super::{escalate, write_atomic, Mode, Opts, System, MARKER};
use crate::root::Root;

pub const STATE_PATH: &str = "/run/micoff-governor";

fn governor_path(cpu: &str) -> String {
    format!("/sys/devices/system/cpu/{cpu}/cpufreq/scaling_governor")
}

/// `0-2,5` -> [0, 1, 2, 5].
pub fn parse_cpu_list(s: &str) -> Option<Vec<u32>> {
    let mut v = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (u32, u32) = (a.parse().ok()?, b.parse().ok()?);
                v.extend(a..=b);
            }
            None => v.push(part.parse().ok()?),
        }
    }
    Some(v)
}

/// (cpu, current governor) for the chosen cores that have cpufreq.
fn chosen(root: &Root, cpus: Option<&[u32]>) -> Vec<(String, String)> {
    root.list("/sys/devices/system/cpu")
        .into_iter()
        .filter(|n| {
            n.strip_prefix("cpu")
                .and_then(|r| r.parse::<u32>().ok())
                .is_some_and(|i| match cpus {
                    Some(c) => c.contains(&i),
                    None => true,
                })
        })
        .filter_map(|n| root.read_trim(governor_path(&n)).map(|g| (n, g)))
        .collect()
}

pub fn run(
    root: &Root,
    cpus: Option<&[u32]>,
    opts: &Opts,
    sys: &mut dyn System,
    out: &mut dyn Write,
) -> io::Result<i32> {
    let state_path = root.path(STATE_PATH);
    if opts.mode == Mode::Revert {
        let Some(state) = root.read(STATE_PATH) else {
            writeln!(out, "fix governor --revert: nothing to revert.")?;
            return Ok(0);
        };
        if sys.euid() != 0 {
            return escalate("Restoring CPU governors", opts, sys, out);
        }
        for line in state.lines().filter(|l| !l.starts_with('#')) {
            if let Some((cpu, gov)) = line.split_once(' ') {
                std::fs::write(root.path(governor_path(cpu)), gov)?;
                writeln!(out, "{cpu}: {gov}")?;
            }
        }
        std::fs::remove_file(&state_path)?;
        writeln!(out, "fix governor --revert: previous governors restored.")?;
        return Ok(0);
    }
    let cores = chosen(root, cpus);
    if cores.is_empty() {
        writeln!(
            out,
            "fix governor: nothing to do: no cpufreq governor on the chosen cores (virtual machine or fixed frequency)."
        )?;
        return Ok(0);
    }
    let todo: Vec<&(String, String)> = cores.iter().filter(|(_, g)| g != "performance").collect();
    if todo.is_empty() {
        writeln!(
            out,
            "fix governor: already applied (performance on {}).",
            names(&cores)
        )?;
        return Ok(0);
    }
    for (cpu, g) in &todo {
        writeln!(out, "{cpu}: {g} -> performance")?;
    }
    if opts.mode == Mode::DryRun {
        writeln!(
            out,
            "Nothing changed (dry run). Apply with: {} (until reboot)",
            opts.apply_command
        )?;
        return Ok(0);
    }
    if sys.euid() != 0 {
        return escalate("Setting CPU governors", opts, sys, out);
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
    for (cpu, _) in &todo {
        std::fs::write(root.path(governor_path(cpu)), "performance")?;
    }
    writeln!(
        out,
        "fix governor: performance on {} until reboot (undo: micoff-host fix governor --revert).",
        names(&cores)
    )?;
    Ok(0)
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
        assert_eq!(parse_cpu_list("0-2,5"), Some(vec![0, 1, 2, 5]));
        assert_eq!(parse_cpu_list("x"), None);
    }
}
