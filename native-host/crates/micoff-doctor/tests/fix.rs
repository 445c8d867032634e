#![allow(clippy::unwrap_used)]
//! `fix hda`, `fix client-shm`, `fix governor` against temporary copies of the fixtures
//! (never the real /etc).

mod common;

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

use common::*;
use micoff_doctor::cli::run_fix_env;
use micoff_doctor::facts::UserEnv;
use micoff_doctor::fix::System;
use micoff_doctor::report;
use micoff_doctor::{
    ClientShmArgs, FixArgs, FixCommand, GovernorArgs, HdaArgs, ModeArgs, NoAudio, Root, Status,
};

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

fn mode(m: &str) -> ModeArgs {
    ModeArgs {
        dry_run: m == "dry",
        apply: m == "apply",
        revert: m == "revert",
    }
}

fn hda_args(root: &Path, m: &str) -> HdaArgs {
    HdaArgs {
        mode: mode(m),
        force: false,
        yes: false,
        reload: false,
        root: root.into(),
    }
}

/// `fix hda` with `--force` / `--yes` as given (no `--reload`).
fn hda(root: &Path, m: &str, force: bool, yes: bool) -> FixArgs {
    FixArgs {
        what: FixCommand::Hda(HdaArgs {
            force,
            yes,
            ..hda_args(root, m)
        }),
    }
}

/// `fix hda --apply --reload`.
fn hda_reload(root: &Path) -> FixArgs {
    FixArgs {
        what: FixCommand::Hda(HdaArgs {
            reload: true,
            ..hda_args(root, "apply")
        }),
    }
}

fn run(args: &FixArgs, env: &UserEnv, sys: &mut Fake) -> (i32, String, String) {
    let root = Root::new(args.what.root());
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = run_fix_env(args, &root, env, sys, &mut out, &mut err);
    (
        code,
        String::from_utf8(out).unwrap(),
        String::from_utf8(err).unwrap(),
    )
}

const CONF: &str = "etc/modprobe.d/micoff-hda.conf";

fn status_of(root: &Path, id: &str) -> Status {
    report::build(&Root::new(root), &tommi(), Err(NoAudio::NotQueried("test")))
        .finding(id)
        .unwrap()
        .status
}

fn close_streams(root: &Path) {
    fs::write(root.join("proc/asound/card0/pcm0c/sub0/status"), "closed\n").unwrap();
}

fn backup(root: &Path, n: u32) -> std::path::PathBuf {
    micoff_doctor::fix::backup_path(&root.join(CONF), n)
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
        out.contains("options snd_hda_intel position_fix=1\n"),
        "{out}"
    );
    // The apply hint repeats the options that matter, so it acts on the same tree.
    assert!(
        out.contains(&format!(
            "Apply with: sudo micoff-host fix hda --apply --root {}\n",
            dir.path().display()
        )),
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
    let (code, out, _) = run(&hda_reload(dir.path()), &tommi(), &mut sys);
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
        out.contains("Live value verified: position_fix card0=1 (LPIB)"),
        "{out}"
    );
    assert_eq!(status_of(dir.path(), "hda_udelay"), Status::Ok);
    // Idempotent.
    let (code, out, _) = run(&hda_reload(dir.path()), &tommi(), &mut sys);
    assert_eq!(code, 0);
    assert!(out.contains("already applied"), "{out}");
    assert_eq!(sys.ran.len(), 2, "no second reload");
    // Revert removes exactly our file.
    let (code, out, _) = run(&hda(dir.path(), "revert", false, false), &tommi(), &mut sys);
    assert_eq!(code, 0, "{out}");
    assert!(!dir.path().join(CONF).exists());
    assert!(dir.path().join("etc/modprobe.d/alsa-base.conf").exists());
    let (code, out, _) = run(&hda(dir.path(), "revert", false, false), &tommi(), &mut sys);
    assert_eq!(code, 0);
    assert!(out.contains("nothing to revert"), "{out}");
}

#[test]
fn yes_is_not_consent_to_the_module_reload() {
    // As root with --yes, no terminal: the file is written, the reload is only offered.
    let dir = temp_root("skylake-old-kernel");
    close_streams(dir.path());
    let mut sys = Fake::default();
    let (code, out, _) = run(&hda(dir.path(), "apply", false, true), &tommi(), &mut sys);
    assert_eq!(code, 0, "{out}");
    assert!(dir.path().join(CONF).exists());
    assert!(sys.ran.is_empty(), "{:?}", sys.ran);
    assert!(
        out.contains("To apply it now: sudo modprobe -r snd_hda_intel"),
        "{out}"
    );
    // On a terminal the reload is its own question.
    fs::remove_file(dir.path().join(CONF)).unwrap();
    let mut sys = Fake {
        interactive: true,
        answer: true,
        ..Fake::default()
    };
    let (code, _, _) = run(&hda(dir.path(), "apply", false, true), &tommi(), &mut sys);
    assert_eq!(code, 1, "the live value did not change in the fake");
    assert_eq!(sys.asked.len(), 1);
    assert!(sys.asked[0].contains("Reload snd_hda_intel"));
    assert_eq!(sys.ran.len(), 2);
}

