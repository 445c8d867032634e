//! Shell completions for bash, zsh and fish, under the file names clap_complete gives them
//! (`micoff-host.bash`, `_micoff-host`, `micoff-host.fish`); the packagers put each where its shell
//! looks (scripts/host-package/).
//!
//! clap_complete's bash script spells a dashed binary name two ways (clap-rs/clap#6421): the loop
//! that walks the words sets `cmd` to `micoff__host__subcmd__install` (the dash as `__`), while the
//! arms that offer each subcommand's options are labelled `micoff__subcmd__host__subcmd__install`
//! (the dash as the subcommand separator), so no arm matched and only subcommand names completed.
//! [`fix_bash`] relabels the arms the way the loop spells them. zsh and fish keep the name verbatim.

use std::path::{Path, PathBuf};

use clap_complete::{Generator, Shell};

use crate::WriteError;

/// The shells micoff ships completions for.
pub const SHELLS: [Shell; 3] = [Shell::Bash, Shell::Zsh, Shell::Fish];

/// clap_complete's separator between command names in its bash state labels.
const BASH_SUBCMD_SEP: &str = "__subcmd__";

/// Writes one completion script per shell in [`SHELLS`] into `dir`; returns their paths.
pub fn write(mut cmd: clap::Command, dir: &Path) -> Result<Vec<PathBuf>, WriteError> {
    crate::create_dir(dir)?;
    let bin = cmd.get_name().to_owned();
    SHELLS
        .iter()
        .map(|shell| {
            let path = dir.join(shell.file_name(&bin));
            let mut script = Vec::new();
            clap_complete::generate(*shell, &mut cmd, &bin, &mut script);
            let script = String::from_utf8_lossy(&script);
            let script = match shell {
                Shell::Bash => fix_bash(&script, &bin),
                _ => script.into_owned(),
            };
            std::fs::write(&path, script).map_err(|source| WriteError {
                path: path.clone(),
                source,
            })?;
            Ok(path)
        })
        .collect()
}

/// clap_complete's bash script for `bin` with its subcommand arms labelled as its word loop sets
/// `cmd` (the binary's dashes as `__`); unchanged for a name without a dash.
pub fn fix_bash(script: &str, bin: &str) -> String {
    let loop_name = bin.replace('-', "__");
    let arm_name = bin.replace('-', BASH_SUBCMD_SEP);
    if loop_name == arm_name {
        return script.to_owned();
    }
    script.replace(
        &format!("{arm_name}{BASH_SUBCMD_SEP}"),
        &format!("{loop_name}{BASH_SUBCMD_SEP}"),
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    #[test]
    fn each_shell_gets_a_script_that_knows_the_subcommands() {
        let dir = tempfile::tempdir().unwrap();
        let files = write(crate::command(), dir.path()).unwrap();
        let names: Vec<String> = files
            .iter()
            .map(|f| f.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            names,
            ["micoff-host.bash", "_micoff-host", "micoff-host.fish"]
        );
        for f in &files {
            let text = std::fs::read_to_string(f).unwrap();
            for sub in ["doctor", "latency", "install"] {
                assert!(text.contains(sub), "{f:?} lacks {sub}");
            }
        }
    }

    /// Every state the bash word loop can set (`cmd="…"`) has an arm (`        …)`) and back.
    #[test]
    fn every_bash_state_has_its_arm() {
        let dir = tempfile::tempdir().unwrap();
        let files = write(crate::command(), dir.path()).unwrap();
        let text = std::fs::read_to_string(&files[0]).unwrap();
        let states: BTreeSet<&str> = text
            .lines()
            .filter_map(|l| l.trim().strip_prefix("cmd=\"")?.strip_suffix('"'))
            .filter(|s| !s.is_empty())
            .collect();
        let arms: BTreeSet<&str> = text
            .lines()
            .filter(|l| l.starts_with("        ") && !l.starts_with("         "))
            .filter_map(|l| l.trim().strip_suffix(')'))
            .filter(|l| l.starts_with("micoff__"))
            .collect();
        assert!(
            states.contains("micoff__host__subcmd__install"),
            "{states:?}"
        );
        assert_eq!(states, arms);
    }

    #[test]
    fn fix_bash_relabels_only_a_dashed_name() {
        let arm = "        my__subcmd__app__subcmd__run)\n";
        assert_eq!(fix_bash(arm, "my-app"), "        my__app__subcmd__run)\n");
        assert_eq!(fix_bash(arm, "myapp"), arm);
    }
}
