//! One man page per command: `micoff-host.1` and `micoff-host-<sub>[-<sub>].1` for every
//! subcommand at every depth (clap's own `help` left out: `man` is the help), named the way git's
//! pages are, so `man micoff-host-latency-set` finds the page its SUBCOMMANDS section refers to.

use std::path::{Path, PathBuf};

use crate::WriteError;

/// `(file name, page)` for `cmd` and all its visible subcommands, parents first.
pub fn pages(cmd: &clap::Command) -> Vec<(String, Vec<u8>)> {
    let mut cmd = cmd.clone().disable_help_subcommand(true);
    // Gives every subcommand its display name (`micoff-host-latency-set`).
    cmd.build();
    let mut out = Vec::new();
    collect(&cmd, &mut out);
    out
}

fn collect(cmd: &clap::Command, out: &mut Vec<(String, Vec<u8>)>) {
    let man = clap_mangen::Man::new(cmd.clone())
        // The version of the package, on every page (subcommands carry none of their own).
        .source(format!("micoff-host {}", micoff_native::VERSION))
        .manual("micoff manual");
    let mut page = Vec::new();
    // Rendering into memory cannot fail.
    if man.render(&mut page).is_ok() {
        out.push((man.get_filename(), page));
    }
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        collect(sub, out);
    }
}

/// Writes [`pages`] into `dir`; returns their paths.
pub fn write(cmd: &clap::Command, dir: &Path) -> Result<Vec<PathBuf>, WriteError> {
    crate::create_dir(dir)?;
    pages(cmd)
        .into_iter()
        .map(|(name, page)| {
            let path = dir.join(name);
            std::fs::write(&path, page).map_err(|source| WriteError {
                path: path.clone(),
                source,
            })?;
            Ok(path)
        })
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// Every command path a user can type, from the real command line: `micoff-host latency set`
    /// -> `micoff-host-latency-set`.
    fn command_names(cmd: &clap::Command, prefix: &str, out: &mut Vec<String>) {
        let name = if prefix.is_empty() {
            cmd.get_name().to_owned()
        } else {
            format!("{prefix}-{}", cmd.get_name())
        };
        for sub in cmd.get_subcommands() {
            if sub.get_name() != "help" && !sub.is_hide_set() {
                command_names(sub, &name, out);
            }
        }
        out.push(name);
    }

    #[test]
    fn every_command_has_its_page_and_no_page_is_extra() {
        let cmd = crate::command();
        let mut want = Vec::new();
        command_names(&cmd, "", &mut want);
        let mut got: Vec<String> = pages(&cmd).into_iter().map(|(name, _)| name).collect();
        want = want.into_iter().map(|n| format!("{n}.1")).collect();
        want.sort();
        got.sort();
        assert_eq!(got, want);
        // The tree really has depth: `latency set` is a page of its own.
        assert!(
            got.contains(&"micoff-host-latency-set.1".to_owned()),
            "{got:?}"
        );
    }

    #[test]
    fn pages_carry_the_command_text_and_the_version() {
        let cmd = crate::command();
        for (name, page) in pages(&cmd) {
            let text = String::from_utf8(page).unwrap();
            assert!(text.starts_with(".ie \\n(.g .ds Aq"), "{name}: roff");
            assert!(text.contains(".SH NAME"), "{name}: NAME section");
            assert!(text.contains(micoff_native::VERSION), "{name}: version");
        }
        let (_, root) = pages(&cmd)
            .into_iter()
            .find(|(name, _)| name == "micoff-host.1")
            .unwrap();
        let root = String::from_utf8(root).unwrap();
        // The subcommands section points at their own pages.
        assert!(root.contains("micoff\\-host\\-doctor(1)"), "{root}");
    }

    #[test]
    fn write_puts_one_file_per_page() {
        let dir = tempfile::tempdir().unwrap();
        let cmd = crate::command();
        let files = write(&cmd, &dir.path().join("man1")).unwrap();
        assert_eq!(files.len(), pages(&cmd).len());
        for f in files {
            assert!(std::fs::metadata(&f).unwrap().len() > 100, "{f:?}");
        }
    }
}