#[test]
fn hda_open_stream_blocks_reload_and_doctor_shows_pending() {
    let dir = temp_root("skylake-old-kernel");
    let mut sys = Fake::default();
    let (code, out, _) = run(&hda_reload(dir.path()), &tommi(), &mut sys);
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
fn hda_never_loses_a_foreign_file() {
    let dir = temp_root("skylake-old-kernel");
    let path = dir.path().join(CONF);
    fs::write(&path, "options snd_hda_intel model=auto\n").unwrap();
    let mut sys = Fake::default();
    let (code, out, err) = run(&hda(dir.path(), "apply", false, false), &tommi(), &mut sys);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("micoff-hda.conf.micoff-backup "), "{out}");
    assert_eq!(
        fs::read_to_string(backup(dir.path(), 1)).unwrap(),
        "options snd_hda_intel model=auto\n"
    );
    // The user puts their own file in place of ours, then applies again: that file gets a
    // backup of its own, the first one stays.
    fs::write(&path, "options snd_hda_intel model=dell\n").unwrap();
    let (code, out, _) = run(&hda(dir.path(), "apply", false, false), &tommi(), &mut sys);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("micoff-hda.conf.micoff-backup.2 "), "{out}");
    assert_eq!(
        fs::read_to_string(backup(dir.path(), 1)).unwrap(),
        "options snd_hda_intel model=auto\n"
    );
    assert_eq!(
        fs::read_to_string(backup(dir.path(), 2)).unwrap(),
        "options snd_hda_intel model=dell\n"
    );
    // Revert puts back what the last apply replaced and says the older backup stays.
    let (code, out, _) = run(&hda(dir.path(), "revert", false, false), &tommi(), &mut sys);
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        fs::read_to_string(&path).unwrap(),
        "options snd_hda_intel model=dell\n"
    );
    assert!(!backup(dir.path(), 2).exists());
    assert!(backup(dir.path(), 1).exists());
    assert!(
        out.contains("An older backup stays: ") && out.contains("micoff-hda.conf.micoff-backup "),
        "{out}"
    );
    // A revert now finds a foreign file: refused, in the one error style.
    let (code, _, err) = run(&hda(dir.path(), "revert", false, false), &tommi(), &mut sys);
    assert_eq!(code, 1);
    assert!(
        err.starts_with("micoff-host fix hda: --revert: ") && err.contains("not written by micoff"),
        "{err}"
    );
}

#[test]
fn revert_never_removes_a_foreign_file_even_forced() {
    let dir = temp_root("skylake-old-kernel");
    let path = dir.path().join(CONF);
    fs::write(&path, "options snd_hda_intel model=auto\n").unwrap();
    for euid in [0, 1000] {
        let mut sys = Fake {
            euid,
            ..Fake::default()
        };
        // `--revert --force` cannot be given on the command line (clap refuses the pair); the
        // options struct can still carry both: revert ignores force.
        let (code, out, err) = run(&hda(dir.path(), "revert", true, true), &tommi(), &mut sys);
        assert_eq!(code, 1, "{out}");
        assert!(err.contains("not written by micoff; left alone"), "{err}");
        assert!(sys.ran.is_empty(), "no escalation for nothing");
        assert_eq!(
            fs::read_to_string(&path).unwrap(),
            "options snd_hda_intel model=auto\n"
        );
    }
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
    // --force writes anyway, with a warning; its dry run says how to apply it forced.
    let dir = temp_root("skylake-fixed-kernel");
    let mut sys = Fake::default();
    let (code, out, _) = run(&hda(dir.path(), "dry", true, false), &tommi(), &mut sys);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("fix hda --apply --force --root"), "{out}");
    let (code, out, err) = run(&hda(dir.path(), "apply", true, false), &tommi(), &mut sys);
    assert_eq!(code, 0, "{out}");
    assert!(err.contains("warning: --force"), "{err}");
    assert!(out.contains("To apply it now"), "{out}");
    assert!(fs::read_to_string(dir.path().join(CONF))
        .unwrap()
        .contains("position_fix=1\n"));
    // Nothing to cover at all: --force refuses plainly, without a warning first.
    let dir = temp_root("ci-no-soundcard");
    let (code, out, err) = run(&hda(dir.path(), "apply", true, true), &tommi(), &mut sys);
    assert_eq!(code, 1, "{out}");
    assert!(
        err.starts_with("micoff-host fix hda: --force refused: "),
        "{err}"
    );
    assert!(err.contains("nothing was written"), "{err}");
    assert!(!err.contains("warning"), "{err}");
    assert!(!dir.path().join(CONF).exists());
}

