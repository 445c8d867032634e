//! What Firefox's part of `install` is asked to do (built by `install::run` from the command line).

use std::path::{Path, PathBuf};

use crate::firefox::build::Build;
use crate::firefox::xpi::XpiInfo;

/// The add-on part of a request.
pub struct Addon {
    /// The add-on id (micoff's, `FIREFOX_EXTENSION_ID`).
    pub id: String,
    /// The xpi to install (`None` on uninstall).
    pub xpi: Option<(Vec<u8>, XpiInfo)>,
}

/// What to change: profile folders (per user) or the policy folders under `root` (`--system`).
pub struct Request<'a> {
    pub profiles: Vec<PathBuf>,
    pub system_root: Option<&'a Path>,
    pub delay_ms: u32,
    /// The release prefs (`--firefox-release`).
    pub release_prefs: bool,
    /// micoff's add-on (`--firefox-xpi`).
    pub addon: Option<Addon>,
    /// The Firefox builds on this machine (for a profile that has not said which one ran it).
    pub builds: Vec<Build>,
    pub uninstall: bool,
    pub dry_run: bool,
}
