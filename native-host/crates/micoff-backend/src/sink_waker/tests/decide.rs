//! [`decide`] on literal listings: which streams, chains and sinks wake a sink.

use super::*;
use crate::sink_waker::decide::{decide, Leave, FAR_AHEAD_US};
use micoff_native::protocol::Browser;

#[test]
fn browser_recording_a_null_sinks_monitor_directly_wakes_it() {
    let snap = rig(IDLE_AHEAD_US, vec![chromium(14, 0)]);
    let w = woken(decide(&snap, StreamKind::Record, 14));
    assert_eq!((w.sink_index, w.sink_name.as_str()), (0, "spk"));
    assert_eq!((w.ahead_us, w.asked_us), (IDLE_AHEAD_US, ASKED_US));
    assert_eq!(w.browser, Browser::Chromium);
    assert_eq!(w.chain, ["spk.monitor"]);
}

#[test]
fn browser_recording_a_remap_over_the_monitor_wakes_the_sink() {
    let snap = rig(IDLE_AHEAD_US, vec![chromium(14, 2)]);
    let w = woken(decide(&snap, StreamKind::Record, 14));
    assert_eq!(w.sink_name, "spk");
    assert_eq!(w.chain, ["mic", "spk.monitor"]);
}

#[test]
fn two_hops_of_filters_are_followed() {
    let mut snap = rig(1_960_000, vec![chromium(14, 3)]);
    snap.sources.push(filter(3, "denoised", "mic"));
    let w = woken(decide(&snap, StreamKind::Record, 14));
    assert_eq!(w.chain, ["denoised", "mic", "spk.monitor"]);
    assert_eq!(w.sink_index, 0);
}

#[test]
fn chrome_and_firefox_are_browsers_too() {
    let chrome = record(15, 2, "Google Chrome input", "chrome");
    let firefox = record(16, 2, "Firefox", "/usr/lib/firefox-esr/firefox-esr");
    let snap = rig(IDLE_AHEAD_US, vec![chrome, firefox]);
    assert_eq!(
        woken(decide(&snap, StreamKind::Record, 15)).browser,
        Browser::Chrome
    );
    assert_eq!(
        woken(decide(&snap, StreamKind::Record, 16)).browser,
        Browser::Firefox
    );
}

#[test]
fn a_hardware_sinks_monitor_is_never_touched() {
    let mut snap = rig(IDLE_AHEAD_US, vec![chromium(14, 5)]);
    let mut hw = sink(
        4,
        "alsa_output.pci-0000_00_1f.3.analog-stereo",
        ALSA_DRIVER,
        1_900_000,
    );
    hw.bus = Some("pci".into());
    snap.sources.push(monitor(5, &hw));
    snap.sinks.push(hw);
    let Leave::NotNullSink { sink, driver } = left(decide(&snap, StreamKind::Record, 14)) else {
        panic!("wrong reason")
    };
    assert_eq!(sink, "alsa_output.pci-0000_00_1f.3.analog-stereo");
    assert_eq!(driver.as_deref(), Some(ALSA_DRIVER));
}

#[test]
fn a_hardware_source_is_never_touched() {
    let mut snap = rig(IDLE_AHEAD_US, vec![chromium(14, 6)]);
    let alsa = device(
        DeviceKind::Source,
        6,
        "alsa_input.pci-0000_00_1f.3.analog-stereo",
        ALSA_DRIVER,
    );
    snap.sources.push(alsa);
    // And a filter over it (an echo canceller's source, say).
    snap.sources
        .push(filter(7, "ec", "alsa_input.pci-0000_00_1f.3.analog-stereo"));
    snap.streams.record.push(chromium(15, 7));
    for stream in [14, 15] {
        assert!(
            matches!(
                left(decide(&snap, StreamKind::Record, stream)),
                Leave::NoMonitor { .. }
            ),
            "{stream}"
        );
    }
}

#[test]
fn a_null_sink_already_at_low_latency_is_not_touched() {
    // Another low-latency recorder (the e2e rig's reader) keeps `spk` rendering a few ms ahead.
    let snap = rig(8_595, vec![chromium(14, 2)]);
    assert_eq!(
        left(decide(&snap, StreamKind::Record, 14)),
        Leave::NotFarAhead {
            sink: "spk".into(),
            ahead_us: 8_595,
            asked_us: ASKED_US,
        }
    );
    // Just at the bar: still not.
    let snap = rig(FAR_AHEAD_US, vec![chromium(14, 2)]);
    assert!(matches!(
        left(decide(&snap, StreamKind::Record, 14)),
        Leave::NotFarAhead { .. }
    ));
    // A suspended sink reports no latency: the stream resumes it with a fresh timeline.
    let mut snap = rig(0, vec![chromium(14, 2)]);
    snap.sinks[0].state = "suspended".into();
    assert!(matches!(
        left(decide(&snap, StreamKind::Record, 14)),
        Leave::NotFarAhead { .. }
    ));
}

#[test]
fn a_stream_that_asked_for_a_long_latency_is_not_a_reason() {
    let mut snap = rig(900_000, vec![chromium(14, 2)]);
    snap.sources[2].configured_latency_us = 500_000;
    assert_eq!(
        left(decide(&snap, StreamKind::Record, 14)),
        Leave::NotFarAhead {
            sink: "spk".into(),
            ahead_us: 900_000,
            asked_us: 500_000,
        }
    );
}

#[test]
fn pipewire_is_not_touched() {
    let mut snap = rig(IDLE_AHEAD_US, vec![chromium(14, 2)]);
    snap.server = server(true);
    assert_eq!(left(decide(&snap, StreamKind::Record, 14)), Leave::PipeWire);
}

