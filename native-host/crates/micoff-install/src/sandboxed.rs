//! Browsers in a sandbox (snap, Flatpak) and native messaging: what each needs, where the installer
//! can do it and what it must say where it cannot (docs/design/sandboxed-browsers.md, the sources).
//! Snap Firefox asks the desktop portal, which reads the regular manifest folders from outside the
//! sandbox and starts the host once the user allows it, so the regular manifest counts (profiles in
//! `~/snap/firefox/common/.mozilla/firefox`). Snap Chromium has no native messaging at all. Flatpak
//! Firefox uses the same portal; Chromium-family Flatpaks read their own folder and run the host
//! inside their sandbox.

use std::path::Path;

use micoff_browsers::Browser;

/// What a snap `browser` needs, for the installer's notes and the doctor (`None`: no snap of it
/// is known to matter).
pub fn snap_note(browser: Browser) -> Option<String> {
    let name = browser.name();
    if browser.is_firefox() {
        return Some(format!(
            "snap {name} found: it reaches micoff-host only through the desktop portal \
             (xdg-desktop-portal's WebExtensions portal: Ubuntu 22.04 and later), which reads the \
             manifest in ~/.mozilla/native-messaging-hosts (written here) from outside the sandbox \
             and asks you once whether {name} may start micoff-host: allow it. Without the portal, \
             or with widget.use-xdg-desktop-portal.native-messaging set to 0 in about:config (2, \
             the snap's default, uses it), the snap cannot reach the host; `flatpak permissions \
             webextensions` lists what you allowed. Its profiles are in \
             ~/snap/firefox/common/.mozilla/firefox, and it is a release build: micoff's add-on \
             comes from addons.mozilla.org there"
        ));
    }
    browser.facts().snap.map(|_| {
        format!(
            "snap {name} found: a snap {name} cannot start native messaging hosts (it does not \
             use the desktop portal for them), so micoff's popup cannot reach micoff-host from it; \
             releasing the microphone on mute works without the host. For the host's figures, \
             use {name} from a .deb (Debian's chromium) or Google Chrome"
        )
    })
}

/// What a Flatpak `browser` (its app folder `app_dir`) needs.
pub fn flatpak_note(browser: Browser, app_dir: &Path) -> String {
    let id = browser.facts().flatpak_id;
    if browser.is_firefox() {
        format!(
            "Flatpak {} ({id}) found: it starts native hosts outside its sandbox through the desktop \
             portal (xdg-desktop-portal with the WebExtensions portal), using the regular \
             ~/.mozilla/native-messaging-hosts manifest; allow it when the portal asks",
            browser.name()
        )
    } else {
        let dir = app_dir.join("config").join(browser.user_manifest_dir());
        format!(
            "Flatpak {} ({id}) found: it reads manifests only from {} and runs the host inside its \
             sandbox, so the host binary must be reachable there too (e.g. copy it under {} and \
             run `micoff-host install --target-dir {} --host-path <that copy>`); the sandboxed host \
             cannot see other processes' threads unless the Flatpak shares the host's pid namespace",
            browser.name(),
            dir.display(),
            app_dir.display(),
            dir.display()
        )
    }
}
