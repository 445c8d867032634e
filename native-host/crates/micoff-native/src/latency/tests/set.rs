//! Set and reset through the files: the drop-in, desktop entry copies, foreign files left alone.

use super::*;

#[test]
fn rule_set_is_idempotent_and_reset_removes_only_ours() {
    let (_d, paths) = temp_paths();
    let rule = paths.rule_file();
    let pw = server_of(Some(&info(Some("0.3.65"))));
    assert_eq!(pw.mechanism, Mechanism::PipewirePulseRule);

    let dry = SetRequest {
        dry_run: true,
        ..set_req(Some(40), None)
    };
    let r = set_for_server(&paths, &dry, &pw, 0).unwrap();
    assert_eq!(r.changed_files, vec![rule.display().to_string()]);
    assert!(!rule.exists(), "a dry run writes nothing");

    let r = set_for_server(&paths, &set_req(Some(40), None), &pw, 0).unwrap();
    assert_eq!(r.mechanism, Some(Mechanism::PipewirePulseRule));
    assert!(r.needs_restart.contains(&"pipewire-pulse".to_owned()));
    assert!(r.message.contains("no stream is open"), "{}", r.message);
    let first = fs::read_to_string(&rule).unwrap();
    assert_eq!(first, rule_content(40, &Browser::ALL));
    // No temporary file left behind.
    assert_eq!(fs::read_dir(rule.parent().unwrap()).unwrap().count(), 1);

    let again = set_for_server(&paths, &set_req(Some(40), None), &pw, 0).unwrap();
    assert!(again.changed_files.is_empty(), "{again:?}");
    assert!(again.needs_restart.is_empty());

    let r = set_for_server(&paths, &set_req(Some(60), None), &pw, 0).unwrap();
    assert_eq!(r.changed_files.len(), 1);
    assert!(fs::read_to_string(&rule).unwrap().contains("2880/48000"));

    // A user's own file next to ours is never touched.
    let theirs = rule.with_file_name("10-mine.conf");
    fs::write(&theirs, "pulse.rules = []\n").unwrap();
    let r = set_for_server(&paths, &set_req(None, None), &pw, 1).unwrap();
    assert_eq!(r.changed_files, vec![rule.display().to_string()]);
    assert!(r.message.contains("1 stream(s) are open"), "{}", r.message);
    assert!(!rule.exists());
    assert!(theirs.exists());
    let r = set_for_server(&paths, &set_req(None, None), &pw, 0).unwrap();
    assert!(r.changed_files.is_empty());
    assert!(r.message.contains("nothing of micoff's"));
}

#[test]
fn a_foreign_file_at_our_path_is_left_alone() {
    let (_d, paths) = temp_paths();
    let rule = paths.rule_file();
    fs::create_dir_all(rule.parent().unwrap()).unwrap();
    fs::write(&rule, "# the user's own\n").unwrap();
    let pw = server_of(Some(&info(Some("1.0.5"))));
    let r = set_for_server(&paths, &set_req(Some(40), None), &pw, 0).unwrap();
    assert_eq!(r.skipped_files, vec![rule.display().to_string()]);
    assert!(r.changed_files.is_empty());
    assert_eq!(fs::read_to_string(&rule).unwrap(), "# the user's own\n");
    set_for_server(&paths, &set_req(None, None), &pw, 0).unwrap();
    assert_eq!(fs::read_to_string(&rule).unwrap(), "# the user's own\n");
}

#[test]
fn launch_environment_copies_desktop_entries_and_switching_cleans_up() {
    let (_d, paths) = temp_paths();
    let sys = system_entry(&paths, "chromium.desktop");
    let pa = server_of(Some(&info(None)));
    assert_eq!(pa.kind, ServerKind::Pulseaudio);
    assert_eq!(pa.mechanism, Mechanism::LaunchEnvironment);
    // The user's own Firefox entry is in the way: skipped, untouched.
    system_entry(&paths, "firefox-esr.desktop");
    let own_ff = paths.user_applications().join("firefox-esr.desktop");
    fs::create_dir_all(own_ff.parent().unwrap()).unwrap();
    fs::write(&own_ff, "[Desktop Entry]\nExec=my-firefox\n").unwrap();

    let r = set_for_server(&paths, &set_req(Some(40), None), &pa, 0).unwrap();
    let copy = paths.user_applications().join("chromium.desktop");
    assert_eq!(r.changed_files, vec![copy.display().to_string()]);
    assert_eq!(r.skipped_files, vec![own_ff.display().to_string()]);
    assert!(
        r.message.contains("playback latency changes too"),
        "{}",
        r.message
    );
    assert_eq!(r.needs_restart, vec!["chromium".to_owned()]);
    let text = fs::read_to_string(&copy).unwrap();
    assert!(text.contains("Exec=env PULSE_LATENCY_MSEC=40 /usr/bin/chromium %U"));
    assert!(text.contains(&format!("source={}", sys.display())));
    assert_eq!(
        fs::read_to_string(&own_ff).unwrap(),
        "[Desktop Entry]\nExec=my-firefox\n"
    );

    let files = our_files(&paths);
    let (ms, mech, browsers, _) = configured_from(&files).unwrap();
    assert_eq!(
        (ms, mech, browsers),
        (40, Mechanism::LaunchEnvironment, vec![Browser::Chromium])
    );

    // Switching to the rule removes the desktop entry copy (ours), keeps the user's.
    let r = set_for_server(
        &paths,
        &set_req(Some(40), Some(Mechanism::PipewirePulseRule)),
        &server_of(Some(&info(Some("0.3.65")))),
        0,
    )
    .unwrap();
    assert!(r.changed_files.contains(&copy.display().to_string()));
    assert!(!copy.exists() && own_ff.exists() && paths.rule_file().exists());
    // A rule is refused on PulseAudio.
    assert!(set_for_server(
        &paths,
        &set_req(Some(40), Some(Mechanism::PipewirePulseRule)),
        &pa,
        0
    )
    .is_err());
    // Out of range.
    assert!(set_for_server(&paths, &set_req(Some(5), None), &pa, 0).is_err());
}

