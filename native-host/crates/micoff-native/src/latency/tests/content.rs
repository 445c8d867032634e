//! The files' text: the drop-in and the desktop entry copy.

use super::*;

#[test]
fn rule_is_scoped_to_capture_clients_and_sets_min_frag_only() {
    let rule = rule_content(40, &Browser::ALL);
    assert!(rule.starts_with(&format!(
        "{MARKER}\n{META} capture_ms=40 browsers=chromium,chrome,firefox\n"
    )));
    assert!(rule.contains("{ application.name = \"Chromium input\" }"));
    assert!(rule.contains("{ application.name = \"Google Chrome input\" }"));
    assert!(rule.contains("{ application.process.binary = \"firefox-esr\" }"));
    assert!(rule.contains("pulse.min.frag = 1920/48000"));
    // The playback part: Chromium's and Chrome's playback contexts, by name AND binary (Electron
    // apps call theirs "Chromium" too), a minimum quantum at the capture latency, minreq a quarter.
    let body = rule.split_once("pulse.rules = [").unwrap().1;
    let (capture, playback) = body.split_once("pulse.min.frag = ").unwrap();
    assert!(!capture.contains("quantum"), "{rule}");
    assert!(playback
        .contains("{ application.name = \"Chromium\" application.process.binary = \"chromium\" }"));
    assert!(playback.contains(
        "{ application.name = \"Google Chrome\" application.process.binary = \"chrome\" }"
    ));
    assert!(playback.contains("pulse.min.quantum = 1920/48000"));
    assert!(playback.contains("pulse.min.req = 480/48000"));
    assert!(
        !playback.contains("firefox"),
        "Firefox's playback is left alone: {rule}"
    );
    assert!(
        !rule.contains("node.latency") && !rule.contains("clock."),
        "never a forced quantum"
    );
    assert!(!capture.contains("application.process.binary = \"chromium\""));
    assert_eq!(min_req(40), "480/48000");
    let firefox = rule_content(40, &[Browser::Firefox]);
    assert!(
        !firefox.contains("pulse.min.quantum"),
        "no playback rule for Firefox: {firefox}"
    );
    assert_eq!(min_frag(20), "960/48000");
    let only = rule_content(60, &[Browser::Chromium]);
    assert!(!only.contains("Google Chrome") && !only.contains("firefox"));
    let meta = read_meta(&only).unwrap();
    assert_eq!(meta["capture_ms"], "60");
    assert_eq!(meta["browsers"], "chromium");
}

#[test]
fn desktop_entry_copy_runs_every_exec_through_env() {
    let sys = "[Desktop Entry]\nExec=/usr/bin/chromium %U\nTryExec=chromium\n[Desktop Action x]\nExec=/usr/bin/chromium --incognito\n";
    let out = desktop_entry_content(
        sys,
        Path::new("/usr/share/applications/chromium.desktop"),
        40,
        Browser::Chromium,
    );
    assert!(out.starts_with(MARKER));
    assert!(out.contains("\nExec=env PULSE_LATENCY_MSEC=40 /usr/bin/chromium %U\n"));
    assert!(out.contains("\nExec=env PULSE_LATENCY_MSEC=40 /usr/bin/chromium --incognito\n"));
    assert!(out.contains("\nTryExec=chromium\n"));
    assert_eq!(out.matches("Exec=env").count(), 2);
    let meta = read_meta(&out).unwrap();
    assert_eq!(meta["browser"], "chromium");
    assert_eq!(meta["source"], "/usr/share/applications/chromium.desktop");
    assert!(read_meta("[Desktop Entry]\nExec=x\n").is_none());
    assert!(read_meta(&format!("{MARKER}\nsomething else\n")).is_none());
}
