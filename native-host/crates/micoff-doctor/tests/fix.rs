#![allow(clippy::unwrap_used)]
//! `fix hda`, `fix client-shm`, `fix governor` against temporary copies of the fixtures
//! (never the real /etc).

mod common;

use std::fs;
use std::path::Path;

use common::*;
use micoff_doctor::cli::{run_fix_env, FixCommand, FixCommon};
use micoff_doctor::facts::UserEnv;
use micoff_doctor::fix::System;
use micoff_doctor::report;
use micoff_doctor::{FixArgs, Root, Status};

/// A scripted System (the crate's own test double is cfg(test)-only).
#[derive(Default)]
struct Fake {
    euid: u32,
    interactive: bool,
    answer: bool,
    asked: Vec<String>,
    ran: Vec<(String, Vec<String>)>,
    on_load: Option<(std::path::PathBuf, String)>,
}

impl System for Fake {
    fn euid(&self) -> u32 {
        self.euid
    }
    fn interactive(&self) -> bool {
        self.interactive
    }
    fn ask(&mut self, q: &str, _out: &mut dyn std::io::Write) -> bool {
        self.asked.push(q.into());
        self.answer
    }
    fn run(&mut self, program: &str, args: &[String]) -> std::io::Result<i32> {
        self.ran.push((program.into(), args.to_vec()));
        if program == "modprobe" && args.len() == 1 {
            if let Some((p, text)) = &self.on_load {
                fs::write(p, text)?;
            }
        }
        Ok(0)
    }
    fn has(&self, p: &str) -> bool {
        p == "sudo"
    }
    fn graphical(&self) -> bool {
        false
    }
    fn self_command(&self) -> (String, Vec<String>) {
        (
            "/usr/bin/micoff-host".into(),
            vec!["fix".into(), "hda".into(), "--apply".into()],
        )
    }
    fn can_reload(&self, _root: &Root) -> bool {
        true
    }
}

fn common(root: &Path, mode: &str, force: bool, yes: bool) -> FixCommon {
    FixCommon {
        dry_run: mode == "dry",
        apply: mode == "apply",
        revert: mode == "revert",
        force,
        yes,
        root: root.to_path_buf(),
    }
}

fn hda(root: &Path, mode: &str, force: bool, yes: bool) -> FixArgs {
    FixArgs {
        what: FixCommand::Hda(common(root, mode, force, yes)),
    }
}

fn run(args: &FixArgs, env: &UserEnv, sys: &mut Fake) -> (i32, String, String) {
    let root = match &args.what {
        FixCommand::Hda(c) | FixCommand::ClientShm(c) => Root::new(&c.root),
        FixCommand::Governor { common, .. } => Root::new(&common.root),
    };
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = run_fix_env(args, &root, env, sys, &mut out, &mut err);
    (
        code,
        String::from_utf8(out).unwrap(),
        String::from_utf8(err).unwrap(),
    )
}

const CONF: &str = "etc/modprobe.d/micoff-hda.conf";
const LIVE: &str = "sys/module/snd_hda_intel/parameters/position_fix";

fn status_of(root: &Path, id: &str) -> Status {
    report::build(&Root::new(root), &tommi(), Err("test"))
        .finding(id)
        .unwrap()
        .status
}

fn close_streams(root: &Path) {
    fs::write(root.join("proc/asound/card0/pcm0c/sub0/status"), "closed\n").unwrap();
}

#[test]
fn hda_dry_run_changes_nothing() {
    let dir = temp_root("skylake-old-kernel");
    let mut sys = Fake::default();
    let (code, out, _) = run(&hda(dir.path(), "dry", false, false), &tommi(), &mut sys);
    assert_eq!(code, 0);
    assert!(
        out.contains("would write /etc/modprobe.d/micoff-hda.conf"),
        "{out}"
    );
    assert!(
        out.contains("options snd_hda_intel position_fix=1"),
        "{out}"
    );
    assert!(!dir.path().join(CONF).exists());
    assert!(sys.ran.is_empty());
    // No mode at all is a dry run too.
    let (code, out, _) = run(&hda(dir.path(), "", false, false), &tommi(), &mut sys);
    assert_eq!(code, 0);
    assert!(out.contains("dry run"), "{out}");
    assert!(!dir.path().join(CONF).exists());
}

