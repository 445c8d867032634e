//! The two browser families: one process model and one native messaging manifest format each.

use serde::{Deserialize, Serialize};

/// The browser family a browser (or a process) belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BrowserFamily {
    /// Chromium, Chrome, Edge, Brave, Vivaldi.
    Chromium,
    /// Firefox, Firefox ESR.
    Firefox,
}

impl BrowserFamily {
    /// The stable string (the serde form).
    pub fn as_str(self) -> &'static str {
        match self {
            BrowserFamily::Chromium => "chromium",
            BrowserFamily::Firefox => "firefox",
        }
    }

    /// The native messaging manifest folder's name inside a user data folder.
    pub fn manifest_dir_name(self) -> &'static str {
        match self {
            BrowserFamily::Chromium => "NativeMessagingHosts",
            BrowserFamily::Firefox => "native-messaging-hosts",
        }
    }

    /// A file (never a folder: the installer creates folders) the browser writes in its user data
    /// folder once it has run: Chromium's `Local State`, Firefox's `profiles.ini`.
    pub fn profile_marker(self) -> &'static str {
        match self {
            BrowserFamily::Chromium => "Local State",
            BrowserFamily::Firefox => "firefox/profiles.ini",
        }
    }
}