/// `latency set --dry-run` with no audio server to ask: the plans of both mechanisms (none
/// configured yet), or of the one micoff's files use; the real set is still refused.
#[test]
fn a_dry_run_without_a_server_shows_the_plans() {
    use super::super::audio_server::{ServerView, Unreachable};
    use super::super::error::LatencyError;
    use super::super::set::set_from_view;
    let (_d, paths) = temp_paths();
    system_entry(&paths, "chromium.desktop");
    let entry = paths.user_applications().join("chromium.desktop");
    let rule = paths.rule_file();
    let none = ServerView {
        info: Err(Unreachable {
            error: "audio server unavailable: connection refused".into(),
            reason: "connection refused".into(),
        }),
        streams: Vec::new(),
    };
    let dry = SetRequest {
        dry_run: true,
        ..set_req(Some(40), None)
    };
    let r = set_from_view(&paths, &dry, &none).unwrap();
    assert_eq!(r.mechanism, None, "{r:?}");
    assert!(r.dry_run);
    assert!(
        r.message
            .starts_with("no audio server reachable (connection refused)"),
        "{}",
        r.message
    );
    for says in [
        "on pipewire-pulse",
        "pipewire_pulse_rule",
        "on PulseAudio",
        "launch_environment",
    ] {
        assert!(r.message.contains(says), "{says}: {}", r.message);
    }
    assert_eq!(
        r.changed_files,
        vec![rule.display().to_string(), entry.display().to_string()]
    );
    assert!(
        !rule.exists() && !entry.exists(),
        "a dry run writes nothing"
    );

    // The real set still needs the server (or --mechanism).
    let e = set_from_view(&paths, &set_req(Some(40), None), &none).unwrap_err();
    assert!(matches!(e, LatencyError::ServerUnavailable(_)), "{e:?}");

    // With micoff's rule on disk, its mechanism is the plan.
    let pw = server_of(Some(&info(Some("0.3.65"))));
    set_for_server(&paths, &set_req(Some(40), None), &pw, 0).unwrap();
    let dry = SetRequest {
        dry_run: true,
        ..set_req(Some(60), None)
    };
    let r = set_from_view(&paths, &dry, &none).unwrap();
    assert_eq!(r.mechanism, Some(Mechanism::PipewirePulseRule));
    assert!(
        r.message.contains("micoff's files use pipewire_pulse_rule"),
        "{}",
        r.message
    );
    assert_eq!(r.changed_files, vec![rule.display().to_string()]);
    assert!(fs::read_to_string(&rule).unwrap().contains("1920/48000"));
}

#[test]
fn a_dry_run_shows_the_rule_the_copies_and_the_wrappers_as_diffs() {
    let (d, mut paths) = temp_paths();
    system_entry(&paths, "chromium.desktop");
    paths.path_dirs = vec![d.path().join("usr/bin")];
    let own = fake_command(&d.path().join("usr/bin"), "chromium");
    let dry = SetRequest {
        dry_run: true,
        ..set_req(Some(40), None)
    };
    let diff = super::super::set::planned_diff(&paths, &dry, Mechanism::LaunchEnvironment);
    let copy = paths.user_applications().join("chromium.desktop");
    let wrapper = paths.wrapper("chromium").unwrap();
    assert!(
        diff.contains(&format!(
            "--- /dev/null\n+++ {} (as micoff would write it)",
            copy.display()
        )),
        "{diff}"
    );
    assert!(
        diff.contains("+Exec=env PULSE_LATENCY_MSEC=40 /usr/bin/chromium %U"),
        "{diff}"
    );
    assert!(
        diff.contains(&format!(
            "+++ {} (as micoff would write it)",
            wrapper.display()
        )),
        "{diff}"
    );
    let own = own.display().to_string();
    assert!(
        diff.lines().any(|l| l == "+PULSE_LATENCY_MSEC=40"),
        "{diff}"
    );
    assert!(
        diff.lines()
            .any(|l| l.starts_with("+exec ") && l.contains(&own)),
        "{diff}"
    );
    assert!(!copy.exists() && !wrapper.exists());
    // Once written, a reset's dry run shows them going.
    set_for_server(
        &paths,
        &set_req(Some(40), None),
        &server_of(Some(&info(None))),
        0,
    )
    .unwrap();
    let reset = SetRequest {
        dry_run: true,
        ..set_req(None, None)
    };
    let diff = super::super::set::planned_diff(&paths, &reset, Mechanism::LaunchEnvironment);
    assert!(
        diff.contains("-Exec=env PULSE_LATENCY_MSEC=40 /usr/bin/chromium %U"),
        "{diff}"
    );
}
