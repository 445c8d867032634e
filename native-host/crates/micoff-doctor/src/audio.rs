//! The live audio-server part of the doctor. The doctor itself only takes an
//! [`AudioServerFacts`]; it is filled from a micoff-pulse snapshot ([`from_snapshot`], preferred)
//! or, where libpulse cannot connect for us, from `pactl` output ([`from_pactl`]).

use std::io::ErrorKind;
use std::process::Command;
use std::time::Duration;

use micoff_audio_server::{missing_sockets, ServerEnv};
use serde::{Deserialize, Serialize};

/// A default source or sink as the doctor needs it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct DeviceLatency {
    pub name: String,
    pub description: Option<String>,
    /// `running`, `idle`, `suspended`.
    pub state: Option<String>,
    pub latency_us: Option<u64>,
    pub configured_latency_us: Option<u64>,
    /// `device.bus`: `pci`, `usb`, `bluetooth`.
    pub bus: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct AudioServerFacts {
    /// `pulseaudio`, or `PulseAudio (on PipeWire 0.3.65)`.
    pub server_name: String,
    pub server_version: String,
    pub is_pipewire: bool,
    pub pipewire_version: Option<String>,
    pub server_protocol_version: Option<u32>,
    pub client_protocol_version: Option<u32>,
    /// `unix:/run/user/1000/pulse/native`, `tcp:host`.
    pub server_string: Option<String>,
    /// Whether the connection is a local unix socket (srbchannel is only offered there).
    pub unix_socket: Option<bool>,
    pub default_source: Option<DeviceLatency>,
    pub default_sink: Option<DeviceLatency>,
    /// `srbchannel=` argument of module-native-protocol-unix when it is known (default true).
    pub srbchannel_module_arg: Option<bool>,
    /// Where these facts came from: `micoff-pulse` or `pactl`.
    pub gathered_by: String,
}

/// From a micoff-pulse snapshot.
pub fn from_snapshot(s: &micoff_pulse::Snapshot) -> AudioServerFacts {
    let find = |list: &[micoff_pulse::Device], name: &Option<String>| {
        let name = name.as_deref()?;
        list.iter().find(|d| d.name == name).map(|d| DeviceLatency {
            name: d.name.clone(),
            description: d.description.clone(),
            state: Some(d.state.clone()),
            latency_us: Some(d.latency_us),
            configured_latency_us: Some(d.configured_latency_us),
            bus: d.bus.clone(),
        })
    };
    let server_string = s.server.server_string.clone();
    AudioServerFacts {
        server_name: s.server.server_name.clone(),
        server_version: s.server.server_version.clone(),
        is_pipewire: s.server.is_pipewire,
        pipewire_version: s.server.pipewire_version.clone(),
        server_protocol_version: s.server.server_protocol_version,
        client_protocol_version: Some(s.server.client_protocol_version),
        unix_socket: Some(s.server.socket_path.is_some()),
        server_string,
        default_source: find(&s.sources, &s.server.default_source_name)
            .or_else(|| bare_device(&s.server.default_source_name)),
        default_sink: find(&s.sinks, &s.server.default_sink_name)
            .or_else(|| bare_device(&s.server.default_sink_name)),
        srbchannel_module_arg: None,
        gathered_by: "micoff-pulse".into(),
    }
}

fn bare_device(name: &Option<String>) -> Option<DeviceLatency> {
    name.as_ref().map(|n| DeviceLatency {
        name: n.clone(),
        ..DeviceLatency::default()
    })
}

/// From `LANG=C pactl info`, `pactl list sources`, `pactl list sinks` and
/// `pactl list short modules` (any of the last three may be empty).
pub fn from_pactl(info: &str, sources: &str, sinks: &str, modules: &str) -> AudioServerFacts {
    let field = |k: &str| {
        info.lines()
            .find_map(|l| l.trim().strip_prefix(k))
            .map(|v| v.trim().to_owned())
    };
    let server_name = field("Server Name:").unwrap_or_default();
    let is_pipewire = micoff_audio_server::is_pipewire(&server_name);
    let pipewire_version = micoff_audio_server::pipewire_version(&server_name);
    let server_string = field("Server String:");
    let unix_socket = server_string
        .as_deref()
        .map(|s| micoff_audio_server::socket_of(s).is_some());
    let proto = |k: &str| field(k).and_then(|v| v.parse().ok());
    let default_source_name = field("Default Source:");
    let default_sink_name = field("Default Sink:");
    let srbchannel_module_arg = modules
        .lines()
        .find(|l| l.contains("module-native-protocol-unix"))
        .map(|l| srbchannel_arg(l).unwrap_or(true));
    AudioServerFacts {
        server_name,
        server_version: field("Server Version:").unwrap_or_default(),
        is_pipewire,
        pipewire_version,
        server_protocol_version: proto("Server Protocol Version:"),
        client_protocol_version: proto("Library Protocol Version:"),
        server_string,
        unix_socket,
        default_source: default_source_name
            .as_deref()
            .map(|n| pactl_device(sources, n)),
        default_sink: default_sink_name.as_deref().map(|n| pactl_device(sinks, n)),
        srbchannel_module_arg,
        gathered_by: "pactl".into(),
    }
}

