//! `latency status`: per browser capture stream, what it asked, what the server grants and who
//! holds it down; what micoff has configured, whether it is in effect, and what needs a restart,
//! each with a note that says why. [`compute_status`] is pure (its world passed in).

use super::audio_server::{server_of, ServerView};
use super::browser::browser_list;
use super::configured::{configured_from, files_modified, our_files, OurFile};
use super::content::LATENCY_ENV;
use super::paths::Paths;
use super::proc::{ProcWorld, World};
use crate::protocol::{
    AudioServerInfo, AudioStream, Browser, CaptureStream, Configured, HeldDownBy, LatencyServer,
    LatencyStatus, Mechanism, ServerKind, StreamKind,
};

/// Slack between what was set and what counts as granted (servers round to their quantum).
pub const TOLERANCE_US: u64 = 5_000;
/// What Chromium's Pulse input asks for on the processed (echo-cancelled) path: 10 ms fragments.
pub const CHROMIUM_DEFAULT_CAPTURE_US: u64 = 10_000;

/// A latency in microseconds as the status lines show it (`12.3 ms`).
pub fn ms(us: u64) -> String {
    format!("{:.1} ms", us as f64 / 1000.0)
}

impl HeldDownBy {
    /// `#index name (pid P) at L ms`, as both the status notes and `micoff-host latency` show it.
    pub fn describe(&self) -> String {
        format!(
            "#{} {} (pid {}) at {}",
            self.index,
            self.application_name
                .as_deref()
                .or(self.client_name.as_deref())
                .unwrap_or("?"),
            self.application_process_id
                .map_or_else(|| "?".to_owned(), |p| p.to_string()),
            ms(self.latency_us)
        )
    }
}

fn holders(stream: &AudioStream, all: &[AudioStream], below_us: u64) -> Vec<HeldDownBy> {
    let mut found: Vec<HeldDownBy> = all
        .iter()
        .filter(|o| {
            o.kind == StreamKind::Record
                && o.index != stream.index
                && o.device_index == stream.device_index
                && !o.is_module_stream()
                && o.buffer_latency_us > 0
                && o.buffer_latency_us + TOLERANCE_US <= below_us
        })
        .map(|o| HeldDownBy {
            index: o.index,
            client_name: o.client_name.clone(),
            application_name: o.application_name.clone(),
            application_process_id: o.application_process_id,
            application_process_binary: o.application_process_binary.clone(),
            latency_us: o.buffer_latency_us,
        })
        .collect();
    found.sort_by_key(|h| (h.latency_us, h.index));
    found
}

/// The capture streams of browsers, with what they asked, got, and what holds them down.
pub fn capture_streams(
    server: &LatencyServer,
    streams: &[AudioStream],
    world: &dyn World,
) -> Vec<CaptureStream> {
    let mut out = Vec::new();
    for s in streams.iter().filter(|s| s.kind == StreamKind::Record) {
        let Some(browser) = Browser::of_stream(s) else {
            continue;
        };
        let launch_env = s.application_process_id.and_then(|p| world.latency_env(p));
        let requested = launch_env
            .map(|m| u64::from(m) * 1000)
            .or(
                (browser != Browser::Firefox && server.kind != ServerKind::PipewirePulse)
                    .then_some(CHROMIUM_DEFAULT_CAPTURE_US),
            );
        let fragment = s.fragment_latency_us;
        let capture = fragment.unwrap_or(s.buffer_latency_us);
        // Only PulseAudio lowers a reader to its source's latency after the fact.
        let held_down_by = match requested {
            Some(req) if server.kind == ServerKind::Pulseaudio && capture + TOLERANCE_US <= req => {
                holders(s, streams, req)
            }
            _ => Vec::new(),
        };
        out.push(CaptureStream {
            index: s.index,
            browser,
            client_name: s.client_name.clone(),
            application_process_id: s.application_process_id,
            source_name: s.device_name.clone(),
            launch_env_latency_ms: launch_env,
            requested_latency_us: requested,
            granted_latency_us: s.buffer_latency_us,
            granted_fragment_us: fragment,
            capture_latency_us: capture,
            source_configured_latency_us: s.device_configured_latency_us,
            rule_min_frag: s.props.get("pulse.min.frag").cloned(),
            held_down_by,
        });
    }
    out
}

/// Adds `item` to `list` unless it is there (the `needs_restart` lists).
pub(super) fn push_unique(list: &mut Vec<String>, item: &str) {
    if !list.iter().any(|x| x == item) {
        list.push(item.to_owned());
    }
}