#[test]
fn hda_does_nothing_where_position_fix_already_avoids_the_udelay() {
    // usb-headset: alsa-base.conf sets position_fix=1 and it is live.
    let dir = temp_root("usb-headset");
    let mut sys = Fake::default();
    let (code, out, _) = run(&hda(dir.path(), "apply", false, false), &tommi(), &mut sys);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("nothing to do: /etc/modprobe.d/alsa-base.conf already sets card0 position_fix=1, which avoids the udelay, and it is live"),
        "{out}"
    );
    assert!(!dir.path().join(CONF).exists());
    // --force writes it anyway, saying why it would not help.
    let (code, out, err) = run(&hda(dir.path(), "apply", true, false), &tommi(), &mut sys);
    assert_eq!(code, 0, "{out}");
    assert!(err.contains("warning: --force: writing"), "{err}");
    assert!(err.contains("alsa-base.conf already sets"), "{err}");
    assert!(dir.path().join(CONF).exists());
    // Set in modprobe.d but not loaded yet: still nothing to write, the reload is what is missing.
    let dir = temp_root("skylake-old-kernel");
    fs::write(
        dir.path().join("etc/modprobe.d/zz-audio.conf"),
        "options snd-hda-intel position_fix=2\n",
    )
    .unwrap();
    let (code, out, _) = run(&hda(dir.path(), "apply", false, false), &tommi(), &mut sys);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("it is not live yet"), "{out}");
    assert!(out.contains("sudo modprobe -r snd_hda_intel"), "{out}");
    assert!(!dir.path().join(CONF).exists());
    // A value that does not avoid it (5 = SKL+) is no reason to stop: written.
    fs::write(
        dir.path().join("etc/modprobe.d/zz-audio.conf"),
        "options snd-hda-intel position_fix=5\n",
    )
    .unwrap();
    let (code, out, err) = run(&hda(dir.path(), "apply", false, false), &tommi(), &mut sys);
    assert!(dir.path().join(CONF).exists(), "{out}");
    // ...but zz-audio.conf is read after micoff-hda.conf and wins: said plainly, exit 3.
    assert!(err.contains("it is applied after ours and wins"), "{err}");
    assert_eq!(code, 3, "{out}");
    assert!(
        out.contains("zz-audio.conf is read after /etc/modprobe.d/micoff-hda.conf and sets card0 position_fix=5"),
        "{out}"
    );
    assert!(
        out.contains("the udelay stays after a reload. micoff does not edit that file"),
        "{out}"
    );
    // Run again: already applied and still overridden, said the same way.
    let (code, out, _) = run(&hda(dir.path(), "apply", false, false), &tommi(), &mut sys);
    assert_eq!(code, 3, "{out}");
    assert!(out.contains("fix hda: already applied"), "{out}");
    assert!(
        out.contains("sets card0 position_fix=5: the udelay stays. micoff does not edit that file"),
        "{out}"
    );
}

#[test]
fn hda_not_root_prints_and_offers_sudo() {
    let dir = temp_root("skylake-old-kernel");
    // No terminal, no --yes: print only.
    let mut sys = Fake {
        euid: 1000,
        ..Fake::default()
    };
    let (code, out, err) = run(&hda(dir.path(), "apply", false, false), &tommi(), &mut sys);
    assert_eq!(code, 1);
    assert!(
        out.contains("options snd_hda_intel position_fix=1"),
        "{out}"
    );
    assert!(err.contains("needs root; nothing changed"), "{err}");
    assert!(sys.ran.is_empty());
    assert!(!dir.path().join(CONF).exists());
    // --yes: re-run through sudo with the arguments as they were (no consent added for the
    // reload).
    let (code, _, _) = run(&hda(dir.path(), "apply", false, true), &tommi(), &mut sys);
    assert_eq!(code, 0);
    assert_eq!(sys.ran.len(), 1);
    assert_eq!(sys.ran[0].0, "sudo");
    assert_eq!(
        sys.ran[0].1,
        ["/usr/bin/micoff-host", "fix", "hda", "--apply"]
    );
    // A yes on the terminal to sudo is the same: only that.
    let mut sys = Fake {
        euid: 1000,
        interactive: true,
        answer: true,
        ..Fake::default()
    };
    let (code, _, _) = run(&hda(dir.path(), "apply", false, false), &tommi(), &mut sys);
    assert_eq!(code, 0);
    assert_eq!(sys.asked.len(), 1);
    assert!(sys.asked[0].contains("needs root"));
    assert_eq!(
        sys.ran[0].1,
        ["/usr/bin/micoff-host", "fix", "hda", "--apply"]
    );
}

#[test]
fn hda_per_controller_array_follows_snd_hda_intels_probe_order() {
    // USB card at ALSA 0, the Intel one at ALSA 2: the Intel controller is snd_hda_intel's
    // first (#0), so the array has one entry.
    let dir = temp_root("skylake-old-kernel");
    usb_nvidia_intel(dir.path(), false);
    let mut sys = Fake::default();
    let (code, out, _) = run(&hda(dir.path(), "dry", false, false), &tommi(), &mut sys);
    assert_eq!(code, 0);
    assert!(
        out.contains("options snd_hda_intel position_fix=1\n"),
        "{out}"
    );
    assert!(out.contains("# entry 0: card2 PCH: 8086:9d71"), "{out}");
    // With an NVIDIA HDMI controller on snd_hda_intel before it, that one keeps -1.
    let dir = temp_root("skylake-old-kernel");
    usb_nvidia_intel(dir.path(), true);
    close_streams_at(dir.path(), 2);
    let mut sys = Fake {
        on_load: Some((dir.path().join(LIVE), "-1,1,-1,-1\n".into())),
        ..Fake::default()
    };
    let (code, out, _) = run(&hda_reload(dir.path()), &tommi(), &mut sys);
    assert_eq!(code, 0, "{out}");
    let conf = fs::read_to_string(dir.path().join(CONF)).unwrap();
    assert!(
        conf.ends_with("options snd_hda_intel position_fix=-1,1\n"),
        "{conf}"
    );
    // Verified against entry 1 of the live array.
    assert!(
        out.contains("Live value verified: position_fix card2=1 (LPIB)"),
        "{out}"
    );
}