#[test]
fn hda_apply_reload_verify_revert() {
    let dir = temp_root("skylake-old-kernel");
    close_streams(dir.path());
    let mut sys = Fake {
        on_load: Some((dir.path().join(LIVE), "1,-1,-1,-1,-1,-1,-1,-1\n".into())),
        ..Fake::default()
    };
    let (code, out, _) = run(&hda(dir.path(), "apply", false, true), &tommi(), &mut sys);
    assert_eq!(code, 0, "{out}");
    let conf = fs::read_to_string(dir.path().join(CONF)).unwrap();
    assert!(conf.starts_with("# Written by micoff-host"));
    assert!(
        conf.ends_with("options snd_hda_intel position_fix=1\n"),
        "{conf}"
    );
    assert!(out.contains("takes effect after"), "{out}");
    assert_eq!(
        sys.ran,
        vec![
            (
                "modprobe".to_owned(),
                vec!["-r".to_owned(), "snd_hda_intel".to_owned()]
            ),
            ("modprobe".to_owned(), vec!["snd_hda_intel".to_owned()]),
        ]
    );
    assert!(
        out.contains("Live value verified: position_fix card0=1"),
        "{out}"
    );
    assert_eq!(status_of(dir.path(), "hda_udelay"), Status::Ok);
    // Idempotent.
    let (code, out, _) = run(&hda(dir.path(), "apply", false, true), &tommi(), &mut sys);
    assert_eq!(code, 0);
    assert!(out.contains("already applied"), "{out}");
    assert_eq!(sys.ran.len(), 2, "no second reload");
    // Revert removes exactly our file.
    let (code, out, _) = run(&hda(dir.path(), "revert", false, true), &tommi(), &mut sys);
    assert_eq!(code, 0, "{out}");
    assert!(!dir.path().join(CONF).exists());
    assert!(dir.path().join("etc/modprobe.d/alsa-base.conf").exists());
    let (code, out, _) = run(&hda(dir.path(), "revert", false, true), &tommi(), &mut sys);
    assert_eq!(code, 0);
    assert!(out.contains("nothing to revert"), "{out}");
}

#[test]
fn hda_open_stream_blocks_reload_and_doctor_shows_pending() {
    let dir = temp_root("skylake-old-kernel");
    let mut sys = Fake::default();
    let (code, out, _) = run(&hda(dir.path(), "apply", false, true), &tommi(), &mut sys);
    assert_eq!(code, 0);
    assert!(
        out.contains("Not reloading: a stream is open on card0 pcm0c/sub0 (RUNNING)"),
        "{out}"
    );
    assert!(sys.ran.is_empty());
    // Written but not live yet: the doctor says a reload is pending.
    assert_eq!(
        status_of(dir.path(), "hda_position_fix"),
        Status::WorthChanging
    );
    assert_eq!(status_of(dir.path(), "hda_udelay"), Status::WorthChanging);
}

#[test]
fn hda_reload_declined_on_terminal() {
    let dir = temp_root("skylake-old-kernel");
    close_streams(dir.path());
    let mut sys = Fake {
        interactive: true,
        answer: false,
        ..Fake::default()
    };
    let (code, out, _) = run(&hda(dir.path(), "apply", false, false), &tommi(), &mut sys);
    assert_eq!(code, 0);
    assert_eq!(sys.asked.len(), 1);
    assert!(sys.ran.is_empty());
    assert!(
        out.contains("To apply it now: sudo modprobe -r snd_hda_intel"),
        "{out}"
    );
}

#[test]
fn hda_backup_of_a_foreign_file_and_restore() {
    let dir = temp_root("skylake-old-kernel");
    let path = dir.path().join(CONF);
    fs::write(&path, "options snd_hda_intel model=auto\n").unwrap();
    let mut sys = Fake::default();
    let (code, out, err) = run(&hda(dir.path(), "apply", false, true), &tommi(), &mut sys);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("micoff-hda.conf.micoff-backup"), "{out}");
    // A foreign revert is refused; ours restores the backup.
    let (code, out, _) = run(&hda(dir.path(), "revert", false, true), &tommi(), &mut sys);
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        fs::read_to_string(&path).unwrap(),
        "options snd_hda_intel model=auto\n"
    );
    assert!(!dir
        .path()
        .join("etc/modprobe.d/micoff-hda.conf.micoff-backup")
        .exists());
    let (code, out, _) = run(&hda(dir.path(), "revert", false, true), &tommi(), &mut sys);
    assert_eq!(code, 1);
    assert!(out.contains("not written by micoff"), "{out}");
}

