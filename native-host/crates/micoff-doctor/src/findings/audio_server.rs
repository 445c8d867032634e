//! The audio server's findings: which server, its default devices' latency, srbchannel and the
//! client's shared memory.

use crate::audio::{AudioServerFacts, DeviceLatency};
use crate::commands::{FIX_CLIENT_SHM, LARGER_LATENCY};
use crate::facts::{self, Facts};
use crate::findings::finding::{fmt_ms, AudioInput, Finding, NoAudio, Status, F};

/// Below this a client keeps the server waking up at least every 20 ms.
pub const LOW_LATENCY_US: u64 = 20_000;
fn server_label(a: &AudioServerFacts) -> String {
    if a.is_pipewire {
        format!(
            "PipeWire {} (pipewire-pulse, protocol {})",
            a.pipewire_version.as_deref().unwrap_or("?"),
            a.server_version
        )
    } else {
        format!("{} {}", a.server_name, a.server_version)
    }
}

pub(crate) fn audio_server(audio: AudioInput<'_>) -> Finding {
    let f = F::new("audio_server", "audio_server", "Audio server");
    let why = "The browser's microphone stream goes through this server; its version decides \
               which of the latency and shared-memory settings below apply.";
    match audio {
        Ok(a) => f.make(
            Status::Ok,
            format!("{} via {}", server_label(a), a.gathered_by),
            why,
        ),
        Err(NoAudio::NotQueried(e)) => f.make(Status::NotApplicable, format!("not asked: {e}"), why),
        Err(NoAudio::Unreachable(e)) => f
            .make(
                Status::Failed,
                format!("no audio server reachable ({e})"),
                why,
            )
            .with_hint(
                "start PulseAudio or PipeWire for your user (systemctl --user start pulseaudio, or \
                 pipewire-pulse), then run the doctor again; the checks below that need it are \
                 left out",
            ),
    }
}

pub(crate) fn device_latency(audio: AudioInput<'_>, source: bool) -> Finding {
    let f = if source {
        F::new(
            "default_source_latency",
            "audio_server",
            "Microphone latency (default source)",
        )
    } else {
        F::new(
            "default_sink_latency",
            "audio_server",
            "Speaker latency (default sink)",
        )
    };
    let why = "The device runs at the shortest latency any program asked of it, and the audio \
               server wakes up about that often: measured, PulseAudio used 4 % of a core at \
               1000 ms and 16 % at 10 ms. Chromium asks for 10 ms during calls.";
    let dev: Option<&DeviceLatency> = match audio {
        Ok(a) if source => a.default_source.as_ref(),
        Ok(a) => a.default_sink.as_ref(),
        Err(_) => None,
    };
    let Some(dev) = dev else {
        let cur = match audio {
            Ok(_) => "no default device".to_owned(),
            Err(NoAudio::NotQueried(_)) => "audio server not asked".to_owned(),
            Err(NoAudio::Unreachable(_)) => "no audio server reachable".to_owned(),
        };
        return f.make(Status::NotApplicable, cur, why);
    };
    let state = dev.state.as_deref().unwrap_or("unknown");
    let cur = format!(
        "{}: {state}, latency {}, configured {}",
        dev.description.as_deref().unwrap_or(&dev.name),
        dev.latency_us.map(fmt_ms).unwrap_or_else(|| "?".into()),
        dev.configured_latency_us
            .map(fmt_ms)
            .unwrap_or_else(|| "?".into()),
    );
    let low = state == "running"
        && dev
            .configured_latency_us
            .is_some_and(|c| c > 0 && c < LOW_LATENCY_US);
    if low {
        f.make(Status::WorthChanging, cur, why)
            .with_fix(LARGER_LATENCY)
            .with_hint(
                "Start the browser asking for a larger latency (PULSE_LATENCY_MSEC works on \
                 PulseAudio and PipeWire alike; put your browser's command in place of \
                 chromium).",
            )
    } else {
        f.make(Status::Ok, cur, why)
    }
}

/// ` (enable-memfd = no: POSIX shared memory instead)` when memfd is off somewhere.
fn memfd_note(facts: &Facts) -> String {
    let off: Vec<&str> = [
        ("client", &facts.client_conf),
        ("server", &facts.daemon_conf),
    ]
    .iter()
    .filter(|(_, c)| c.memfd_off())
    .map(|(who, _)| *who)
    .collect();
    if off.is_empty() {
        String::new()
    } else {
        format!(
            " ({} enable-memfd = no: another kind of shared memory is used, the channel still \
             works)",
            off.join(" and ")
        )
    }
}