fn close_streams_at(root: &Path, card: u32) {
    fs::write(
        root.join(format!("proc/asound/card{card}/pcm0c/sub0/status")),
        "closed\n",
    )
    .unwrap();
}

fn shm(root: &Path, m: &str) -> FixArgs {
    FixArgs {
        what: FixCommand::ClientShm(ClientShmArgs {
            mode: mode(m),
            root: root.into(),
        }),
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
    assert!(
        out.contains("Apply with: micoff-host fix client-shm --apply --root"),
        "{out}"
    );
    assert!(!user_conf.exists());
    let (code, out, _) = run(&shm(dir.path(), "apply"), &tommi(), &mut sys);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("restart the browser"), "{out}");
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
    fs::write(
        &user_conf,
        "autospawn = no\nenable-shm = no\nenable-memfd = no\n",
    )
    .unwrap();
    assert_eq!(status_of(dir.path(), "client_shm"), Status::WorthChanging);
    let mut sys = Fake::default();
    let (code, out, _) = run(&shm(dir.path(), "apply"), &tommi(), &mut sys);
    assert_eq!(code, 0, "{out}");
    let text = fs::read_to_string(&user_conf).unwrap();
    assert!(text.contains("autospawn = no\n"), "{text}");
    assert!(
        text.contains("; micoff: was `enable-shm = no`\nenable-shm = yes\n"),
        "{text}"
    );
    // memfd is left as it was: POSIX shared memory serves srbchannel just as well.
    assert!(text.contains("\nenable-memfd = no\n"), "{text}");
    assert_eq!(status_of(dir.path(), "client_shm"), Status::Ok);
    let (code, _, _) = run(&shm(dir.path(), "revert"), &tommi(), &mut sys);
    assert_eq!(code, 0);
    assert_eq!(
        fs::read_to_string(&user_conf).unwrap(),
        "autospawn = no\nenable-shm = no\nenable-memfd = no\n"
    );
}

#[test]
fn client_shm_memfd_off_alone_is_nothing_to_do() {
    let dir = temp_root("skylake-fixed-kernel");
    let user_conf = dir.path().join("home/tommi/.config/pulse/client.conf");
    fs::write(&user_conf, "enable-memfd = no\n").unwrap();
    let mut sys = Fake::default();
    let (code, out, _) = run(&shm(dir.path(), "apply"), &tommi(), &mut sys);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("nothing to do"), "{out}");
    assert!(out.contains("POSIX shared memory"), "{out}");
    assert_eq!(
        fs::read_to_string(&user_conf).unwrap(),
        "enable-memfd = no\n"
    );
}

#[test]
fn client_shm_says_when_it_stays_off() {
    // A .d file of the user's own client.conf turns it off again after ours.
    let dir = temp_root("skylake-fixed-kernel");
    let pulse = dir.path().join("home/tommi/.config/pulse");
    fs::write(pulse.join("client.conf"), "enable-shm = no\n").unwrap();
    fs::create_dir_all(pulse.join("client.conf.d")).unwrap();
    fs::write(
        pulse.join("client.conf.d/50-noshm.conf"),
        "enable-shm = no\n",
    )
    .unwrap();
    let mut sys = Fake::default();
    let (code, out, _) = run(&shm(dir.path(), "apply"), &tommi(), &mut sys);
    assert_eq!(code, 3, "{out}");
    assert!(
        out.contains("wrote /home/tommi/.config/pulse/client.conf"),
        "{out}"
    );
    assert!(
        out.contains("Shared memory is still off for clients: /home/tommi/.config/pulse/client.conf.d/50-noshm.conf: enable-shm = no"),
        "{out}"
    );
    assert!(!out.contains("restart the browser"), "{out}");
    // $PULSE_CLIENTCONFIG points clients at another file.
    let dir = temp_root("skylake-fixed-kernel");
    fs::write(dir.path().join("home/tommi/ab.conf"), "enable-shm = no\n").unwrap();
    let env = UserEnv {
        pulse_clientconfig: Some("/home/tommi/ab.conf".into()),
        ..tommi()
    };
    let (code, out, err) = run(&shm(dir.path(), "apply"), &env, &mut sys);
    assert_eq!(code, 3, "{out}");
    assert!(
        err.contains("$PULSE_CLIENTCONFIG points at /home/tommi/ab.conf"),
        "{err}"
    );
    assert!(
        out.contains("$PULSE_CLIENTCONFIG makes clients read /home/tommi/ab.conf"),
        "{out}"
    );
}

