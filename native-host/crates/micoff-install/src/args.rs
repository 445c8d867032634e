//! `micoff-host install`'s command line: what the user asks for. The parts below take what they need
//! from it (`install::run` builds each part's request).

use std::path::PathBuf;

use crate::firefox::prefs::{DEFAULT_DELAY_MS, MAX_DELAY_MS};

/// The subcommand's name in its error lines.
pub const CMD: &str = "install";

/// `--release-delay-ms`: up to the longest delay micoff writes into Firefox's prefs.
pub const RELEASE_DELAY_MS: micoff_exit::Range<u32> =
    micoff_exit::Range::new(0, MAX_DELAY_MS, "ms");
use micoff_browsers::Browser;

#[derive(Debug, Clone, clap::Args)]
#[command(after_help = micoff_exit::EXIT_CODES_HELP)]
pub struct InstallArgs {
    /// Browsers to install for, even if not detected (repeatable). Default: every detected browser.
    #[arg(long = "browser", value_enum)]
    pub browsers: Vec<Browser>,
    /// Install for every detected browser (the default when no --browser is given). With
    /// --uninstall: every known folder, detected or not (also the default).
    #[arg(long, conflicts_with = "browsers")]
    pub all_detected: bool,
    /// Write the system-wide folders (/etc/..., /usr/lib/mozilla/...) instead of the user's.
    #[arg(long, conflicts_with = "target_dir")]
    pub system: bool,
    /// Write into this folder only (e.g. `<user-data-dir>/NativeMessagingHosts` for a browser
    /// started with --user-data-dir). Chromium-style manifest unless `--browser firefox`.
    #[arg(long, value_name = "DIR")]
    pub target_dir: Option<PathBuf>,
    /// Remove our manifest (only an `org.micoff.host.json` that points at a micoff-host) from
    /// every known folder (of the named browsers with --browser), detected or not.
    #[arg(long)]
    pub uninstall: bool,
    /// Say what would be done, change nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// The host executable the manifest points to (default: this binary). It must be an
    /// executable micoff-host (checked before anything is written).
    #[arg(long, value_name = "PATH")]
    pub host_path: Option<PathBuf>,
    /// For packagers: write PATH into the manifests (where the package installs micoff-host, e.g.
    /// /usr/bin/micoff-host) instead of the host that is checked (--host-path, or this binary).
    /// Only into a staging folder: requires --target-dir.
    #[arg(long, value_name = "PATH", requires = "target_dir")]
    pub packaged_host_path: Option<PathBuf>,
    /// Also switch on Firefox's own release of a disabled microphone
    /// (media.getusermedia.microphone.off_while_disabled.enabled and its delay): in each Firefox
    /// profile's user.js, or with --system in /etc/firefox/policies/policies.json. With
    /// --uninstall: removes what micoff added there, nothing else.
    #[arg(long)]
    pub firefox_release: bool,
    #[arg(long, value_name = "MS", default_value_t = DEFAULT_DELAY_MS,
          value_parser = |s: &str| RELEASE_DELAY_MS.parse(s),
          help = RELEASE_DELAY_MS.help("The delay before Firefox releases a disabled microphone \
              (micoff's release delay), in milliseconds."))]
    pub release_delay_ms: u32,
    /// Firefox profile folders for --firefox-release and --firefox-xpi (repeatable; default:
    /// every profile listed in the profiles.ini of ~/.mozilla/firefox and of
    /// ${XDG_CONFIG_HOME:-~/.config}/mozilla/firefox).
    #[arg(long = "firefox-profile", value_name = "DIR")]
    pub firefox_profiles: Vec<PathBuf>,
    /// Install micoff's add-on for good in Firefox ESR / Developer Edition / Nightly from this
    /// xpi (`npm run package` -> dist/micoff-<version>.xpi, unsigned): per user into each profile
    /// (a copy in <profile>/extensions and the prefs that let Firefox take it up, in user.js);
    /// with --system force-installed through policies.json from a copy in /usr/local/share/micoff.
    /// Release Firefox accepts only the add-on signed by addons.mozilla.org (said per profile).
    /// With --uninstall (no XPI needed): removes micoff's copy and those lines or entries; Firefox
    /// removes micoff at its next start (--system: micoff's policy entry blocks micoff until the
    /// next --uninstall, once every user's Firefox has started).
    #[arg(long, value_name = "XPI", num_args = 0..=1)]
    #[allow(clippy::option_option)]
    // absent / given without an XPI (uninstall) / given with one
    pub firefox_xpi: Option<Option<PathBuf>>,
    /// Install micoff into Chromium from this crx (`npm run package` -> dist/micoff-<version>.crx,
    /// signed with micoff's release key, or without it with this machine's local key, whose
    /// extension id the host manifests then allow too) through Chromium's external extensions: per user in
    /// ~/.config/chromium/External Extensions (no root), with --system for every user. Chromium
    /// installs it at its next start, enabled. With --uninstall (no CRX needed): removes that
    /// entry and micoff's copy of the crx; Chromium removes micoff at its next start.
    #[arg(long, value_name = "CRX", num_args = 0..=1, conflicts_with = "target_dir")]
    #[allow(clippy::option_option)]
    // absent / given without a CRX (uninstall) / given with one
    pub chromium_crx: Option<Option<PathBuf>>,
}
