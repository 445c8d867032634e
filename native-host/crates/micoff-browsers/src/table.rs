//! The rows: one per browser micoff knows. Each name, folder and executable of a browser is written
//! here and nowhere else.

use crate::facts::{BrowserFacts, Executable as Exe, InstallPath as At};
use crate::family::BrowserFamily;
use crate::Browser;

/// The row of `browser`.
pub fn facts(browser: Browser) -> &'static BrowserFacts {
    match browser {
        Browser::Chrome => &CHROME,
        Browser::Chromium => &CHROMIUM,
        Browser::Edge => &EDGE,
        Browser::Brave => &BRAVE,
        Browser::Vivaldi => &VIVALDI,
        Browser::Firefox => &FIREFOX,
    }
}

static CHROME: BrowserFacts = BrowserFacts {
    key: "chrome",
    name: "Chrome",
    family: BrowserFamily::Chromium,
    user_data_dir: "google-chrome",
    system_manifest_dirs: &["etc/opt/chrome/native-messaging-hosts"],
    executables: &[
        Exe::named("chrome").process().pulse_binary(),
        Exe::named("google-chrome")
            .stable_command()
            .process()
            .pulse_binary(),
        Exe::named("google-chrome-stable")
            .stable_command()
            .process(),
        Exe::named("google-chrome-beta").command().process(),
        Exe::named("google-chrome-unstable").command().process(),
    ],
    install_paths: &[
        At::program("opt/google/chrome/chrome"),
        At::launcher("opt/google/chrome/google-chrome"),
    ],
    install_dir_prefixes: &[],
    snap: None,
    flatpak_id: "com.google.Chrome",
    desktop_ids: &["google-chrome.desktop"],
    capture_client_name: Some("Google Chrome input"),
    playback_client_name: Some("Google Chrome"),
};

static CHROMIUM: BrowserFacts = BrowserFacts {
    key: "chromium",
    name: "Chromium",
    family: BrowserFamily::Chromium,
    user_data_dir: "chromium",
    system_manifest_dirs: &["etc/chromium/native-messaging-hosts"],
    executables: &[
        // Debian's /usr/bin/chromium is a wrapper script that execs /usr/lib/chromium/chromium,
        // so the browser's comm is `chromium`.
        Exe::named("chromium")
            .stable_command()
            .process()
            .pulse_binary(),
        Exe::named("chromium-browser")
            .stable_command()
            .process()
            .pulse_binary(),
        Exe::named("chromium-freeworld").process(),
    ],
    install_paths: &[
        At::launcher("usr/bin/chromium"),
        At::program("usr/lib/chromium/chromium"),
        At::program("usr/lib/chromium-browser/chromium-browser"),
        At::program("usr/lib64/chromium-browser/chromium-browser"),
    ],
    install_dir_prefixes: &[],
    snap: Some("chromium"),
    flatpak_id: "org.chromium.Chromium",
    desktop_ids: &["chromium.desktop", "chromium-browser.desktop"],
    capture_client_name: Some("Chromium input"),
    playback_client_name: Some("Chromium"),
};

static EDGE: BrowserFacts = BrowserFacts {
    key: "edge",
    name: "Edge",
    family: BrowserFamily::Chromium,
    user_data_dir: "microsoft-edge",
    system_manifest_dirs: &["etc/opt/edge/native-messaging-hosts"],
    executables: &[
        Exe::named("msedge").process(),
        Exe::named("microsoft-edge").command().process(),
        Exe::named("microsoft-edge-stable").command(),
        Exe::named("microsoft-edge-beta").command(),
        Exe::named("microsoft-edge-dev").command(),
    ],
    install_paths: &[At::program("opt/microsoft/msedge/msedge")],
    install_dir_prefixes: &[],
    snap: None,
    flatpak_id: "com.microsoft.Edge",
    desktop_ids: &[],
    capture_client_name: None,
    playback_client_name: None,
};

// Brave and Vivaldi document no system-wide manifest folder of their own.
static BRAVE: BrowserFacts = BrowserFacts {
    key: "brave",
    name: "Brave",
    family: BrowserFamily::Chromium,
    user_data_dir: "BraveSoftware/Brave-Browser",
    system_manifest_dirs: &[],
    executables: &[
        Exe::named("brave-browser").command().process(),
        Exe::named("brave").command().process(),
        Exe::named("brave-browser-stable").command(),
    ],
    install_paths: &[
        At::program("opt/brave.com/brave/brave"),
        At::launcher("opt/brave.com/brave/brave-browser"),
    ],
    install_dir_prefixes: &[],
    snap: Some("brave"),
    flatpak_id: "com.brave.Browser",
    desktop_ids: &[],
    capture_client_name: None,
    playback_client_name: None,
};

static VIVALDI: BrowserFacts = BrowserFacts {
    key: "vivaldi",
    name: "Vivaldi",
    family: BrowserFamily::Chromium,
    user_data_dir: "vivaldi",
    system_manifest_dirs: &[],
    executables: &[
        Exe::named("vivaldi").command().process(),
        Exe::named("vivaldi-stable").command(),
        Exe::named("vivaldi-bin").process(),
    ],
    install_paths: &[
        At::launcher("opt/vivaldi/vivaldi"),
        At::program("opt/vivaldi/vivaldi-bin"),
    ],
    install_dir_prefixes: &[],
    snap: Some("vivaldi"),
    flatpak_id: "com.vivaldi.Vivaldi",
    desktop_ids: &[],
    capture_client_name: None,
    playback_client_name: None,
};

static FIREFOX: BrowserFacts = BrowserFacts {
    key: "firefox",
    name: "Firefox",
    family: BrowserFamily::Firefox,
    user_data_dir: ".mozilla",
    system_manifest_dirs: &[
        "usr/lib/mozilla/native-messaging-hosts",
        "usr/lib64/mozilla/native-messaging-hosts",
    ],
    executables: &[
        Exe::named("firefox")
            .stable_command()
            .process()
            .pulse_binary(),
        Exe::named("firefox-esr")
            .stable_command()
            .process()
            .pulse_binary(),
        Exe::named("firefox-bin").process().pulse_binary(),
        Exe::named("firefox-nightly").process(),
        Exe::named("firefox-developer-edition").process(),
    ],
    install_paths: &[
        At::launcher("usr/bin/firefox"),
        At::launcher("usr/bin/firefox-esr"),
        At::program("opt/firefox/firefox"),
    ],
    install_dir_prefixes: &["usr/lib/firefox", "usr/lib64/firefox"],
    snap: Some("firefox"),
    flatpak_id: "org.mozilla.firefox",
    desktop_ids: &["firefox-esr.desktop", "firefox.desktop"],
    capture_client_name: None,
    playback_client_name: None,
};
