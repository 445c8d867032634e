//! Which audio services `restart-audio-service` would end.

use super::*;

#[test]
fn audio_service_browser_from_its_binary() {
    assert_eq!(
        browser_of_exe(Path::new("/usr/lib/chromium/chromium")),
        Some(Browser::Chromium)
    );
    assert_eq!(
        browser_of_exe(Path::new("/opt/google/chrome/chrome")),
        Some(Browser::Chrome)
    );
    assert_eq!(
        browser_of_exe(Path::new("/usr/lib/firefox-esr/firefox-esr")),
        None
    );
    // The pids listed are this user's processes whose command line has the switch: none here.
    assert!(audio_services(Path::new("/proc"), &[])
        .iter()
        .all(|(pid, _)| *pid != std::process::id()));
}
