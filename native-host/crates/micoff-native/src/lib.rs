//! micoff-native: what the browser launches, the native messaging side of `micoff-host` (the real
//! backends are micoff-backend, the command line micoff-cli, install and uninstall micoff-install).
//!
//! Module map, bottom up (each uses only those before it): [`framing`] (the only code that sees
//! bytes), [`protocol`] (typed requests, results, events; PROTOCOL.md), [`fit_to_frame`] (replies cut
//! to the frame limit), [`latency`] (capture latency's rule and files), [`power`] (RAPL, battery),
//! [`deps`] (the traits handlers need from the world, the launch, limits), [`history`] (the audio
//! path's CPU history), [`server`] (`run(reader, writer, deps)`).

pub mod deps;
pub mod fit_to_frame;
pub mod framing;
pub mod history;
pub mod latency;
pub mod power;
pub mod protocol;
pub mod server;

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

/// Where the Debian package installs the protocol's description (scripts/host-package/deb.mjs
/// stages it there; check-deb.mjs fails a package whose man pages cite a doc file it lacks).
pub const PROTOCOL_DOC: &str = "/usr/share/doc/micoff-host/PROTOCOL.md";
/// The same file in a checkout.
pub const PROTOCOL_DOC_SOURCE: &str = "native-host/PROTOCOL.md";

/// The protocol's description as `--help` and the man pages cite it: where each way of installing
/// micoff-host has it (the static tarball: beside the binary).
pub fn protocol_doc() -> String {
    format!(
        "{PROTOCOL_DOC}; PROTOCOL.md in the static tarball, {PROTOCOL_DOC_SOURCE} in the source"
    )
}

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
