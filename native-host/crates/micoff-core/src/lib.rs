//! micoff-core: the library behind `micoff-host`, the native messaging host and command-line tools of micoff
//! (the binary, native-host/src/main.rs, only parses arguments, sets up logging and calls in here).
//!
//! Module map, from the bottom up: each module uses only modules listed before it (no circles).
//! - [`framing`]: native messaging frames (4-byte native-endian length + UTF-8 JSON); the only
//!   code that sees bytes.
//! - [`protocol`]: typed requests, results, errors and events (PROTOCOL.md), one module per
//!   request family, with their decoder; the wire types of capture latency and power included.
//! - [`fit_to_frame`]: replies and events encoded within the frame limit (a CPU report's
//!   lowest-CPU threads or a process list's deepest processes cut until it fits).
//! - [`latency`]: capture latency: status at the server, the pipewire-pulse rule, desktop-entry
//!   and PATH wrapper writers applied all or nothing, the audio service restart. Takes the audio
//!   server's answers as data.
//! - [`power`]: what the machine reports it draws (RAPL, a discharging battery) for the popup's
//!   energy estimate.
//! - [`deps`]: what handlers need from the world: small traits (`Sampler`, `AudioServer`,
//!   `Doctor`), where the latency files and power readings are, the launch arguments,
//!   per-connection limits.
//! - [`history`]: the audio path's CPU history the popup charts, with what releases saved: the pure
//!   rule and the per-connection task that samples while a call is on (sending nothing) or a popup
//!   watches.
//! - [`server`]: `run(reader, writer, deps)`, one task per request, one writer task.
//! - [`backend`]: the real `Sampler` (micoff-proc), `AudioServer` (micoff-pulse, one client per
//!   process) and `Doctor` (micoff-doctor).
//! - [`cli`]: the subcommands (`sample`, `top`, `install`, `doctor`, `fix`, `bench`, `latency`).
//! - [`install`]: `micoff-host install`: the native messaging host manifests, micoff into Chromium
//!   (crx) and Firefox (xpi, release prefs, profiles, policies).
//! - [`uninstall`]: `micoff-host uninstall`: everything micoff wrote, undone from micoff's record
//!   (the installer's parts, capture latency's files, the fixers' --revert).

pub mod backend;
pub mod cli;
pub mod deps;
pub mod fit_to_frame;
pub mod framing;
pub mod history;
pub mod install;
pub mod latency;
pub mod power;
pub mod protocol;
pub mod server;
pub mod uninstall;

/// The Chrome extension id, derived by build.rs from `manifests/chrome.json` `key`.
pub const CHROME_EXTENSION_ID: &str = env!("MICOFF_CHROME_EXTENSION_ID");
/// The Firefox extension id (`manifests/firefox.json` `browser_specific_settings.gecko.id`).
pub const FIREFOX_EXTENSION_ID: &str = env!("MICOFF_FIREFOX_EXTENSION_ID");
/// micoff's version: `package.json` `version` (build.rs), the same string the extension
/// manifests carry, so `micoff-host --version` and the extension's version always agree.
pub const VERSION: &str = env!("MICOFF_VERSION");
/// The commit the host was built from (12 hex digits), `unknown` when built outside git.
pub const COMMIT: &str = env!("MICOFF_COMMIT");
/// The target triple the host was built for.
pub const TARGET: &str = env!("MICOFF_TARGET");
/// What every micoff-host binary carries, so that `install --host-path` can tell a micoff-host
/// from any other file without running it (install::check::host): a NUL, this prefix, the
/// version, a NUL. The binary keeps it (native-host/src/main.rs).
pub const HOST_IDENT: &str = concat!("\0micoff-host-ident ", env!("MICOFF_VERSION"), "\0");
/// The native messaging host name (the manifest's `name`). The TypeScript side's one spelling is
/// `HOST_NAME` in `extension/src/shared/protocol/constants.ts`; `tests/host_name.rs` checks they agree.
pub const HOST_NAME: &str = "org.micoff.host";

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    #[test]
    fn extension_ids_come_from_the_manifests() {
        assert_eq!(
            super::CHROME_EXTENSION_ID,
            "ipgdconbmedmelnlpalblnicflhpfkim"
        );
        assert_eq!(super::FIREFOX_EXTENSION_ID, "micoff@micoff.org");
    }

    #[test]
    fn version_comes_from_package_json() {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../../package.json"
        ))
        .unwrap();
        let json: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(super::VERSION, json["version"].as_str().unwrap());
    }
}