fn governor(root: &Path, m: &str, cpus: Option<&str>, yes: bool) -> FixArgs {
    FixArgs {
        what: FixCommand::Governor(GovernorArgs {
            mode: mode(m),
            cpus: cpus.map(str::to_owned),
            yes,
            root: root.into(),
        }),
    }
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
    let mut sys = Fake::default();
    let (code, out, _) = run(
        &governor(dir.path(), "dry", Some("1-2"), false),
        &tommi(),
        &mut sys,
    );
    assert_eq!(code, 0);
    assert!(out.contains("cpu1: powersave -> performance"), "{out}");
    assert!(
        out.contains(&format!(
            "Apply with: sudo micoff-host fix governor --apply --cpus 1-2 --root {} (until reboot)",
            dir.path().display()
        )),
        "{out}"
    );
    assert_eq!(gov(1), "powersave");
    let (code, out, _) = run(
        &governor(dir.path(), "apply", Some("1-2"), false),
        &tommi(),
        &mut sys,
    );
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
    let (code, out, _) = run(
        &governor(dir.path(), "apply", Some("1-2"), false),
        &tommi(),
        &mut sys,
    );
    assert_eq!(code, 0);
    assert!(out.contains("already applied"), "{out}");
    let (code, _, _) = run(
        &governor(dir.path(), "revert", None, false),
        &tommi(),
        &mut sys,
    );
    assert_eq!(code, 0);
    assert_eq!((gov(1), gov(2)), ("powersave".into(), "powersave".into()));
    assert!(!dir.path().join("run/micoff-governor").exists());
}

#[test]
fn governor_not_root_escalates_without_adding_consent() {
    let dir = temp_root("usb-headset");
    let mut sys = Fake {
        euid: 1000,
        ..Fake::default()
    };
    let (code, _, _) = run(
        &governor(dir.path(), "apply", None, true),
        &tommi(),
        &mut sys,
    );
    assert_eq!(code, 0);
    assert_eq!(sys.ran.len(), 1);
    assert_eq!(sys.ran[0].0, "sudo");
    assert!(!sys.ran[0].1.iter().any(|a| a == "--yes"), "{:?}", sys.ran);
}

#[test]
fn governor_cpu_lists_are_checked_against_the_cpus_present() {
    // skylake-old-kernel has cpu0..cpu3.
    let dir = temp_root("skylake-old-kernel");
    let mut sys = Fake::default();
    for (list, says) in [
        (
            "0-4294967295",
            "cpu4 in `0-4294967295` does not exist; this machine has cpu0 to cpu3",
        ),
        ("5-2", "`5-2` runs backwards (write 2-5)"),
        ("2-9", "cpu4 in `2-9` does not exist"),
        ("7", "cpu7 in `7` does not exist"),
        (",", "`,` names no CPU"),
    ] {
        for m in ["dry", "apply"] {
            let (code, out, err) = run(
                &governor(dir.path(), m, Some(list), false),
                &tommi(),
                &mut sys,
            );
            assert_eq!(code, 2, "{list} {m}: {out}{err}");
            assert!(
                err.contains(&format!("fix governor: bad --cpus list: {says}")),
                "{list}: {err}"
            );
            assert_eq!(out, "", "{list}");
        }
    }
    assert!(!dir.path().join("run/micoff-governor").exists());
    assert!(sys.ran.is_empty());
}

#[test]
fn governor_revert_leaves_a_core_whose_governor_changed_since() {
    let dir = temp_root("skylake-old-kernel");
    let path = |cpu: u32| {
        dir.path().join(format!(
            "sys/devices/system/cpu/cpu{cpu}/cpufreq/scaling_governor"
        ))
    };
    let gov = |cpu: u32| fs::read_to_string(path(cpu)).unwrap().trim().to_owned();
    let mut sys = Fake::default();
    let (code, out, _) = run(
        &governor(dir.path(), "apply", Some("1-2"), false),
        &tommi(),
        &mut sys,
    );
    assert_eq!(code, 0, "{out}");
    // The user (or a power daemon) picks another governor for cpu1 afterwards.
    fs::write(path(1), "schedutil\n").unwrap();
    let (code, out, _) = run(
        &governor(dir.path(), "revert", None, false),
        &tommi(),
        &mut sys,
    );
    assert_eq!(code, 0, "{out}");
    assert_eq!((gov(1), gov(2)), ("schedutil".into(), "powersave".into()));
    assert!(
        out.contains("cpu1: left at schedutil: it was changed after micoff set performance"),
        "{out}"
    );
    assert!(out.contains("cpu2: performance -> powersave"), "{out}");
    assert!(out.contains("1 core(s) left as they are"), "{out}");
    assert!(!dir.path().join("run/micoff-governor").exists());
}

/// Boots `root` into Debian 11's 5.10.0-26 (5.10.197), which has the udelay fix.
fn upgrade_kernel(root: &Path) {
    fs::write(root.join("proc/sys/kernel/osrelease"), "5.10.0-26-amd64\n").unwrap();
    fs::write(
        root.join("proc/version"),
        "Linux version 5.10.0-26-amd64 (debian-kernel@lists.debian.org) (gcc-10 (Debian 10.2.1-6) 10.2.1 20210110, GNU ld (GNU Binutils for Debian) 2.35.2) #1 SMP Debian 5.10.197-1 (2023-09-29)\n",
    )
    .unwrap();
}

