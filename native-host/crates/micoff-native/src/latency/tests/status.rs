//! The status on PulseAudio and pipewire-pulse: granted, held down, in effect, what needs a restart.

use super::*;

#[test]
fn pulseaudio_status_reports_granted_and_who_holds_it_down() {
    let i = info(None);
    let chromium = record(7, "Chromium input", 1234, 40_000);
    let files = {
        let (_d, paths) = temp_paths();
        system_entry(&paths, "chromium.desktop");
        set_for_server(&paths, &set_req(Some(40), None), &server_of(Some(&i)), 0).unwrap();
        our_files(&paths)
    };
    let w = world(&[(1234, 40)], None);
    let st = compute_status(Some(&i), std::slice::from_ref(&chromium), &files, &w);
    assert_eq!(st.server.kind, ServerKind::Pulseaudio);
    assert_eq!(st.server.version.as_deref(), Some("16.1"));
    let s = &st.streams[0];
    assert_eq!(
        (s.browser, s.capture_latency_us, s.requested_latency_us),
        (Browser::Chromium, 40_000, Some(40_000))
    );
    assert!(s.held_down_by.is_empty());
    assert_eq!(st.configured.as_ref().unwrap().in_effect, Some(true));
    assert!(st.needs_restart.is_empty());

    // A parec at 10 ms on the same source: Chromium is granted 10 ms, parec named.
    let mut held = chromium.clone();
    held.buffer_latency_us = 10_000;
    let parec = record(9, "parec", 99, 10_000);
    let mut module = record(2, "remap", 0, 0);
    module.client_index = None;
    module.owner_module = Some(5);
    let st = compute_status(Some(&i), &[held.clone(), parec, module], &files, &w);
    let s = &st.streams[0];
    assert_eq!(s.capture_latency_us, 10_000);
    assert_eq!(s.held_down_by.len(), 1);
    assert_eq!(s.held_down_by[0].index, 9);
    assert_eq!(s.held_down_by[0].application_name.as_deref(), Some("parec"));
    assert_eq!(s.held_down_by[0].application_process_id, Some(99));
    assert_eq!(st.configured.as_ref().unwrap().in_effect, Some(false));
    assert!(
        st.notes.iter().any(|n| n.contains("held down by #9 parec")),
        "{:?}",
        st.notes
    );

    // Granted 10 ms with nobody else asking less (a monitor source at its sink's latency): said so.
    let mut alone = chromium.clone();
    alone.buffer_latency_us = 10_000;
    let st = compute_status(Some(&i), &[alone], &files, &w);
    assert!(st.streams[0].held_down_by.is_empty());
    assert_eq!(st.configured.as_ref().unwrap().in_effect, Some(false));
    assert!(
        st.notes
            .iter()
            .any(|n| n.contains("no other recorder of mic asks less")),
        "{:?}",
        st.notes
    );

    // The browser started without the environment: it needs a restart.
    let st = compute_status(Some(&i), &[held], &files, &world(&[], None));
    assert_eq!(st.streams[0].requested_latency_us, Some(10_000));
    assert!(
        st.streams[0].held_down_by.is_empty(),
        "asked 10 ms, got 10 ms"
    );
    assert_eq!(st.needs_restart, vec!["chromium".to_owned()]);

    // Nothing open: in_effect unknown.
    let st = compute_status(Some(&i), &[], &files, &w);
    assert_eq!(st.configured.unwrap().in_effect, None);
}

#[test]
fn pipewire_status_uses_the_fragment_and_names_restarts() {
    let i = info(Some("0.3.65"));
    let (_d, paths) = temp_paths();
    set_for_server(&paths, &set_req(Some(40), None), &server_of(Some(&i)), 0).unwrap();
    let files = our_files(&paths);
    let written = files[0].modified.unwrap();

    let mut old = record(68, "Chromium input", 1234, 0);
    old.fragment_latency_us = Some(10_000);
    // Server started before the rule was written.
    let w = world(&[], Some(written - Duration::from_secs(60)));
    let st = compute_status(Some(&i), &[old.clone()], &files, &w);
    assert_eq!(st.server.kind, ServerKind::PipewirePulse);
    assert_eq!(st.server.version.as_deref(), Some("0.3.65"));
    assert_eq!(st.streams[0].capture_latency_us, 10_000);
    assert_eq!(st.streams[0].granted_latency_us, 0);
    assert!(st.streams[0].held_down_by.is_empty());
    assert_eq!(st.configured.as_ref().unwrap().in_effect, Some(false));
    assert_eq!(st.needs_restart, vec!["pipewire-pulse".to_owned()]);

    // Server restarted after, but the browser's context is older than the restart... it
    // lacks the rule: the browser needs its audio service restarted.
    let w = world(&[], Some(written + Duration::from_secs(60)));
    let st = compute_status(Some(&i), &[old], &files, &w);
    assert_eq!(st.needs_restart, vec!["chromium".to_owned()]);

    let mut new = record(70, "Chromium input", 1234, 0);
    new.fragment_latency_us = Some(40_000);
    new.props
        .insert("pulse.min.frag".into(), "1920/48000".into());
    let st = compute_status(Some(&i), &[new.clone()], &files, &w);
    assert_eq!(st.configured.as_ref().unwrap().in_effect, Some(true));
    assert_eq!(st.streams[0].rule_min_frag.as_deref(), Some("1920/48000"));
    assert!(st.needs_restart.is_empty());

    // After a reset the rule stays in force until pipewire-pulse restarts.
    let st = compute_status(Some(&i), &[new], &[], &w);
    assert!(st.configured.is_none());
    assert_eq!(st.needs_restart, vec!["pipewire-pulse".to_owned()]);
}