/// The `srbchannel=` argument on a `pactl list short modules` line, as the module reads it
/// (`pa_modargs_get_value_boolean`, i.e. pa_parse_boolean: 1/0, y/n, yes/no, t/f, true/false,
/// on/off; quotes allowed). `None` when absent or unparsable (the module then refuses to load
/// or uses its default, true).
fn srbchannel_arg(line: &str) -> Option<bool> {
    line.split_whitespace()
        .filter_map(|w| w.strip_prefix("srbchannel="))
        .next_back()
        .and_then(|v| crate::parse::pulse_bool(v.trim_matches(|c| c == '"' || c == '\'')))
}

/// The block of `pactl list sources|sinks` whose `Name:` is `name` (`State:` comes before
/// `Name:` in a block, so blocks are split on their `Source #N` / `Sink #N` headers first).
fn pactl_device(list: &str, name: &str) -> DeviceLatency {
    let mut dev = DeviceLatency {
        name: name.to_owned(),
        ..DeviceLatency::default()
    };
    let mut blocks: Vec<Vec<&str>> = Vec::new();
    for line in list.lines() {
        if line.starts_with("Source #") || line.starts_with("Sink #") || blocks.is_empty() {
            blocks.push(Vec::new());
        }
        if let Some(b) = blocks.last_mut() {
            b.push(line.trim());
        }
    }
    let Some(block) = blocks.into_iter().find(|b| {
        b.iter()
            .any(|l| l.strip_prefix("Name:").map(str::trim) == Some(name))
    }) else {
        return dev;
    };
    for t in block {
        if let Some(v) = t.strip_prefix("Description:") {
            dev.description = Some(v.trim().to_owned());
        } else if let Some(v) = t.strip_prefix("State:") {
            dev.state = Some(v.trim().to_ascii_lowercase());
        } else if let Some(v) = t.strip_prefix("Latency:") {
            // "Latency: 835610 usec, configured 2000000 usec"
            let nums: Vec<u64> = v
                .split(|c: char| !c.is_ascii_digit())
                .filter_map(|n| n.parse().ok())
                .collect();
            dev.latency_us = nums.first().copied();
            dev.configured_latency_us = nums.get(1).copied();
        } else if let Some(v) = t.strip_prefix("device.bus = ") {
            dev.bus = Some(v.trim_matches('"').to_owned());
        }
    }
    dev
}

/// Why there are no facts of the audio server: none is running, or the one there did not answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unanswered {
    /// None of the sockets libpulse tries is there (they, for the message: `A or B`).
    NotRunning(String),
    /// A server was tried and did not answer (libpulse's or pactl's reason).
    Unreachable(String),
}

impl Unanswered {
    /// `reason` (libpulse's, pactl's) as it is, unless no socket is there at all: then libpulse's
    /// reason for it ("Access denied" for a socket nobody made) would mislead, and the plain fact
    /// is that no server is running. A socket that cannot even be looked at counts as there.
    pub fn from_reason(reason: String) -> Self {
        let there = |p: &std::path::Path| !matches!(std::fs::symlink_metadata(p), Err(e) if e.kind() == ErrorKind::NotFound);
        match missing_sockets(&ServerEnv::from_process(), there) {
            Some(sockets) => Self::NotRunning(
                sockets
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(" or "),
            ),
            None => Self::Unreachable(reason),
        }
    }
}

