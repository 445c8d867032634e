//! Shell completions for bash, zsh and fish, under the file names clap_complete gives them
//! (`micoff-host.bash`, `_micoff-host`, `micoff-host.fish`); the packagers put each where its shell
//! looks (scripts/host-package/).

use std::path::{Path, PathBuf};

use clap_complete::{Generator, Shell};

use crate::WriteError;

/// The shells micoff ships completions for.
pub const SHELLS: [Shell; 3] = [Shell::Bash, Shell::Zsh, Shell::Fish];

/// Writes one completion script per shell in [`SHELLS`] into `dir`; returns their paths.
pub fn write(mut cmd: clap::Command, dir: &Path) -> Result<Vec<PathBuf>, WriteError> {
    crate::create_dir(dir)?;
    let bin = cmd.get_name().to_owned();
    SHELLS
        .iter()
        .map(|shell| {
            clap_complete::generate_to(*shell, &mut cmd, &bin, dir).map_err(|source| WriteError {
                path: dir.join(shell.file_name(&bin)),
                source,
            })
        })
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
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
}
