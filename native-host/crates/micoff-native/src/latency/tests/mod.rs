//! The capture-latency tests, by concern (one file each), on temporary folders; here the
//! fixtures they share: a temporary `Paths`, a stand-in browser command, a system desktop
//! entry, server infos, record streams and a fake `World`.

#![allow(clippy::unwrap_used)]

mod apply;
mod audio_server;
mod content;
mod old_files;
mod paths;
mod recorded;
mod restart;
mod set;
mod status;
mod wrappers;

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use super::apply::apply;
use super::audio_server::{parse_version, server_of, PIPEWIRE_MIN_RULES};
use super::configured::{configured_from, our_files};
use super::content::{
    desktop_entry_content, exec_env_would_misread, min_frag, min_req, rule_content, sh_quote,
    wrapper_content,
};
use super::marker::{read_meta, MARKER, META};
use super::paths::Paths;
use super::plan::{Action, SetRequest};
use super::proc::World;
use super::restart::{audio_services, browser_of_exe};
use super::set::set_for_server;
use super::status::compute_status;
use crate::protocol::{AudioServerInfo, AudioStream, Browser, Mechanism, ServerKind, StreamKind};

fn env(pairs: &[(&str, &str)]) -> HashMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn temp_paths() -> (tempfile::TempDir, Paths) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let paths = Paths {
        config_home: root.join("config"),
        data_home: root.join("data"),
        data_dirs: vec![root.join("system")],
        bin_home: Some(root.join("home/.local/bin")),
        // No browser command on PATH: no wrappers unless a test puts one there.
        path_dirs: Vec::new(),
        state_home: Some(root.join("state")),
    };
    (dir, paths)
}

/// An executable `name` in `dir` that prints its arguments and PULSE_LATENCY_MSEC (a stand-in for
/// the browser's own command).
fn fake_command(dir: &Path, name: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    fs::create_dir_all(dir).unwrap();
    let p = dir.join(name);
    fs::write(&p, "#!/bin/sh\necho \"${PULSE_LATENCY_MSEC:-unset} $*\"\n").unwrap();
    fs::set_permissions(&p, fs::Permissions::from_mode(0o755)).unwrap();
    p
}

fn system_entry(paths: &Paths, id: &str) -> PathBuf {
    let p = paths.data_dirs[0].join("applications").join(id);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(
        &p,
        "[Desktop Entry]\nName=Chromium\nExec=/usr/bin/chromium %U\nType=Application\n\n\
         [Desktop Action new-window]\nName=New Window\nExec=/usr/bin/chromium --new-window\n",
    )
    .unwrap();
    p
}

fn info(pipewire: Option<&str>) -> AudioServerInfo {
    let server = micoff_pulse::ServerInfo {
        server_string: None,
        socket_path: None,
        server_name: match pipewire {
            Some(v) => format!("PulseAudio (on PipeWire {v})"),
            None => "pulseaudio".into(),
        },
        server_version: if pipewire.is_some() { "15.0.0" } else { "16.1" }.into(),
        is_pipewire: pipewire.is_some(),
        pipewire_version: pipewire.map(str::to_owned),
        host_name: None,
        user_name: None,
        default_sink_name: None,
        default_source_name: None,
        sample_format: "s16le".into(),
        sample_rate_hz: 48_000,
        channels: 2,
        server_protocol_version: None,
        client_protocol_version: 35,
        is_local: Some(true),
    };
    AudioServerInfo::new(server, vec![4242])
}

fn record(index: u32, app: &str, pid: u32, buffer_us: u64) -> AudioStream {
    AudioStream {
        kind: StreamKind::Record,
        index,
        name: Some("RecordStream".into()),
        client_index: Some(index + 100),
        client_name: Some(app.into()),
        application_name: Some(app.into()),
        application_process_id: Some(pid),
        application_process_binary: Some(if app.contains("Chromium") {
            "chromium".into()
        } else {
            "pacat".into()
        }),
        device_index: 3,
        device_name: Some("mic".into()),
        device_configured_latency_us: Some(10_000),
        sample_format: "s16le".into(),
        sample_rate_hz: 48_000,
        channels: 2,
        buffer_latency_us: buffer_us,
        ..Default::default()
    }
}

struct FakeWorld {
    env: HashMap<u32, u32>,
    started: Option<SystemTime>,
}

impl World for FakeWorld {
    fn latency_env(&self, pid: u32) -> Option<u32> {
        self.env.get(&pid).copied()
    }
    fn server_started(&self, _: &AudioServerInfo) -> Option<SystemTime> {
        self.started
    }
}

fn world(env: &[(u32, u32)], started: Option<SystemTime>) -> FakeWorld {
    FakeWorld {
        env: env.iter().copied().collect(),
        started,
    }
}

fn set_req(ms: Option<u32>, mechanism: Option<Mechanism>) -> SetRequest {
    SetRequest {
        capture_ms: ms,
        browsers: Vec::new(),
        mechanism,
        dry_run: false,
    }
}
