//! micoff-dist: the files a package of micoff-host ships beside the binary, generated from the
//! command line the binary really parses (`micoff_cli::Cli`), so they cannot drift from it.
//! Used by `npm run package` (scripts/host-package/), never shipped itself.
//!
//! Module map:
//! - [`man`]: one man page per command and subcommand (`micoff-host.1`, `micoff-host-latency-set.1`).
//! - [`completions`]: bash, zsh and fish completion scripts.
//! - [`write_all`]: both into one folder (`man1/`, `completions/`), the layout the packagers take.

pub mod completions;
pub mod man;

use std::path::{Path, PathBuf};

/// What went wrong writing one file.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {source}")]
pub struct WriteError {
    pub path: PathBuf,
    #[source]
    pub source: std::io::Error,
}

/// The command line as the binary parses it, named as it is installed.
pub fn command() -> clap::Command {
    <micoff_cli::Cli as clap::CommandFactory>::command()
}

/// Writes `out/man1/*.1` and `out/completions/*`; returns the files written, sorted.
pub fn write_all(out: &Path) -> Result<Vec<PathBuf>, WriteError> {
    let mut files = man::write(&command(), &out.join("man1"))?;
    files.extend(completions::write(command(), &out.join("completions"))?);
    files.sort();
    Ok(files)
}

/// Creates `dir` (and its parents), as a [`WriteError`] naming it.
fn create_dir(dir: &Path) -> Result<(), WriteError> {
    std::fs::create_dir_all(dir).map_err(|source| WriteError {
        path: dir.to_owned(),
        source,
    })
}
