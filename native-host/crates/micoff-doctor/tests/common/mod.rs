#![allow(dead_code, clippy::unwrap_used)]
//! Fixture helpers: copy a fixture tree into a temporary root (tests never write into the
//! fixtures, and never into the real /etc).

use std::fs;
use std::path::{Path, PathBuf};

use micoff_doctor::facts::UserEnv;
use micoff_doctor::{AudioServerFacts, DeviceLatency};

pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(name)
}

fn copy_tree(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for e in fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let ty = e.file_type().unwrap();
        let dst = to.join(e.file_name());
        if ty.is_symlink() {
            std::os::unix::fs::symlink(fs::read_link(e.path()).unwrap(), &dst).unwrap();
        } else if ty.is_dir() {
            copy_tree(&e.path(), &dst);
        } else {
            fs::copy(e.path(), &dst).unwrap();
        }
    }
}

/// A writable copy of a fixture tree.
pub fn temp_root(name: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&fixture(name), dir.path());
    dir
}

pub fn tommi() -> UserEnv {
    UserEnv {
        user: Some("tommi".into()),
        home: Some("/home/tommi".into()),
        xdg_config_home: None,
        xdg_state_home: None,
        pulse_clientconfig: None,
    }
}

pub fn root_user() -> UserEnv {
    UserEnv {
        user: Some("root".into()),
        home: Some("/root".into()),
        xdg_config_home: None,
        xdg_state_home: None,
        pulse_clientconfig: None,
    }
}

fn dev(name: &str, state: &str, latency_us: u64, configured_us: u64) -> DeviceLatency {
    DeviceLatency {
        name: name.into(),
        description: Some(format!("{name} desc")),
        state: Some(state.into()),
        latency_us: Some(latency_us),
        configured_latency_us: Some(configured_us),
        bus: Some("pci".into()),
    }
}

/// PulseAudio 16.1 with Chromium recording at 10 ms.
pub fn pulse_low_latency() -> AudioServerFacts {
    AudioServerFacts {
        server_name: "pulseaudio".into(),
        server_version: "16.1".into(),
        is_pipewire: false,
        pipewire_version: None,
        server_protocol_version: Some(35),
        client_protocol_version: Some(35),
        server_string: Some("/run/user/1000/pulse/native".into()),
        unix_socket: Some(true),
        default_source: Some(dev("alsa_input.pci", "running", 9_000, 10_000)),
        default_sink: Some(dev("alsa_output.pci", "running", 30_000, 40_000)),
        srbchannel_module_arg: Some(true),
        gathered_by: "test".into(),
    }
}

/// PulseAudio reached over TCP, playing at 5 ms, nothing recording.
pub fn pulse_tcp() -> AudioServerFacts {
    AudioServerFacts {
        server_string: Some("tcp:127.0.0.1:4713".into()),
        unix_socket: Some(false),
        default_source: Some(dev("alsa_input.pci", "suspended", 0, 0)),
        default_sink: Some(dev("alsa_output.pci", "running", 4_000, 5_000)),
        ..pulse_low_latency()
    }
}

pub fn pipewire() -> AudioServerFacts {
    AudioServerFacts {
        server_name: "PulseAudio (on PipeWire 0.3.65)".into(),
        server_version: "15.0.0".into(),
        is_pipewire: true,
        pipewire_version: Some("0.3.65".into()),
        default_source: None,
        ..pulse_low_latency()
    }
}

pub const LIVE: &str = "sys/module/snd_hda_intel/parameters/position_fix";

/// Rearranges a copy of `skylake-old-kernel` into three cards: a USB headset at ALSA card 0,
/// an NVIDIA HDMI controller on snd_hda_intel at card 1 (snd_hda_intel's controller #0) and the
/// Intel Kaby Lake PCH at card 2 (snd_hda_intel's #1). `nvidia`: false leaves card 1 out (the
/// Intel one is then snd_hda_intel's #0).
pub fn usb_nvidia_intel(root: &Path, nvidia: bool) {
    let mut cards = String::from(
        " 0 [Headset        ]: USB-Audio - Jabra\n                      Jabra at usb-0000:00:14.0-2, full speed\n",
    );
    let mut modules = String::from(" 0 snd_usb_audio\n");
    if nvidia {
        cards.push_str(" 1 [NVidia         ]: HDA-Intel - HDA NVidia\n                      HDA NVidia at 0xee080000 irq 17\n");
        modules.push_str(" 1 snd_hda_intel\n");
        let gpu = root.join("sys/devices/pci0000:00/0000:00:01.0/0000:01:00.1");
        fs::create_dir_all(&gpu).unwrap();
        fs::write(gpu.join("vendor"), "0x10de\n").unwrap();
        fs::write(gpu.join("device"), "0x10f1\n").unwrap();
        fs::create_dir_all(root.join("sys/class/sound/card1")).unwrap();
        std::os::unix::fs::symlink(
            "../../../devices/pci0000:00/0000:00:01.0/0000:01:00.1",
            root.join("sys/class/sound/card1/device"),
        )
        .unwrap();
        fs::create_dir_all(root.join("proc/asound/card1/pcm3p/sub0")).unwrap();
        fs::write(root.join("proc/asound/card1/pcm3p/sub0/status"), "closed\n").unwrap();
    }
    cards.push_str(" 2 [PCH            ]: HDA-Intel - HDA Intel PCH\n                      HDA Intel PCH at 0xdf240000 irq 134\n");
    modules.push_str(" 2 snd_hda_intel\n");
    fs::write(root.join("proc/asound/cards"), cards).unwrap();
    fs::write(root.join("proc/asound/modules"), modules).unwrap();
    fs::rename(
        root.join("proc/asound/card0"),
        root.join("proc/asound/card2"),
    )
    .unwrap();
    fs::rename(
        root.join("sys/class/sound/card0"),
        root.join("sys/class/sound/card2"),
    )
    .unwrap();
}

/// Fails unless `cmd` is one command line a shell accepts as it is: no prose around it, no
/// backticks (`sh -n` would take those for command substitution).
pub fn assert_runnable(cmd: &str, label: &str) {
    assert!(!cmd.contains('`'), "{label}: backticks in {cmd:?}");
    assert!(
        !cmd.contains("   "),
        "{label}: prose after the command in {cmd:?}"
    );
    let status = std::process::Command::new("sh")
        .args(["-n", "-c", cmd])
        .status()
        .unwrap();
    assert!(status.success(), "{label}: sh -n rejects {cmd:?}");
}