/// Everything `latency status` reports. `info` is None when the server is unreachable.
pub fn compute_status(
    info: Option<&AudioServerInfo>,
    streams: &[AudioStream],
    files: &[OurFile],
    world: &dyn World,
) -> LatencyStatus {
    let server = server_of(info);
    let captures = capture_streams(&server, streams, world);
    let mut needs_restart = Vec::new();
    let mut notes = Vec::new();
    if info.is_none() {
        notes.push("the audio server is not reachable: nothing granted can be shown".into());
    }
    let configured = configured_from(files).map(|(capture_ms, mechanism, browsers, file_paths)| {
        let ours: Vec<&CaptureStream> = captures
            .iter()
            .filter(|c| browsers.contains(&c.browser))
            .collect();
        let want_us = u64::from(capture_ms) * 1000;
        let granted = |c: &CaptureStream| c.capture_latency_us + TOLERANCE_US >= want_us;
        let in_effect = (!ours.is_empty()).then(|| ours.iter().all(|c| granted(c)));
        if ours.is_empty() {
            notes.push(format!(
                "no capture stream of {} is open: start a call to see what the server grants",
                browser_list(&browsers)
            ));
        }
        match mechanism {
            Mechanism::PipewirePulseRule => {
                if server.kind == ServerKind::Pulseaudio {
                    notes.push(
                        "the configuration is a pipewire-pulse rule but the server is PulseAudio: \
                         run `micoff-host latency set` again to use the launch environment"
                            .into(),
                    );
                } else if server.kind == ServerKind::PipewirePulse {
                    let written = files_modified(files, Mechanism::PipewirePulseRule);
                    let started = info.and_then(|i| world.server_started(i));
                    let stale_server = match (written, started) {
                        (Some(w), Some(s)) => s < w,
                        // Unknown start: judge by the streams.
                        _ => ours.iter().any(|c| c.rule_min_frag.is_none()),
                    };
                    if stale_server {
                        push_unique(&mut needs_restart, "pipewire-pulse");
                        notes.push(
                            "pipewire-pulse started before the rule was written: restart it \
                             (`systemctl --user restart pipewire-pulse`) when no stream is open"
                                .into(),
                        );
                    } else {
                        for c in ours.iter().filter(|c| !granted(c)) {
                            push_unique(&mut needs_restart, c.browser.name());
                            notes.push(format!(
                                "stream #{} of {} connected before the rule applied (granted {}): \
                                 restart the browser's audio service",
                                c.index,
                                c.browser.name(),
                                ms(c.capture_latency_us)
                            ));
                        }
                    }
                }
            }
            Mechanism::LaunchEnvironment => {
                for c in &ours {
                    if c.launch_env_latency_ms != Some(capture_ms) {
                        push_unique(&mut needs_restart, c.browser.name());
                        notes.push(format!(
                            "{} runs without {LATENCY_ENV}={capture_ms} (stream #{}): quit it and \
                             start it again from its menu entry",
                            c.browser.name(),
                            c.index
                        ));
                    }
                }
            }
        }
        if server.kind == ServerKind::Pulseaudio {
            // Granted less than asked, and no other reader of the source asks less: the source
            // itself runs faster (measured: a mic that is the monitor of a sink, at that sink's
            // playback latency).
            for c in ours.iter().filter(|c| {
                c.held_down_by.is_empty()
                    && c.launch_env_latency_ms == Some(capture_ms)
                    && !granted(c)
            }) {
                notes.push(format!(
                    "stream #{} gets {} instead of {}, and no other recorder of {} asks less: the \
                     source's device runs at a lower latency (a monitor source follows its sink's \
                     playback latency)",
                    c.index,
                    ms(c.capture_latency_us),
                    ms(want_us),
                    c.source_name.as_deref().unwrap_or("its source")
                ));
            }
        }
        for c in ours.iter().filter(|c| !c.held_down_by.is_empty()) {
            let names: Vec<String> = c.held_down_by.iter().map(HeldDownBy::describe).collect();
            notes.push(format!(
                "stream #{} gets {} instead of {}: PulseAudio grants every reader of a source its \
                 lowest requested latency, held down by {}",
                c.index,
                ms(c.capture_latency_us),
                ms(want_us),
                names.join(", ")
            ));
        }
        Configured {
            capture_ms,
            mechanism,
            browsers,
            files: file_paths,
            in_effect,
        }
    });
    if configured.is_none() && server.kind == ServerKind::PipewirePulse {
        // A rule micoff removed stays in force until pipewire-pulse restarts.
        if let Some(c) = captures.iter().find(|c| c.rule_min_frag.is_some()) {
            push_unique(&mut needs_restart, "pipewire-pulse");
            notes.push(format!(
                "stream #{} still has pulse.min.frag = {} from a rule no longer configured by \
                 micoff (or one of your own): restart pipewire-pulse when no stream is open",
                c.index,
                c.rule_min_frag.as_deref().unwrap_or("?")
            ));
        }
    }
    LatencyStatus {
        server,
        configured,
        streams: captures,
        needs_restart,
        notes,
    }
}

/// `latency status`: what the audio server answered (`view`), micoff's files under `paths`, and
/// the browsers' processes in /proc.
pub fn status(paths: &Paths, view: &ServerView) -> LatencyStatus {
    let files = our_files(paths);
    let mut st = compute_status(view.info.as_ref().ok(), &view.streams, &files, &ProcWorld);
    if let Err(unreachable) = &view.info {
        st.notes.push(unreachable.error.clone());
    }
    st
}
