//! Files an older micoff wrote (marker and meta line, no seal), as they sit in users' folders:
//! still read as micoff's configuration, removed by a reset, rewritten sealed by a set. And the
//! rule for a file of ours edited since: it goes or is rewritten too, as it always did.

use micoff_files::ours::{ownership_of, Marked, Ownership};

use super::*;

/// `latency set --capture-ms 40` on pipewire-pulse, as written up to the seal (literal).
const OLD_LATENCY_DROP_IN: &str = r#"# Written by micoff-host
# micoff-latency: capture_ms=40 browsers=chromium,chrome,firefox
# Capture latency for the browsers' record streams only: pulse.min.frag raises the record
# fragment pipewire-pulse delivers to them; playback and the graph are left as they are.
# Takes effect for clients that connect after pipewire-pulse restarts.
# Remove with `micoff-host latency reset` (this file is micoff's; it rewrites or deletes it).
pulse.rules = [
    {
        matches = [
            { application.name = "Chromium input" }
            { application.name = "Google Chrome input" }
            { application.process.binary = "firefox" }
            { application.process.binary = "firefox-esr" }
            { application.process.binary = "firefox-bin" }
        ]
        actions = {
            update-props = {
                pulse.min.frag = 1920/48000
            }
        }
    }
]
"#;

/// `latency set --capture-ms 40` on PulseAudio: a desktop entry copy, likewise.
const OLD_LATENCY_DESKTOP_ENTRY: &str = r#"# Written by micoff-host
# micoff-latency: capture_ms=40 browser=chromium source=/usr/share/applications/chromium.desktop
# A copy of the system entry with PULSE_LATENCY_MSEC=40 in the launch environment: libpulse
# then asks 40 ms for every stream of the browser (capture AND playback).
# Remove with `micoff-host latency reset` (this file is micoff's; it rewrites or deletes it).
[Desktop Entry]
Name=Chromium
Exec=env PULSE_LATENCY_MSEC=40 /usr/bin/chromium %U
"#;

/// The same set: a PATH wrapper, likewise (micoff-files' tests of the old forms hold it).
const OLD_WRAPPER: &str =
    include_str!("../../../../micoff-files/src/ours/tests/samples/old-latency-wrapper.txt");

/// The three old files at their places.
fn old_files(paths: &Paths) -> [PathBuf; 3] {
    let placed = [
        (paths.rule_file(), OLD_LATENCY_DROP_IN),
        (
            paths.user_applications().join("chromium.desktop"),
            OLD_LATENCY_DESKTOP_ENTRY,
        ),
        (paths.wrapper("firefox").unwrap(), OLD_WRAPPER),
    ];
    for (p, text) in &placed {
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, text).unwrap();
    }
    placed.map(|(p, _)| p)
}

#[test]
fn old_files_are_read_as_micoffs_configuration_and_a_reset_removes_them() {
    let (_d, paths) = temp_paths();
    let placed = old_files(&paths);
    let files = our_files(&paths);
    let found: Vec<&PathBuf> = files.iter().map(|f| &f.path).collect();
    assert_eq!(found, placed.iter().collect::<Vec<_>>());
    assert!(files.iter().all(|f| f.capture_ms == Some(40)));
    assert_eq!(files[0].browsers, Browser::ALL);
    assert_eq!(files[1].browsers, [Browser::Chromium]);
    assert_eq!(files[2].browsers, [Browser::Firefox]);
    let (ms, mechanism, browsers, _) = configured_from(&files).unwrap();
    assert_eq!(
        (ms, mechanism, browsers),
        (40, Mechanism::PipewirePulseRule, Browser::ALL.to_vec())
    );

    let pa = server_of(Some(&info(None)));
    let r = set_for_server(&paths, &set_req(None, None), &pa, 0).unwrap();
    let shown: Vec<String> = placed.iter().map(|p| p.display().to_string()).collect();
    assert_eq!(r.changed_files, shown);
    assert!(placed.iter().all(|p| !p.exists()));
}

#[test]
fn a_set_rewrites_an_old_file_sealed() {
    let (_d, paths) = temp_paths();
    let [rule, ..] = old_files(&paths);
    let pw = server_of(Some(&info(Some("1.0.5"))));
    let r = set_for_server(&paths, &set_req(Some(40), None), &pw, 0).unwrap();
    assert!(
        r.changed_files.contains(&rule.display().to_string()),
        "{r:?}"
    );
    let now = fs::read_to_string(&rule).unwrap();
    assert_eq!(now, rule_content(40, &Browser::ALL));
    assert_eq!(ownership_of(&now), Ownership::AsWritten);
    // The old text's capture rule, now with the playback rule after it and the seal after the
    // meta line.
    let marked = Marked::read(&now).unwrap();
    let old_capture_rule = OLD_LATENCY_DROP_IN.split_once("pulse.rules").unwrap().1;
    let old_capture_rule = old_capture_rule.trim_end().trim_end_matches(']');
    assert!(marked.unsealed().contains(old_capture_rule), "{now}");
    assert!(marked.unsealed().contains("pulse.min.quantum = 1920/48000"));
    assert!(now.lines().nth(2).unwrap().starts_with("# micoff: sha256 "));
}

#[test]
fn a_file_of_ours_edited_since_is_still_rewritten_and_removed() {
    let (_d, paths) = temp_paths();
    let rule = paths.rule_file();
    let pw = server_of(Some(&info(Some("1.0.5"))));
    set_for_server(&paths, &set_req(Some(40), None), &pw, 0).unwrap();
    let edited = fs::read_to_string(&rule)
        .unwrap()
        .replace("1920/48000", "960/48000");
    fs::write(&rule, &edited).unwrap();
    assert!(matches!(ownership_of(&edited), Ownership::Edited(_)));
    let r = set_for_server(&paths, &set_req(Some(40), None), &pw, 0).unwrap();
    assert_eq!(r.changed_files, vec![rule.display().to_string()]);
    assert_eq!(
        fs::read_to_string(&rule).unwrap(),
        rule_content(40, &Browser::ALL)
    );
    fs::write(&rule, &edited).unwrap();
    set_for_server(&paths, &set_req(None, None), &pw, 0).unwrap();
    assert!(!rule.exists());
}