/// Asks the running audio server: micoff-pulse first, `pactl` when that fails.
/// `Err` says why neither worked.
pub fn gather(timeout: Duration) -> Result<AudioServerFacts, Unanswered> {
    let pulse_err = match micoff_pulse::query_once(None, timeout) {
        Ok(snapshot) => {
            let mut facts = from_snapshot(&snapshot);
            // The module list is not in the snapshot; pactl can add the srbchannel arg.
            facts.srbchannel_module_arg = run_pactl(&["list", "short", "modules"])
                .ok()
                .and_then(|m| from_pactl("", "", "", &m).srbchannel_module_arg);
            return Ok(facts);
        }
        Err(e) => e.to_string(),
    };
    let info = run_pactl(&["info"]).map_err(|e| {
        tracing::debug!("pactl info: {e}");
        Unanswered::from_reason(one_line(&pulse_err))
    })?;
    let sources = run_pactl(&["list", "sources"]).unwrap_or_default();
    let sinks = run_pactl(&["list", "sinks"]).unwrap_or_default();
    let modules = run_pactl(&["list", "short", "modules"]).unwrap_or_default();
    Ok(from_pactl(&info, &sources, &sinks, &modules))
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn run_pactl(args: &[&str]) -> Result<String, String> {
    let out = Command::new("pactl")
        .args(args)
        .env("LC_ALL", "C")
        .output()
        .map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).trim().to_owned());
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const INFO_PA: &str = "Server String: /run/user/1000/pulse/native\nLibrary Protocol Version: 35\nServer Protocol Version: 35\nIs Local: yes\nClient Index: 7\nTile Size: 65472\nUser Name: tommi\nHost Name: laptop\nServer Name: pulseaudio\nServer Version: 16.1\nDefault Sample Specification: s16le 2ch 44100Hz\nDefault Channel Map: front-left,front-right\nDefault Sink: alsa_output.pci-0000_00_1f.3.analog-stereo\nDefault Source: alsa_input.pci-0000_00_1f.3.analog-stereo\nCookie: 1234:abcd\n";
    const INFO_PW: &str = "Server String: /run/user/1000/pulse/native\nLibrary Protocol Version: 35\nServer Protocol Version: 35\nIs Local: yes\nServer Name: PulseAudio (on PipeWire 0.3.65)\nServer Version: 15.0.0\nDefault Sink: alsa_output.usb-Jabra.analog-stereo\nDefault Source: alsa_input.usb-Jabra.mono-fallback\n";
    const SOURCES: &str = "Source #1\n\tState: SUSPENDED\n\tName: alsa_output.pci-0000_00_1f.3.analog-stereo.monitor\n\tLatency: 0 usec, configured 0 usec\nSource #2\n\tState: RUNNING\n\tName: alsa_input.pci-0000_00_1f.3.analog-stereo\n\tDescription: Built-in Audio Analog Stereo\n\tLatency: 835610 usec, configured 2000000 usec\n\tProperties:\n\t\tdevice.bus = \"pci\"\n";

    #[test]
    fn pactl_pulseaudio() {
        let f = from_pactl(
            INFO_PA,
            SOURCES,
            "",
            "0\tmodule-device-restore\t\t\n9\tmodule-native-protocol-unix\t\t\n",
        );
        assert_eq!(f.server_name, "pulseaudio");
        assert_eq!(f.server_version, "16.1");
        assert!(!f.is_pipewire);
        assert_eq!(f.server_protocol_version, Some(35));
        assert_eq!(f.unix_socket, Some(true));
        assert_eq!(f.srbchannel_module_arg, Some(true));
        let src = f.default_source.unwrap();
        assert_eq!(src.latency_us, Some(835610));
        assert_eq!(src.configured_latency_us, Some(2_000_000));
        assert_eq!(src.state.as_deref(), Some("running"));
        assert_eq!(src.bus.as_deref(), Some("pci"));
        // The sink list was empty: name only.
        assert_eq!(f.default_sink.unwrap().latency_us, None);
    }

    #[test]
    fn pactl_pipewire_and_srbchannel_off() {
        let f = from_pactl(INFO_PW, "", "", "");
        assert!(f.is_pipewire);
        assert_eq!(f.pipewire_version.as_deref(), Some("0.3.65"));
        assert_eq!(f.srbchannel_module_arg, None);
        let f = from_pactl(
            INFO_PA,
            "",
            "",
            "9\tmodule-native-protocol-unix\tsrbchannel=0 auth-anonymous=1\t\n",
        );
        assert_eq!(f.srbchannel_module_arg, Some(false));
        // Every spelling pa_parse_boolean accepts.
        for (arg, want) in [
            ("srbchannel=no", false),
            ("srbchannel=off", false),
            ("srbchannel=n", false),
            ("srbchannel=f", false),
            ("srbchannel=0", false),
            ("srbchannel=false", false),
            ("srbchannel=\"no\"", false),
            ("srbchannel=Off", false),
            ("srbchannel=yes", true),
            ("srbchannel=1", true),
            ("auth-anonymous=1", true),
        ] {
            let m = format!("9\tmodule-native-protocol-unix\t{arg}\t\n");
            let f = from_pactl(INFO_PA, "", "", &m);
            assert_eq!(f.srbchannel_module_arg, Some(want), "{arg}");
        }
    }
}