#[test]
fn hda_refuses_where_it_would_not_help() {
    for fx in ["skylake-fixed-kernel", "ci-no-soundcard"] {
        let dir = temp_root(fx);
        let mut sys = Fake::default();
        let (code, out, _) = run(&hda(dir.path(), "apply", false, true), &tommi(), &mut sys);
        assert_eq!(code, 0);
        assert!(out.contains("nothing to do"), "{fx}: {out}");
        assert!(!dir.path().join(CONF).exists(), "{fx}");
    }
    // --force writes anyway, with a warning.
    let dir = temp_root("skylake-fixed-kernel");
    let mut sys = Fake::default();
    let (code, out, err) = run(&hda(dir.path(), "apply", true, false), &tommi(), &mut sys);
    assert_eq!(code, 0, "{out}");
    assert!(err.contains("warning: --force"), "{err}");
    assert!(out.contains("To apply it now"), "{out}");
    assert!(fs::read_to_string(dir.path().join(CONF))
        .unwrap()
        .contains("position_fix=1\n"));
    // Nothing to cover at all: even --force writes nothing.
    let dir = temp_root("ci-no-soundcard");
    let (code, _, _) = run(&hda(dir.path(), "apply", true, true), &tommi(), &mut sys);
    assert_eq!(code, 1);
    assert!(!dir.path().join(CONF).exists());
}

#[test]
fn hda_not_root_prints_and_offers_sudo() {
    let dir = temp_root("skylake-old-kernel");
    // No terminal, no --yes: print only.
    let mut sys = Fake {
        euid: 1000,
        ..Fake::default()
    };
    let (code, out, _) = run(&hda(dir.path(), "apply", false, false), &tommi(), &mut sys);
    assert_eq!(code, 1);
    assert!(
        out.contains("options snd_hda_intel position_fix=1"),
        "{out}"
    );
    assert!(out.contains("needs root; nothing changed"), "{out}");
    assert!(sys.ran.is_empty());
    assert!(!dir.path().join(CONF).exists());
    // --yes: re-run through sudo, agreeing in advance.
    let (code, _, _) = run(&hda(dir.path(), "apply", false, true), &tommi(), &mut sys);
    assert_eq!(code, 0);
    assert_eq!(sys.ran.len(), 1);
    assert_eq!(sys.ran[0].0, "sudo");
    assert_eq!(
        sys.ran[0].1,
        ["/usr/bin/micoff-host", "fix", "hda", "--apply", "--yes"]
    );
}

#[test]
fn hda_per_card_array() {
    // USB card at index 0, the Intel one at index 2: position k = card k.
    let dir = temp_root("skylake-old-kernel");
    let p = dir.path();
    fs::write(
        p.join("proc/asound/cards"),
        " 0 [Headset        ]: USB-Audio - Jabra\n                      Jabra at usb-0000:00:14.0-2, full speed\n 2 [PCH            ]: HDA-Intel - HDA Intel PCH\n                      HDA Intel PCH at 0xdf240000 irq 134\n",
    )
    .unwrap();
    fs::write(
        p.join("proc/asound/modules"),
        " 0 snd_usb_audio\n 2 snd_hda_intel\n",
    )
    .unwrap();
    fs::rename(p.join("proc/asound/card0"), p.join("proc/asound/card2")).unwrap();
    fs::rename(
        p.join("sys/class/sound/card0"),
        p.join("sys/class/sound/card2"),
    )
    .unwrap();
    let mut sys = Fake::default();
    let (code, out, _) = run(&hda(p, "dry", false, false), &tommi(), &mut sys);
    assert_eq!(code, 0);
    assert!(
        out.contains("options snd_hda_intel position_fix=-1,-1,1"),
        "{out}"
    );
}

fn shm(root: &Path, mode: &str) -> FixArgs {
    FixArgs {
        what: FixCommand::ClientShm(common(root, mode, false, false)),
    }
}

