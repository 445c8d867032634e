//! The views each user takes from the table, pinned to the lists those users held before the
//! table was one (the installer's, capture latency's, the /proc reader's), and the table's own
//! rules (one key each, a name in one row only).

use super::*;

/// Names, as a list.
type Names = &'static [&'static str];

fn v(it: impl Iterator<Item = &'static str>) -> Vec<&'static str> {
    it.collect()
}

#[test]
fn the_installer_view() {
    let want: [(Browser, &str, Names, Names); 6] = [
        (
            Browser::Chrome,
            "google-chrome/NativeMessagingHosts",
            &[
                "google-chrome",
                "google-chrome-stable",
                "google-chrome-beta",
                "google-chrome-unstable",
            ],
            &[
                "opt/google/chrome/chrome",
                "opt/google/chrome/google-chrome",
            ],
        ),
        (
            Browser::Chromium,
            "chromium/NativeMessagingHosts",
            &["chromium", "chromium-browser"],
            &[
                "usr/bin/chromium",
                "usr/lib/chromium/chromium",
                "usr/lib/chromium-browser/chromium-browser",
                "usr/lib64/chromium-browser/chromium-browser",
            ],
        ),
        (
            Browser::Edge,
            "microsoft-edge/NativeMessagingHosts",
            &[
                "microsoft-edge",
                "microsoft-edge-stable",
                "microsoft-edge-beta",
                "microsoft-edge-dev",
            ],
            &["opt/microsoft/msedge/msedge"],
        ),
        (
            Browser::Brave,
            "BraveSoftware/Brave-Browser/NativeMessagingHosts",
            &["brave-browser", "brave", "brave-browser-stable"],
            &[
                "opt/brave.com/brave/brave",
                "opt/brave.com/brave/brave-browser",
            ],
        ),
        (
            Browser::Vivaldi,
            "vivaldi/NativeMessagingHosts",
            &["vivaldi", "vivaldi-stable"],
            &["opt/vivaldi/vivaldi", "opt/vivaldi/vivaldi-bin"],
        ),
        (
            Browser::Firefox,
            ".mozilla/native-messaging-hosts",
            &["firefox", "firefox-esr"],
            &[
                "usr/bin/firefox",
                "usr/bin/firefox-esr",
                "opt/firefox/firefox",
            ],
        ),
    ];
    for (b, dir, commands, paths) in want {
        assert_eq!(b.user_manifest_dir(), dir, "{b:?}");
        assert_eq!(v(b.commands()), commands, "{b:?}");
        assert_eq!(v(b.install_paths()), paths, "{b:?}");
    }
    assert_eq!(Browser::Chromium.profile_marker(), "chromium/Local State");
    assert_eq!(
        Browser::Brave.profile_marker(),
        "BraveSoftware/Brave-Browser/Local State"
    );
    assert_eq!(
        Browser::Firefox.profile_marker(),
        ".mozilla/firefox/profiles.ini"
    );
    // Chromium's external extensions folder is next to its program, never its launcher.
    assert_eq!(
        v(Browser::Chromium.program_paths()),
        [
            "usr/lib/chromium/chromium",
            "usr/lib/chromium-browser/chromium-browser",
            "usr/lib64/chromium-browser/chromium-browser",
        ]
    );
    let names: Vec<&str> = Browser::ALL.iter().map(|b| b.name()).collect();
    assert_eq!(
        names,
        ["Chrome", "Chromium", "Edge", "Brave", "Vivaldi", "Firefox"]
    );
}

#[test]
fn the_capture_latency_view() {
    let want: [(Browser, Option<&str>, Names, Names, Names); 3] = [
        (
            Browser::Chromium,
            Some("Chromium input"),
            &["chromium", "chromium-browser"],
            &["chromium", "chromium-browser"],
            &["chromium.desktop", "chromium-browser.desktop"],
        ),
        (
            Browser::Chrome,
            Some("Google Chrome input"),
            &["chrome", "google-chrome"],
            &["google-chrome", "google-chrome-stable"],
            &["google-chrome.desktop"],
        ),
        (
            Browser::Firefox,
            None,
            &["firefox", "firefox-esr", "firefox-bin"],
            &["firefox", "firefox-esr"],
            &["firefox-esr.desktop", "firefox.desktop"],
        ),
    ];
    for (b, client, binaries, commands, desktop) in want {
        assert_eq!(b.facts().capture_client_name, client, "{b:?}");
        assert_eq!(
            b.facts().playback_client_name,
            client.map(|c| c.trim_end_matches(" input")),
            "{b:?}"
        );
        assert_eq!(v(b.pulse_binaries()), binaries, "{b:?}");
        assert_eq!(v(b.stable_commands()), commands, "{b:?}");
        assert_eq!(b.facts().desktop_ids, desktop, "{b:?}");
    }
}

#[test]
fn the_process_view() {
    let of = |f: BrowserFamily| -> Vec<&str> {
        let mut names: Vec<&str> = Browser::ALL
            .into_iter()
            .filter(|b| b.family() == f)
            .flat_map(Browser::process_names)
            .collect();
        names.sort_unstable();
        names
    };
    let mut chromium = vec![
        "chromium",
        "chromium-browser",
        "chromium-freeworld",
        "chrome",
        "google-chrome",
        "google-chrome-stable",
        "google-chrome-beta",
        "google-chrome-unstable",
        "msedge",
        "microsoft-edge",
        "brave",
        "brave-browser",
        "vivaldi",
        "vivaldi-bin",
    ];
    chromium.sort_unstable();
    assert_eq!(of(BrowserFamily::Chromium), chromium);
    let mut firefox = vec![
        "firefox",
        "firefox-esr",
        "firefox-bin",
        "firefox-nightly",
        "firefox-developer-edition",
    ];
    firefox.sort_unstable();
    assert_eq!(of(BrowserFamily::Firefox), firefox);
}

#[test]
fn keys_and_executable_names_have_one_row_each() {
    for (i, a) in Browser::ALL.iter().enumerate() {
        assert_eq!(Browser::from_key(a.key()), Some(*a));
        assert_eq!(a.key(), a.name().to_lowercase());
        for b in &Browser::ALL[i + 1..] {
            for e in a.facts().executables {
                assert!(
                    b.facts().executables.iter().all(|f| f.name != e.name),
                    "{} in {a:?} and {b:?}",
                    e.name
                );
            }
        }
    }
    assert_eq!(Browser::from_key("safari"), None);
    assert_eq!(
        serde_json::to_string(&BrowserFamily::Firefox).unwrap_or_default(),
        "\"firefox\""
    );
}