#[test]
fn a_recorder_that_is_not_a_browsers_is_not_touched() {
    let parec = record(14, 2, "micoff-test-parec", "parec");
    let obs = record(15, 0, "OBS", "obs");
    let snap = rig(IDLE_AHEAD_US, vec![parec, obs]);
    assert_eq!(
        left(decide(&snap, StreamKind::Record, 14)),
        Leave::NotBrowser
    );
    assert_eq!(
        left(decide(&snap, StreamKind::Record, 15)),
        Leave::NotBrowser
    );
}

#[test]
fn a_modules_own_stream_is_not_a_browsers() {
    // The remap source's stream on its master: owned by the module, no client, even if a
    // property happened to name a browser.
    let mut remap = record(0, 0, "Chromium input", "chromium");
    remap.client_index = None;
    remap.owner_module = Some(3);
    let snap = rig(IDLE_AHEAD_US, vec![remap]);
    assert_eq!(
        left(decide(&snap, StreamKind::Record, 0)),
        Leave::NotBrowser
    );
}

#[test]
fn streams_and_sources_that_are_gone_are_left() {
    let snap = rig(IDLE_AHEAD_US, vec![chromium(14, 42)]);
    assert_eq!(left(decide(&snap, StreamKind::Record, 99)), Leave::NoStream);
    assert_eq!(left(decide(&snap, StreamKind::Record, 14)), Leave::NoSource);
    // The monitor's sink went away between the lists.
    let mut snap = rig(IDLE_AHEAD_US, vec![chromium(14, 2)]);
    snap.sinks.remove(0);
    assert!(matches!(
        left(decide(&snap, StreamKind::Record, 14)),
        Leave::NoMonitor { .. }
    ));
}

#[test]
fn long_chains_and_loops_end() {
    // Four filters over `mic`: from the last, five hops to the monitor, one too many.
    let mut snap = rig(IDLE_AHEAD_US, vec![chromium(14, 13)]);
    let mut master = "mic".to_owned();
    for i in 10..=13 {
        let name = format!("f{i}");
        snap.sources.push(filter(i, &name, &master));
        master = name;
    }
    let Leave::NoMonitor { chain } = left(decide(&snap, StreamKind::Record, 14)) else {
        panic!("wrong reason")
    };
    assert_eq!(chain, ["f13", "f12", "f11", "f10", "mic"]);
    // From the one before: four hops, followed.
    snap.streams.record = vec![chromium(14, 12)];
    assert_eq!(
        woken(decide(&snap, StreamKind::Record, 14)).chain,
        ["f12", "f11", "f10", "mic", "spk.monitor"]
    );
    // Two filters naming each other.
    let mut snap = rig(IDLE_AHEAD_US, vec![chromium(14, 20)]);
    snap.sources.push(filter(20, "a", "b"));
    snap.sources.push(filter(21, "b", "a"));
    let Leave::NoMonitor { chain } = left(decide(&snap, StreamKind::Record, 14)) else {
        panic!("wrong reason")
    };
    assert_eq!(chain, ["a", "b"]);
}

#[test]
fn a_firefox_playback_stream_on_a_null_sink_far_ahead_wakes_it() {
    let snap = rig_playing(OUT_AHEAD_US, vec![firefox_playing(0)]);
    let w = woken(decide(&snap, StreamKind::Playback, 0));
    assert_eq!((w.sink_index, w.sink_name.as_str()), (1, "out"));
    assert_eq!((w.ahead_us, w.asked_us), (OUT_AHEAD_US, PLAYER_ASKED_US));
    assert_eq!(w.browser, Browser::Firefox);
    assert_eq!(w.stream_kind, StreamKind::Playback);
    assert_eq!(w.chain, ["out"]);
}

#[test]
fn playback_streams_that_do_not_hold_up_a_capture_are_left_alone() {
    // Chromium plays through its own stream; its capture does not wait for it.
    let chromium_player = playback(0, 1, "Chromium", "chromium");
    let snap = rig_playing(OUT_AHEAD_US, vec![chromium_player]);
    assert_eq!(
        left(decide(&snap, StreamKind::Playback, 0)),
        Leave::NotClockedByOutput
    );
    // Not a browser.
    let snap = rig_playing(OUT_AHEAD_US, vec![playback(0, 1, "pacat", "pacat")]);
    assert_eq!(
        left(decide(&snap, StreamKind::Playback, 0)),
        Leave::NotBrowser
    );
    // A sink already running at the streams' latency (a steady player on it).
    let snap = rig_playing(24_077, vec![firefox_playing(0)]);
    assert!(matches!(
        left(decide(&snap, StreamKind::Playback, 0)),
        Leave::NotFarAhead { .. }
    ));
    // A hardware sink: it rewinds for a new stream.
    let mut snap = rig_playing(OUT_AHEAD_US, vec![firefox_playing(0)]);
    snap.sinks[1].driver = Some(ALSA_DRIVER.into());
    assert!(matches!(
        left(decide(&snap, StreamKind::Playback, 0)),
        Leave::NotNullSink { .. }
    ));
    // On PipeWire, gone, or asked about as the wrong kind.
    let mut snap = rig_playing(OUT_AHEAD_US, vec![firefox_playing(0)]);
    assert_eq!(
        left(decide(&snap, StreamKind::Playback, 7)),
        Leave::NoStream
    );
    assert_eq!(left(decide(&snap, StreamKind::Record, 0)), Leave::NoStream);
    snap.server = server(true);
    assert_eq!(
        left(decide(&snap, StreamKind::Playback, 0)),
        Leave::PipeWire
    );
}