#[test]
fn client_shm_apply_and_revert() {
    let dir = temp_root("skylake-old-kernel");
    let user_conf = dir.path().join("home/tommi/.config/pulse/client.conf");
    let mut sys = Fake::default();
    let (code, out, _) = run(&shm(dir.path(), "dry"), &tommi(), &mut sys);
    assert_eq!(code, 0);
    assert!(out.contains("enable-shm = yes"), "{out}");
    assert!(!user_conf.exists());
    let (code, out, _) = run(&shm(dir.path(), "apply"), &tommi(), &mut sys);
    assert_eq!(code, 0, "{out}");
    let text = fs::read_to_string(&user_conf).unwrap();
    assert!(text.contains("\nenable-shm = yes\n"), "{text}");
    // The other system settings are carried over (PulseAudio reads only the first file).
    assert!(text.contains("; default-sink ="), "{text}");
    assert_eq!(status_of(dir.path(), "client_shm"), Status::Ok);
    // System file untouched.
    assert!(fs::read_to_string(dir.path().join("etc/pulse/client.conf"))
        .unwrap()
        .contains("\nenable-shm = no\n"));
    let (code, out, _) = run(&shm(dir.path(), "apply"), &tommi(), &mut sys);
    assert_eq!(code, 0);
    assert!(out.contains("nothing to do"), "{out}");
    let (code, _, _) = run(&shm(dir.path(), "revert"), &tommi(), &mut sys);
    assert_eq!(code, 0);
    assert!(!user_conf.exists());
    assert_eq!(status_of(dir.path(), "client_shm"), Status::WorthChanging);
}

#[test]
fn client_shm_edits_users_own_file_with_backup() {
    let dir = temp_root("skylake-fixed-kernel");
    let user_conf = dir.path().join("home/tommi/.config/pulse/client.conf");
    fs::write(&user_conf, "autospawn = no\nenable-memfd = no\n").unwrap();
    assert_eq!(status_of(dir.path(), "client_shm"), Status::WorthChanging);
    let mut sys = Fake::default();
    let (code, out, _) = run(&shm(dir.path(), "apply"), &tommi(), &mut sys);
    assert_eq!(code, 0, "{out}");
    let text = fs::read_to_string(&user_conf).unwrap();
    assert!(text.contains("autospawn = no\n"), "{text}");
    assert!(
        text.contains("; micoff: was `enable-memfd = no`\nenable-memfd = yes\n"),
        "{text}"
    );
    let (code, _, _) = run(&shm(dir.path(), "revert"), &tommi(), &mut sys);
    assert_eq!(code, 0);
    assert_eq!(
        fs::read_to_string(&user_conf).unwrap(),
        "autospawn = no\nenable-memfd = no\n"
    );
}

#[test]
fn governor_apply_and_revert() {
    let dir = temp_root("skylake-old-kernel");
    let gov = |cpu: u32| {
        fs::read_to_string(dir.path().join(format!(
            "sys/devices/system/cpu/cpu{cpu}/cpufreq/scaling_governor"
        )))
        .unwrap()
        .trim()
        .to_owned()
    };
    let args = |mode: &str| FixArgs {
        what: FixCommand::Governor {
            common: common(dir.path(), mode, false, false),
            cpus: Some("1-2".into()),
        },
    };
    let mut sys = Fake::default();
    let (code, out, _) = run(&args("dry"), &tommi(), &mut sys);
    assert_eq!(code, 0);
    assert!(out.contains("cpu1: powersave -> performance"), "{out}");
    assert_eq!(gov(1), "powersave");
    let (code, out, _) = run(&args("apply"), &tommi(), &mut sys);
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        (gov(0), gov(1), gov(2), gov(3)),
        (
            "powersave".into(),
            "performance".into(),
            "performance".into(),
            "powersave".into()
        )
    );
    let (code, out, _) = run(&args("apply"), &tommi(), &mut sys);
    assert_eq!(code, 0);
    assert!(out.contains("already applied"), "{out}");
    let (code, _, _) = run(&args("revert"), &tommi(), &mut sys);
    assert_eq!(code, 0);
    assert_eq!((gov(1), gov(2)), ("powersave".into(), "powersave".into()));
    assert!(!dir.path().join("run/micoff-governor").exists());
}
