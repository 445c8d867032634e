//! The browsers `install` knows, and where each keeps things: the one table of the installer
//! (manifest folders, the profile file it writes when it runs, its executables, snap and Flatpak
//! names). Facts only: finding them on a machine is `env`, writing there is `manifest`.

use clap::ValueEnum;

/// A browser `install` knows (`--browser`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, ValueEnum)]
pub enum Browser {
    Chrome,
    Chromium,
    Edge,
    Brave,
    Vivaldi,
    Firefox,
}

/// Where a browser keeps things, and how to tell it is installed.
pub(crate) struct BrowserSpec {
    /// User manifest folder relative to the config home (`~/.config`), or to home for Firefox.
    pub(crate) user_dir: &'static str,
    /// System manifest folder (absolute, under the root), when the browser has one.
    pub(crate) system_dir: Option<&'static str>,
    /// A file the browser itself writes once it has run for this user (same base as `user_dir`):
    /// Chromium's `Local State`, Firefox's `profiles.ini`. Never a folder: `install` creates the
    /// folders above the manifest, which must not make a browser count as installed.
    pub(crate) profile_marker: &'static str,
    /// Executable names looked up in `$PATH`.
    pub(crate) binaries: &'static [&'static str],
    /// Executables at the usual install locations (relative to the root).
    pub(crate) known_paths: &'static [&'static str],
    /// `<dir>*/<name>*` executables under these (relative to the root; `<name>` is the last part),
    /// e.g. Firefox's `/usr/lib/firefox-esr/firefox-esr` or `/usr/lib64/firefox/firefox`.
    pub(crate) known_dir_prefixes: &'static [&'static str],
    /// The snap's name (`/snap/bin/<name>`), when there is one.
    pub(crate) snap: Option<&'static str>,
    pub(crate) flatpak_id: &'static str,
}

impl Browser {
    pub const ALL: [Browser; 6] = [
        Browser::Chrome,
        Browser::Chromium,
        Browser::Edge,
        Browser::Brave,
        Browser::Vivaldi,
        Browser::Firefox,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Browser::Chrome => "Chrome",
            Browser::Chromium => "Chromium",
            Browser::Edge => "Edge",
            Browser::Brave => "Brave",
            Browser::Vivaldi => "Vivaldi",
            Browser::Firefox => "Firefox",
        }
    }

    pub fn is_firefox(self) -> bool {
        self == Browser::Firefox
    }

    /// Its row of the table.
    pub(crate) fn spec(self) -> BrowserSpec {
        match self {
            Browser::Chrome => BrowserSpec {
                user_dir: "google-chrome/NativeMessagingHosts",
                system_dir: Some("etc/opt/chrome/native-messaging-hosts"),
                profile_marker: "google-chrome/Local State",
                binaries: &[
                    "google-chrome",
                    "google-chrome-stable",
                    "google-chrome-beta",
                    "google-chrome-unstable",
                ],
                known_paths: &[
                    "opt/google/chrome/chrome",
                    "opt/google/chrome/google-chrome",
                ],
                known_dir_prefixes: &[],
                snap: None,
                flatpak_id: "com.google.Chrome",
            },
            Browser::Chromium => BrowserSpec {
                user_dir: "chromium/NativeMessagingHosts",
                system_dir: Some("etc/chromium/native-messaging-hosts"),
                profile_marker: "chromium/Local State",
                binaries: &["chromium", "chromium-browser"],
                known_paths: &[
                    "usr/bin/chromium",
                    "usr/lib/chromium/chromium",
                    "usr/lib/chromium-browser/chromium-browser",
                    "usr/lib64/chromium-browser/chromium-browser",
                ],
                known_dir_prefixes: &[],
                snap: Some("chromium"),
                flatpak_id: "org.chromium.Chromium",
            },
            Browser::Edge => BrowserSpec {
                user_dir: "microsoft-edge/NativeMessagingHosts",
                system_dir: Some("etc/opt/edge/native-messaging-hosts"),
                profile_marker: "microsoft-edge/Local State",
                binaries: &[
                    "microsoft-edge",
                    "microsoft-edge-stable",
                    "microsoft-edge-beta",
                    "microsoft-edge-dev",
                ],
                known_paths: &["opt/microsoft/msedge/msedge"],
                known_dir_prefixes: &[],
                snap: None,
                flatpak_id: "com.microsoft.Edge",
            },
            // Brave and Vivaldi document no system-wide folder of their own.
            Browser::Brave => BrowserSpec {
                user_dir: "BraveSoftware/Brave-Browser/NativeMessagingHosts",
                system_dir: None,
                profile_marker: "BraveSoftware/Brave-Browser/Local State",
                binaries: &["brave-browser", "brave", "brave-browser-stable"],
                known_paths: &[
                    "opt/brave.com/brave/brave",
                    "opt/brave.com/brave/brave-browser",
                ],
                known_dir_prefixes: &[],
                snap: Some("brave"),
                flatpak_id: "com.brave.Browser",
            },
            Browser::Vivaldi => BrowserSpec {
                user_dir: "vivaldi/NativeMessagingHosts",
                system_dir: None,
                profile_marker: "vivaldi/Local State",
                binaries: &["vivaldi", "vivaldi-stable"],
                known_paths: &["opt/vivaldi/vivaldi", "opt/vivaldi/vivaldi-bin"],
                known_dir_prefixes: &[],
                snap: Some("vivaldi"),
                flatpak_id: "com.vivaldi.Vivaldi",
            },
            Browser::Firefox => BrowserSpec {
                user_dir: ".mozilla/native-messaging-hosts",
                system_dir: Some("usr/lib/mozilla/native-messaging-hosts"),
                profile_marker: ".mozilla/firefox/profiles.ini",
                binaries: &["firefox", "firefox-esr"],
                known_paths: &[
                    "usr/bin/firefox",
                    "usr/bin/firefox-esr",
                    "opt/firefox/firefox",
                ],
                known_dir_prefixes: &["usr/lib/firefox", "usr/lib64/firefox"],
                snap: Some("firefox"),
                flatpak_id: "org.mozilla.firefox",
            },
        }
    }
}