#[test]
fn after_a_kernel_upgrade_the_doctor_recommends_reverting_fix_hda_not_reloading() {
    use micoff_doctor::commands::{RELOAD_HDA, REVERT_HDA};
    let dir = temp_root("skylake-old-kernel");
    let mut sys = Fake::default();
    // Written on the old kernel; a stream was open, so not reloaded.
    let (code, out, _) = run(&hda_reload(dir.path()), &tommi(), &mut sys);
    assert_eq!(code, 0, "{out}");
    assert!(dir.path().join(CONF).exists());
    upgrade_kernel(dir.path());
    let r = report::build(
        &Root::new(dir.path()),
        &tommi(),
        Err(NoAudio::NotQueried("test")),
    );
    let pf = r.finding("hda_position_fix").unwrap();
    assert_eq!(pf.status, Status::WorthChanging, "{}", pf.current);
    assert_eq!(pf.fix.as_deref(), Some(REVERT_HDA), "{}", pf.current);
    assert!(
        pf.hint
            .as_deref()
            .unwrap()
            .contains("no longer has the Skylake+ recording busy-wait"),
        "{:?}",
        pf.hint
    );
    assert_eq!(r.finding("hda_udelay").unwrap().status, Status::Ok);
    assert!(
        r.findings
            .iter()
            .all(|f| f.fix.as_deref() != Some(RELOAD_HDA)),
        "{:#?}",
        r.findings
    );
    // The same once the stale value is live (the module loaded it at boot).
    fs::write(dir.path().join(LIVE), "1,-1,-1,-1,-1,-1,-1,-1\n").unwrap();
    let r = report::build(
        &Root::new(dir.path()),
        &tommi(),
        Err(NoAudio::NotQueried("test")),
    );
    let pf = r.finding("hda_position_fix").unwrap();
    assert_eq!(pf.fix.as_deref(), Some(REVERT_HDA), "{}", pf.current);
    // The recommended command does what it says.
    let (code, out, _) = run(&hda(dir.path(), "revert", false, false), &tommi(), &mut sys);
    assert_eq!(code, 0, "{out}");
    assert!(!dir.path().join(CONF).exists());
    assert_eq!(status_of(dir.path(), "hda_position_fix"), Status::Ok);
}

#[test]
fn a_foreign_position_fix_on_a_fixed_kernel_is_not_ours_to_revert() {
    use micoff_doctor::commands::REVERT_HDA;
    let dir = temp_root("skylake-old-kernel");
    fs::write(
        dir.path().join("etc/modprobe.d/micoff-hda.conf"),
        "options snd_hda_intel position_fix=1\n",
    )
    .unwrap();
    upgrade_kernel(dir.path());
    let r = report::build(
        &Root::new(dir.path()),
        &tommi(),
        Err(NoAudio::NotQueried("test")),
    );
    let pf = r.finding("hda_position_fix").unwrap();
    assert_ne!(pf.fix.as_deref(), Some(REVERT_HDA), "{}", pf.current);
}

/// A line the user added to the client.conf micoff wrote (here a
/// `default-server`) survives `--revert`: only micoff's lines go.
#[test]
fn client_shm_revert_keeps_a_line_the_user_added() {
    let dir = temp_root("skylake-fixed-kernel");
    let user_conf = dir.path().join("home/tommi/.config/pulse/client.conf");
    let theirs = "autospawn = no\nenable-shm = no\n";
    fs::write(&user_conf, theirs).unwrap();
    let mut sys = Fake::default();
    let (code, out, _) = run(&shm(dir.path(), "apply"), &tommi(), &mut sys);
    assert_eq!(code, 0, "{out}");
    let mut text = fs::read_to_string(&user_conf).unwrap();
    text.push_str("default-server = unix:/run/user/1000/pulse/native\n");
    fs::write(&user_conf, &text).unwrap();
    let (code, out, _) = run(&shm(dir.path(), "revert"), &tommi(), &mut sys);
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        fs::read_to_string(&user_conf).unwrap(),
        format!("{theirs}default-server = unix:/run/user/1000/pulse/native\n")
    );
    assert!(out.contains("changed since micoff wrote it"), "{out}");
    // The file micoff replaced is not thrown away either.
    let backup = dir
        .path()
        .join("home/tommi/.config/pulse/client.conf.micoff-backup");
    assert_eq!(fs::read_to_string(backup).unwrap(), theirs);
}

/// A client.conf that is a symlink (dotfiles) stays a link pointing where it
/// pointed, through apply and revert, and revert puts back exactly the content it had.
#[test]
fn client_shm_keeps_a_symlinked_conf_a_link() {
    use std::os::unix::fs::PermissionsExt;
    let dir = temp_root("skylake-fixed-kernel");
    let pulse = dir.path().join("home/tommi/.config/pulse");
    let user_conf = pulse.join("client.conf");
    let dotfiles = dir.path().join("home/tommi/dotfiles");
    fs::create_dir_all(&dotfiles).unwrap();
    let real = dotfiles.join("client.conf");
    let theirs = "autospawn = no\nenable-shm = no\n";
    fs::write(&real, theirs).unwrap();
    fs::set_permissions(&real, fs::Permissions::from_mode(0o600)).unwrap();
    let _ = fs::remove_file(&user_conf);
    std::os::unix::fs::symlink("../../dotfiles/client.conf", &user_conf).unwrap();
    let mut sys = Fake::default();
    let (code, out, _) = run(&shm(dir.path(), "apply"), &tommi(), &mut sys);
    assert_eq!(code, 0, "{out}");
    assert!(fs::symlink_metadata(&user_conf)
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(fs::read_to_string(&real)
        .unwrap()
        .contains("\nenable-shm = yes\n"));
    let (code, out, _) = run(&shm(dir.path(), "revert"), &tommi(), &mut sys);
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        fs::read_link(&user_conf).unwrap(),
        Path::new("../../dotfiles/client.conf")
    );
    assert_eq!(fs::read_to_string(&real).unwrap(), theirs);
    assert_eq!(
        fs::metadata(&real).unwrap().permissions().mode() & 0o777,
        0o600
    );
    assert!(!pulse.join("client.conf.micoff-backup").exists());
}

