//! `micoff-host uninstall`'s command line.

#[derive(Debug, Clone, clap::Args)]
#[command(after_help = micoff_exit::EXIT_CODES_HELP)]
pub struct UninstallArgs {
    /// Undo what micoff wrote for every user (system-wide manifests, Firefox policies, the HDA and
    /// governor fixes; root), from the system's record, instead of what it wrote for you.
    #[arg(long)]
    pub system: bool,
    /// Say what would be removed or put back, change nothing.
    #[arg(long)]
    pub dry_run: bool,
}