pub(crate) fn srbchannel(facts: &Facts, audio: AudioInput<'_>) -> Finding {
    let f = F::new(
        "srbchannel",
        "audio_server",
        "Shared-memory channel to the audio server (srbchannel)",
    );
    let why =
        "With it, the messages that keep each audio stream going travel through shared memory \
         instead of the server's socket: measured, 25 % less CPU for a program recording every \
         10 ms. It needs PulseAudio 6 or later, a local connection (unix socket) and shared memory \
         (enable-shm) on for both the server and the programs.";
    let a = match audio {
        Ok(a) => a,
        Err(NoAudio::NotQueried(_)) => {
            return f.make(Status::NotApplicable, "audio server not asked", why)
        }
        Err(NoAudio::Unreachable(_)) => {
            return f.make(Status::NotApplicable, "no audio server reachable", why)
        }
    };
    if a.is_pipewire {
        return f.make(
            Status::NotApplicable,
            format!(
                "{}: PipeWire uses neither this channel nor shared memory for these programs",
                server_label(a)
            ),
            why,
        );
    }
    let mut problems = Vec::new();
    let mut hints = Vec::new();
    let mut fix = None;
    if a.unix_socket == Some(false) {
        problems.push(format!(
            "connected over {} (the channel needs a local connection)",
            a.server_string.as_deref().unwrap_or("a non-unix transport")
        ));
        hints.push(
            "unset PULSE_SERVER (and default-server in client.conf) so programs use the local \
             connection"
                .to_owned(),
        );
    }
    if let Some(p) = a.server_protocol_version.filter(|p| *p < 30) {
        problems.push(format!(
            "the server is too old (protocol {p}; the channel needs 30, PulseAudio 6)"
        ));
        hints.push("upgrade PulseAudio to 6.0 or later".to_owned());
    }
    if a.srbchannel_module_arg == Some(false) {
        problems.push(
            "the channel is switched off in the server's setup (module-native-protocol-unix \
             srbchannel=no)"
                .into(),
        );
        hints.push(
            "remove the srbchannel= argument from the module-native-protocol-unix line in \
             default.pa, then restart the server (systemctl --user restart pulseaudio)"
                .to_owned(),
        );
    }
    if !facts.daemon_conf.shm_on() {
        problems.push(format!(
            "shared memory is off for the server ({})",
            facts.daemon_conf.shm_off_lines()
        ));
        hints.push(format!(
            "set enable-shm = yes in {}, then restart the server (systemctl --user restart \
             pulseaudio)",
            facts
                .daemon_conf
                .file
                .as_deref()
                .unwrap_or("/etc/pulse/daemon.conf")
        ));
    }
    if !facts.client_conf.shm_on() {
        problems.push(format!(
            "shared memory is off for programs ({})",
            facts.client_conf.shm_off_lines()
        ));
        let (cmd, hint) = client_shm_fix(&facts.client_conf);
        fix = cmd;
        hints.push(hint);
    }
    if problems.is_empty() {
        f.make(
            Status::Ok,
            format!(
                "{}: usable by local programs{}",
                server_label(a),
                memfd_note(facts)
            ),
            why,
        )
    } else {
        let mut finding = f
            .make(Status::WorthChanging, problems.join("; "), why)
            .with_hint(hints.join("; "));
        finding.fix = fix;
        finding
    }
}

/// The command and hint that turn client shared memory back on.
fn client_shm_fix(c: &facts::ShmConf) -> (Option<String>, String) {
    if c.fixable_by_user_conf() {
        (
            Some(FIX_CLIENT_SHM.to_owned()),
            "writes enable-shm = yes into your ~/.config/pulse/client.conf (run as your user, \
             not root), then restart the browser"
                .to_owned(),
        )
    } else if c.from_env {
        (
            None,
            format!(
                "$PULSE_CLIENTCONFIG points programs at {}: set enable-shm = yes there (or \
                 unset the variable), then restart the browser",
                c.file.as_deref().unwrap_or("?")
            ),
        )
    } else {
        (
            None,
            format!(
                "set enable-shm = yes in {} (micoff does not edit client.conf.d files), then \
                 restart the browser",
                c.disabled_in().collect::<Vec<_>>().join(", ")
            ),
        )
    }
}

pub(crate) fn client_shm(facts: &Facts, audio: AudioInput<'_>) -> Finding {
    let f = F::new(
        "client_shm",
        "audio_server",
        "Shared memory for audio programs (client.conf)",
    );
    let why = "Programs with `enable-shm = no` copy every block of audio through the server's \
               socket and cannot use the shared-memory channel. (`enable-memfd = no` alone only \
               switches them to another kind of shared memory; the channel still works.)";
    if let Ok(a) = audio {
        if a.is_pipewire {
            return f.make(
                Status::NotApplicable,
                "PipeWire does not use this setting",
                why,
            );
        }
    }
    let c = &facts.client_conf;
    let file = c.file.as_deref().unwrap_or("no client.conf (defaults: on)");
    if c.shm_on() {
        let memfd = if c.memfd_off() {
            format!(
                "; memfd off ({}): another kind of shared memory is used instead",
                c.memfd_off_lines()
            )
        } else {
            String::new()
        };
        f.make(Status::Ok, format!("on ({file}){memfd}"), why)
    } else {
        let (cmd, hint) = client_shm_fix(c);
        let mut finding = f
            .make(
                Status::WorthChanging,
                format!("off: {}", c.shm_off_lines()),
                why,
            )
            .with_hint(hint);
        finding.fix = cmd;
        finding
    }
}