/// `fix hda --revert` refuses a file of ours that was changed since (all of it
/// is micoff's, so whatever was changed is someone's decision): nothing is removed.
#[test]
fn hda_revert_refuses_a_file_changed_since() {
    let dir = temp_root("skylake-old-kernel");
    close_streams(dir.path());
    let path = dir.path().join(CONF);
    let mut sys = Fake::default();
    let (code, out, _) = run(&hda(dir.path(), "apply", false, false), &tommi(), &mut sys);
    assert_eq!(code, 0, "{out}");
    let mut text = fs::read_to_string(&path).unwrap();
    text.push_str("options snd_hda_intel power_save=0\n");
    fs::write(&path, &text).unwrap();
    let (code, out, err) = run(&hda(dir.path(), "revert", false, false), &tommi(), &mut sys);
    assert_eq!(code, 1, "{out}");
    assert!(err.contains("changed since micoff wrote it"), "{err}");
    assert_eq!(fs::read_to_string(&path).unwrap(), text);
}

/// A tree built fresh for each command run on it.
type Machine = (&'static str, fn() -> tempfile::TempDir, UserEnv);

/// micoff's own file for `fix hda`, as the fixer wrote it on `root` (stream open: not reloaded).
fn with_fix_hda_applied(root: &Path) {
    let (code, out, err) = run(
        &hda(root, "apply", false, false),
        &tommi(),
        &mut Fake::default(),
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(root.join(CONF).exists());
}

/// The machines the offered-fix check runs on: the fixtures and the corners where the doctor's
/// view and the fixer's preconditions could part.
fn machines() -> Vec<Machine> {
    vec![
        (
            "skylake-old-kernel",
            || temp_root("skylake-old-kernel"),
            tommi(),
        ),
        (
            "skylake-fixed-kernel",
            || temp_root("skylake-fixed-kernel"),
            tommi(),
        ),
        ("usb-headset", || temp_root("usb-headset"), tommi()),
        (
            "ci-no-soundcard",
            || temp_root("ci-no-soundcard"),
            root_user(),
        ),
        // A file applied after micoff's keeps the udelay: `fix hda` cannot win against it.
        (
            "overridden by a later file",
            || {
                let dir = temp_root("skylake-old-kernel");
                with_fix_hda_applied(dir.path());
                fs::write(
                    dir.path().join("etc/modprobe.d/zz-sound.conf"),
                    "options snd_hda_intel position_fix=5\n",
                )
                .unwrap();
                dir
            },
            tommi(),
        ),
        // micoff's file on a kernel that no longer needs it: revert it.
        (
            "kernel upgraded",
            || {
                let dir = temp_root("skylake-old-kernel");
                with_fix_hda_applied(dir.path());
                upgrade_kernel(dir.path());
                dir
            },
            tommi(),
        ),
        // The same file edited since: revert leaves it alone.
        (
            "edited, kernel upgraded",
            || {
                let dir = temp_root("skylake-old-kernel");
                with_fix_hda_applied(dir.path());
                let path = dir.path().join(CONF);
                let text = fs::read_to_string(&path).unwrap();
                fs::write(&path, format!("{text}options snd_hda_intel power_save=0\n")).unwrap();
                upgrade_kernel(dir.path());
                dir
            },
            tommi(),
        ),
        // micoff's file edited to a value that keeps the udelay, behind an earlier good one.
        (
            "edited to keep the udelay",
            || {
                let dir = temp_root("skylake-old-kernel");
                with_fix_hda_applied(dir.path());
                let path = dir.path().join(CONF);
                let text = fs::read_to_string(&path).unwrap();
                fs::write(&path, text.replace("position_fix=1", "position_fix=5")).unwrap();
                fs::write(
                    dir.path().join("etc/modprobe.d/aa-sound.conf"),
                    "options snd_hda_intel position_fix=1\n",
                )
                .unwrap();
                dir
            },
            tommi(),
        ),
        // A cpufreq driver that does not offer `performance` on some cores, or on any.
        (
            "no performance governor on cpu0-3",
            || no_performance_on(4),
            tommi(),
        ),
        (
            "no performance governor at all",
            || no_performance_on(8),
            tommi(),
        ),
    ]
}

/// usb-headset (eight cores on powersave) with a driver that offers no `performance` on the first
/// `n` cores.
fn no_performance_on(n: u32) -> tempfile::TempDir {
    let dir = temp_root("usb-headset");
    for cpu in 0..n {
        fs::write(
            dir.path().join(format!(
                "sys/devices/system/cpu/cpu{cpu}/cpufreq/scaling_available_governors"
            )),
            "powersave\n",
        )
        .unwrap();
    }
    dir
}

/// Every micoff fix the doctor offers (`fix:` lines) is one its fixer carries out on the same
/// machine: run as offered (as root, where sudo would put it), it exits 0, neither refuses nor
/// finds nothing to do, and sets nothing the machine does not take.
#[test]
fn every_fix_the_doctor_offers_is_one_its_fixer_carries_out() {
    use micoff_doctor::commands::{FIX_CLIENT_SHM, FIX_GOVERNOR, FIX_HDA, REVERT_HDA};
    let mut offered = BTreeSet::new();
    for (label, build, env) in machines() {
        let dir = build();
        let r = report::build(
            &Root::new(dir.path()),
            &env,
            Err(NoAudio::NotQueried("test")),
        );
        for f in &r.findings {
            let Some(cmd) = f.fix.as_deref() else {
                continue;
            };
            let fresh = build();
            let root = fresh.path();
            let args = match cmd {
                FIX_HDA => hda(root, "apply", false, false),
                REVERT_HDA => hda(root, "revert", false, false),
                FIX_GOVERNOR => governor(root, "apply", None, false),
                FIX_CLIENT_SHM => shm(root, "apply"),
                _ => continue, // not micoff's (a module reload, a kernel setting)
            };
            offered.insert(cmd.to_owned());
            let (code, out, err) = run(&args, &env, &mut Fake::default());
            let said = format!("{label}: {} offers `{cmd}`:\n{out}{err}", f.id);
            assert_eq!(code, 0, "{said}");
            for refusal in ["nothing to do", "already applied", "But "] {
                assert!(!out.contains(refusal), "{said}");
            }
            assert!(!err.contains("micoff-host fix"), "{said}");
            if cmd == FIX_GOVERNOR {
                // Only cores whose driver offers `performance` were changed to it.
                for cpu in 0..8 {
                    let at = |root: &Path, file: &str| {
                        fs::read_to_string(
                            root.join(format!("sys/devices/system/cpu/cpu{cpu}/cpufreq/{file}")),
                        )
                    };
                    let before = at(dir.path(), "scaling_governor").unwrap_or_default();
                    let now = at(root, "scaling_governor").unwrap_or_default();
                    let offers = at(root, "scaling_available_governors")
                        .map_or(true, |l| l.split_whitespace().any(|g| g == "performance"));
                    assert!(before == now || offers, "{said}: cpu{cpu}");
                }
            }
        }
    }
    // Each of micoff's fixes is offered somewhere above.
    assert_eq!(offered.len(), 4, "{offered:?}");
}

/// `fix governor --root DIR` as root, where DIR holds a `scaling_governor` that is a link another
/// user planted (to a file of root's): refused, nothing written through it. Before, a plain
/// `std::fs::write` followed any link.
#[test]
#[ignore = "needs root to chown files to another user: cargo test -- --include-ignored as root (npm test does)"]
fn governor_never_writes_through_a_link_someone_else_planted() {
    let dir = temp_root("usb-headset");
    let victim_dir = tempfile::tempdir().unwrap();
    let victim = victim_dir.path().join("shadow");
    fs::write(&victim, "root:secret\n").unwrap();
    let gov = dir
        .path()
        .join("sys/devices/system/cpu/cpu0/cpufreq/scaling_governor");
    fs::remove_file(&gov).unwrap();
    std::os::unix::fs::symlink(&victim, &gov).unwrap();
    std::os::unix::fs::lchown(&gov, Some(1000), None).unwrap();
    let (code, out, err) = run(
        &governor(dir.path(), "apply", Some("0"), false),
        &tommi(),
        &mut Fake::default(),
    );
    assert_eq!(code, 1, "{out}{err}");
    assert!(err.contains("is a symlink micoff does not follow"), "{err}");
    assert_eq!(fs::read_to_string(&victim).unwrap(), "root:secret\n");
}

/// The parts micoff's record at `record` holds for the fixers.
fn fixes_recorded(record: &Path) -> Vec<String> {
    micoff_files::record::journal::load(record)
        .unwrap()
        .map(|r| {
            r.parts(micoff_doctor::fix::recorded::OWNER)
                .filter_map(|e| match e {
                    micoff_files::record::Entry::Part { key, .. } => Some(key.clone()),
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn a_fix_applied_is_in_micoffs_record_until_it_is_reverted() {
    let dir = temp_root("skylake-old-kernel");
    close_streams(dir.path());
    let system = dir.path().join("var/lib/micoff/record.json");
    let user = dir
        .path()
        .join("home/tommi/.local/state/micoff/record.json");
    let mut sys = Fake::default();
    let (code, out, _) = run(&hda(dir.path(), "apply", false, false), &tommi(), &mut sys);
    assert!(code == 0 || code == 3, "{out}");
    let (code, out, _) = run(&shm(dir.path(), "apply"), &tommi(), &mut sys);
    assert_eq!(code, 0, "{out}");
    let (code, out, _) = run(
        &governor(dir.path(), "apply", Some("1"), false),
        &tommi(),
        &mut sys,
    );
    assert_eq!(code, 0, "{out}");
    assert_eq!(fixes_recorded(&system), vec!["hda", "governor"]);
    assert_eq!(fixes_recorded(&user), vec!["client-shm"]);
    for args in [
        hda(dir.path(), "revert", false, false),
        shm(dir.path(), "revert"),
        governor(dir.path(), "revert", None, false),
    ] {
        let (code, out, _) = run(&args, &tommi(), &mut sys);
        assert_eq!(code, 0, "{out}");
    }
    // Nothing left: the records went, and the folders made for them.
    assert!(!system.exists() && !user.exists());
    assert!(!dir.path().join("var/lib/micoff").exists());
}
