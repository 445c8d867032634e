#![allow(clippy::unwrap_used)]
//! Every finding in every state it has, over the fixture trees (and temporary copies of them
//! changed in one place).

mod common;

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

use common::*;
use micoff_doctor::commands::{FIX_CLIENT_SHM, FIX_HDA, PIPEWIRE_QUANTUM, RELOAD_HDA};
use micoff_doctor::facts::UserEnv;
use micoff_doctor::report::{self, Report};
use micoff_doctor::{AudioServerFacts, NoAudio, Root, Status};

use Status::{NotApplicable as NA, Ok as OK, WorthChanging as WC};

fn doctor(root: &Path, env: &UserEnv, audio: Option<&AudioServerFacts>) -> Report {
    report::build(
        &Root::new(root),
        env,
        audio.ok_or(NoAudio::NotQueried("test")),
    )
}

fn fixture_report(name: &str, audio: Option<&AudioServerFacts>) -> Report {
    let env = if name == "ci-no-soundcard" {
        root_user()
    } else {
        tommi()
    };
    doctor(&fixture(name), &env, audio)
}

/// Every finding that is worth changing says how (a runnable command, a hint, or both), and
/// every command is one a shell runs as it is.
fn check_fixes(report: &Report, label: &str) {
    for f in &report.findings {
        if f.status == WC {
            assert!(
                f.fix.is_some() || f.hint.is_some(),
                "{label}: {} worth changing without a fix or hint",
                f.id
            );
        }
        if let Some(cmd) = &f.fix {
            assert_runnable(cmd, &format!("{label}: {}", f.id));
        }
        assert!(!f.why.is_empty(), "{label}: {} has no why", f.id);
    }
}

fn check(report: &Report, expected: &[(&str, Status)], label: &str) {
    for (id, want) in expected {
        let f = report
            .finding(id)
            .unwrap_or_else(|| panic!("{label}: no finding {id}"));
        assert_eq!(
            f.status, *want,
            "{label}: {id}: current {:?}, details {:?}",
            f.current, f.details
        );
    }
    check_fixes(report, label);
}

fn current(r: &Report, id: &str) -> String {
    r.finding(id).unwrap().current.clone()
}

#[test]
fn skylake_old_kernel() {
    let r = fixture_report("skylake-old-kernel", Some(&pulse_low_latency()));
    check(
        &r,
        &[
            ("audio_server", OK),
            ("default_source_latency", WC),
            ("default_sink_latency", OK),
            ("srbchannel", WC),
            ("client_shm", WC),
            ("sound_cards", OK),
            ("pcm_periods", OK),
            ("hda_controller", OK),
            ("hda_udelay", WC),
            ("hda_position_fix", OK),
            ("hda_power_save", OK),
            ("cpu_model", OK),
            ("cpu_governor", WC),
            ("cpu_smt", WC),
            ("kernel_preempt", WC),
            ("kernel_threadirqs", WC),
            ("kernel_isolation", OK),
            ("kernel_config", OK),
            ("irq_sharing", OK),
            ("rt_limits", WC),
            ("cpu_dma_latency", OK),
        ],
        "skylake-old-kernel",
    );
    let udelay = r.finding("hda_udelay").unwrap();
    assert!(udelay.current.contains("5.10.70"), "{}", udelay.current);
    assert!(
        udelay
            .current
            .contains("card0 (snd_hda_intel #0) position_fix=-1"),
        "{}",
        udelay.current
    );
    assert_eq!(udelay.fix.as_deref(), Some(FIX_HDA));
    assert!(udelay.hint.as_deref().unwrap().contains("5.10.80"));
    // The why names the same stable releases as the version gate.
    for v in [
        "5.15.3", "5.14.19", "5.10.80", "5.4.160", "4.19.218", "4.14.256",
    ] {
        assert!(udelay.why.contains(v), "{v} missing: {}", udelay.why);
    }
    let ctl = r.finding("hda_controller").unwrap();
    assert!(ctl.details[0].contains("8086:9d71"), "{:?}", ctl.details);
    assert!(ctl.details[0].contains("Kaby Lake-LP"));
    assert!(ctl.details[0].contains("0000:00:1f.3"));
    let pcm = r.finding("pcm_periods").unwrap();
    assert!(
        pcm.details[0].contains("period 1024 frames (21 ms)"),
        "{:?}",
        pcm.details
    );
    assert_eq!(r.kernel_version.as_deref(), Some("5.10.70"));
    let irq = current(&r, "irq_sharing");
    assert!(irq.contains("card0 PCH: IRQ 134"), "{irq}");
    assert!(irq.contains("cpus 2"), "{irq}");
    // Client shm is off in /etc/pulse/client.conf: the fixer can turn it back on.
    let shm = r.finding("client_shm").unwrap();
    assert_eq!(shm.fix.as_deref(), Some(FIX_CLIENT_SHM));
    let rt = r.finding("rt_limits").unwrap();
    assert!(rt
        .fix
        .as_deref()
        .unwrap()
        .ends_with("usermod -aG audio tommi"));
    assert!(rt.hint.as_deref().unwrap().contains("log in again"));
    // Prose-only fixes have a hint and no command.
    let k = r.finding("kernel_threadirqs").unwrap();
    assert_eq!(k.fix, None);
    assert!(k.hint.as_deref().unwrap().contains("threadirqs"));
}

#[test]
fn skylake_fixed_kernel() {
    let r = fixture_report("skylake-fixed-kernel", Some(&pulse_low_latency()));
    check(
        &r,
        &[
            ("srbchannel", OK),
            ("client_shm", OK),
            ("sound_cards", OK),
            ("pcm_periods", NA),
            ("hda_controller", OK),
            ("hda_udelay", OK),
            ("hda_position_fix", OK),
            ("hda_power_save", OK),
            ("cpu_governor", OK),
            ("cpu_smt", OK),
            ("kernel_preempt", OK),
            ("kernel_threadirqs", OK),
            ("kernel_isolation", OK),
            ("kernel_config", OK),
            ("irq_sharing", OK),
            ("rt_limits", OK),
            ("cpu_dma_latency", OK),
        ],
        "skylake-fixed-kernel",
    );
    assert!(current(&r, "hda_udelay").contains("6.1.76"));
    // Read from the gzip'ed /proc/config.gz.
    assert!(current(&r, "kernel_config").contains("/proc/config.gz"));
    assert!(current(&r, "rt_limits").contains("rtprio 95"));
}

#[test]
fn usb_headset() {
    let r = fixture_report("usb-headset", Some(&pulse_tcp()));
    check(
        &r,
        &[
            ("default_source_latency", OK),
            ("default_sink_latency", WC),
            ("srbchannel", WC),
            ("client_shm", OK),
            ("sound_cards", OK),
            ("pcm_periods", WC),
            ("hda_udelay", OK),
            ("hda_position_fix", OK),
            ("cpu_model", OK),
            ("cpu_governor", WC),
            ("cpu_smt", WC),
            ("kernel_preempt", WC),
            ("kernel_threadirqs", WC),
            ("kernel_isolation", OK),
            ("kernel_config", NA),
            ("irq_sharing", WC),
            ("rt_limits", WC),
        ],
        "usb-headset",
    );
    // Ubuntu's upstream version comes from /proc/version_signature: 5.4.157 still has the
    // busy-wait, avoided here by position_fix=1.
    let udelay = current(&r, "hda_udelay");
    assert!(udelay.contains("5.4.157"), "{udelay}");
    assert!(udelay.contains("avoided by"), "{udelay}");
    assert!(udelay.contains("position_fix=1 (LPIB)"), "{udelay}");
    assert_eq!(
        current(&r, "kernel_isolation"),
        "isolcpus=3,7 nohz_full=3,7 irqaffinity=0-2,4-6"
    );
    // 4 cores / 8 threads, SMT on, performance only on the isolated core's two threads.
    assert!(current(&r, "cpu_model").contains("8 logical CPUs, 4 cores"));
    assert_eq!(
        current(&r, "cpu_governor"),
        "performance on cpu3,cpu7; powersave on cpu0,cpu1,cpu2,cpu4,cpu5,cpu6"
    );
    assert_eq!(current(&r, "cpu_smt"), "on");
    let cards = current(&r, "sound_cards");
    assert!(cards.contains("snd_usb_audio"), "{cards}");
    assert!(current(&r, "srbchannel").contains("tcp:"));
    // The headset's audio rides on its USB host controller's IRQ (16, shared with SMBus), not on
    // the other USB controller's (128).
    let irq = r.finding("irq_sharing").unwrap();
    assert_eq!(
        irq.current,
        "shared: card1 Headset via USB 0000:00:14.0: IRQ 16 (xhci_hcd, i801_smbus)"
    );
    assert!(irq.hint.as_deref().unwrap().contains("another controller"));
    // All lines are in the details, with their affinity.
    assert!(
        irq.details
            .iter()
            .any(|d| d.starts_with("IRQ 128 xhci_hcd cpus 0-2,4-6")),
        "{:?}",
        irq.details
    );
}

#[test]
fn usb_headset_on_an_unshared_msi_controller() {
    let dir = temp_root("usb-headset");
    let p = dir.path();
    // The headset moved to the ASMedia controller (MSI 128, alone on its line).
    fs::remove_file(p.join("sys/class/sound/card1/device")).unwrap();
    fs::create_dir_all(p.join("sys/devices/pci0000:00/0000:00:1c.0/0000:3c:00.0/usb3/3-1/3-1:1.0"))
        .unwrap();
    std::os::unix::fs::symlink(
        "../../../devices/pci0000:00/0000:00:1c.0/0000:3c:00.0/usb3/3-1/3-1:1.0",
        p.join("sys/class/sound/card1/device"),
    )
    .unwrap();
    let r = doctor(p, &tommi(), None);
    check(&r, &[("irq_sharing", OK)], "headset on MSI");
    let irq = current(&r, "irq_sharing");
    assert!(
        irq.contains("card1 Headset via USB 0000:3c:00.0: IRQ 128 xhci_hcd cpus 0-2,4-6"),
        "{irq}"
    );
    assert!(!irq.contains("IRQ 16"), "{irq}");
    // No sysfs link at all: the slot in the long name still finds the controller.
    fs::remove_file(p.join("sys/class/sound/card1/device")).unwrap();
    fs::create_dir_all(p.join("sys/bus/pci/devices")).unwrap();
    std::os::unix::fs::symlink(
        "../../../devices/pci0000:00/0000:00:14.0",
        p.join("sys/bus/pci/devices/0000:00:14.0"),
    )
    .unwrap();
    let r = doctor(p, &tommi(), None);
    assert!(current(&r, "irq_sharing").contains("via USB 0000:00:14.0: IRQ 16"));
}

#[test]
fn ci_no_soundcard() {
    let r = fixture_report("ci-no-soundcard", None);
    check(
        &r,
        &[
            ("audio_server", NA),
            ("default_source_latency", NA),
            ("default_sink_latency", NA),
            ("srbchannel", NA),
            ("client_shm", OK),
            ("sound_cards", NA),
            ("pcm_periods", NA),
            ("hda_controller", NA),
            ("hda_udelay", NA),
            ("hda_position_fix", NA),
            ("hda_power_save", NA),
            ("cpu_model", OK),
            ("cpu_governor", NA),
            ("cpu_smt", OK),
            ("kernel_preempt", NA),
            ("kernel_threadirqs", NA),
            ("kernel_isolation", NA),
            ("kernel_config", NA),
            ("irq_sharing", NA),
            ("rt_limits", OK),
            ("cpu_dma_latency", OK),
        ],
        "ci-no-soundcard",
    );
    assert_eq!(current(&r, "client_shm"), "on (/etc/pulse/client.conf)");
    // The same machine with a sound card: its kernel settings are judged again.
    let dir = temp_root("ci-no-soundcard");
    fs::create_dir_all(dir.path().join("proc/asound")).unwrap();
    fs::write(
        dir.path().join("proc/asound/cards"),
        " 0 [Dummy          ]: Dummy - Dummy\n                      Dummy 1\n",
    )
    .unwrap();
    let r = doctor(dir.path(), &root_user(), None);
    check(
        &r,
        &[
            ("sound_cards", OK),
            ("kernel_preempt", WC),
            ("kernel_threadirqs", WC),
            ("kernel_isolation", OK),
            ("kernel_config", OK),
        ],
        "ci-no-soundcard with a card",
    );
    // The init arguments after `--` are not kernel parameters.
    assert_eq!(current(&r, "kernel_isolation"), "none");
    assert_eq!(
        current(&r, "kernel_config"),
        "HIGH_RES_TIMERS=y NO_HZ_IDLE=y NO_HZ_FULL=n PREEMPT_RT=n HZ=250 (/proc/config.gz)"
    );
}

/// No sound card (`/proc/asound/cards` empty or missing): no kernel, interrupt or HD-audio
/// advice, each of those findings saying why it does not apply.
#[test]
fn no_kernel_advice_without_a_sound_card() {
    let no_cards = temp_root("ci-no-soundcard");
    fs::create_dir_all(no_cards.path().join("proc/asound")).unwrap();
    fs::write(
        no_cards.path().join("proc/asound/cards"),
        "--- no soundcards ---\n",
    )
    .unwrap();
    for (root, why) in [
        (fixture("ci-no-soundcard"), "/proc/asound is missing"),
        (
            no_cards.path().to_path_buf(),
            "/proc/asound/cards lists none",
        ),
    ] {
        let r = doctor(&root, &root_user(), None);
        for id in [
            "sound_cards",
            "hda_controller",
            "hda_udelay",
            "hda_position_fix",
            "hda_power_save",
            "kernel_preempt",
            "kernel_threadirqs",
            "kernel_isolation",
            "kernel_config",
            "irq_sharing",
        ] {
            let f = r.finding(id).unwrap();
            assert_eq!(f.status, NA, "{id}: {}", f.current);
            assert!(f.current.contains("no sound card"), "{id}: {}", f.current);
            assert!(f.current.contains(why), "{id}: {}", f.current);
            assert!(f.fix.is_none() && f.hint.is_none(), "{id}");
        }
    }
}

/// Asked and unreachable is a failure (the doctor exits 4 for it), not "not applicable"; not
/// asked (`--no-audio`, another root) stays not applicable.
#[test]
fn an_unreachable_audio_server_is_a_failure_not_not_applicable() {
    let root = Root::new(fixture("skylake-old-kernel"));
    let r = report::build(
        &root,
        &tommi(),
        Err(NoAudio::Unreachable("Connection refused")),
    );
    let f = r.finding("audio_server").unwrap();
    assert_eq!(f.status, Status::Failed);
    assert!(f
        .current
        .contains("no audio server reachable (Connection refused)"));
    assert!(f
        .hint
        .as_deref()
        .unwrap()
        .contains("start PulseAudio or PipeWire"));
    assert_eq!(r.summary.failed, 1);
    assert_eq!(r.failed().count(), 1);
    let mut human = Vec::new();
    r.write_human(&mut human, false).unwrap();
    let human = String::from_utf8(human).unwrap();
    assert!(
        human.contains("[FAIL] Audio server: no audio server reachable"),
        "{human}"
    );
    assert!(human.contains(", 1 failed\n"), "{human}");
    let mut json = Vec::new();
    r.write_json(&mut json).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&json).unwrap();
    assert_eq!(v["summary"]["failed"], 1);
    assert_eq!(v["findings"][0]["status"], "failed");

    let r = report::build(&root, &tommi(), Err(NoAudio::NotQueried("--no-audio")));
    assert_eq!(r.finding("audio_server").unwrap().status, NA);
    assert_eq!(r.summary.failed, 0);
}

#[test]
fn pipewire_makes_shm_findings_not_applicable() {
    let r = fixture_report("skylake-old-kernel", Some(&pipewire()));
    check(
        &r,
        &[
            ("audio_server", OK),
            ("srbchannel", NA),
            ("client_shm", NA),
            ("default_source_latency", NA),
            ("default_sink_latency", OK),
        ],
        "pipewire",
    );
    assert!(current(&r, "audio_server").contains("PipeWire 0.3.65"));
    // A short period on PipeWire: the quantum floor is the command.
    let r = fixture_report("usb-headset", Some(&pipewire()));
    assert_eq!(
        r.finding("pcm_periods").unwrap().fix.as_deref(),
        Some(PIPEWIRE_QUANTUM)
    );
}

#[test]
fn empty_root_is_all_not_applicable_or_ok() {
    let dir = tempfile::tempdir().unwrap();
    let env = UserEnv::default();
    let r = doctor(dir.path(), &env, None);
    check(
        &r,
        &[
            ("cpu_model", NA),
            ("kernel_preempt", NA),
            ("kernel_threadirqs", NA),
            ("kernel_isolation", NA),
            ("kernel_config", NA),
            ("rt_limits", NA),
            ("cpu_smt", NA),
            ("hda_udelay", NA),
            ("cpu_dma_latency", NA),
        ],
        "empty",
    );
}

fn without_high_res_timers() -> Report {
    let dir = temp_root("skylake-old-kernel");
    fs::write(
        dir.path().join("boot/config-5.10.0-9-amd64"),
        "# CONFIG_HIGH_RES_TIMERS is not set\nCONFIG_HZ=100\n",
    )
    .unwrap();
    doctor(dir.path(), &tommi(), None)
}

#[test]
fn kernel_config_without_high_res_timers() {
    check(
        &without_high_res_timers(),
        &[("kernel_config", WC)],
        "no hrtimers",
    );
}

/// skylake-old-kernel with snd_hda_intel's live position_fix for the Kaby Lake set to `v`.
fn with_live_position_fix(v: i32) -> Report {
    let dir = temp_root("skylake-old-kernel");
    fs::write(dir.path().join(LIVE), format!("{v},-1,-1,-1\n")).unwrap();
    doctor(dir.path(), &tommi(), None)
}

#[test]
fn every_position_fix_that_avoids_azx_get_pos_skl_bypasses_the_udelay() {
    // -1 (default: SKL+ on these controllers) and 5 (SKL+) go through azx_get_pos_skl().
    for (v, want) in [
        (-1, WC),
        (0, OK),
        (1, OK),
        (2, OK),
        (3, OK),
        (4, OK),
        (5, WC),
        (6, OK),
    ] {
        let r = with_live_position_fix(v);
        let f = r.finding("hda_udelay").unwrap();
        assert_eq!(f.status, want, "position_fix={v}: {}", f.current);
        if want == OK {
            assert!(
                f.current.contains(&format!("position_fix={v}")),
                "{}",
                f.current
            );
        }
    }
}

#[test]
fn position_fix_is_indexed_by_snd_hda_intels_probe_order() {
    // USB at ALSA card 0, NVIDIA HDMI (snd_hda_intel #0) at 1, Intel (snd_hda_intel #1) at 2.
    let dir = temp_root("skylake-old-kernel");
    usb_nvidia_intel(dir.path(), true);
    fs::write(dir.path().join(LIVE), "-1,1,-1,-1\n").unwrap();
    let r = doctor(dir.path(), &tommi(), None);
    check(&r, &[("hda_udelay", OK)], "nvidia+intel");
    assert!(current(&r, "hda_udelay").contains("card2 (snd_hda_intel #1) position_fix=1"));
    let pf = current(&r, "hda_position_fix");
    assert!(
        pf.contains("card1 (snd_hda_intel #0)=-1 (default), card2 (snd_hda_intel #1)=1 (LPIB)"),
        "{pf}"
    );
    // Entry 2 (the ALSA number of the Intel card) means nothing here.
    fs::write(dir.path().join(LIVE), "-1,-1,1,-1\n").unwrap();
    let r = doctor(dir.path(), &tommi(), None);
    check(&r, &[("hda_udelay", WC)], "nvidia+intel, wrong entry");
    // Without the NVIDIA card the Intel one is snd_hda_intel's #0.
    let dir = temp_root("skylake-old-kernel");
    usb_nvidia_intel(dir.path(), false);
    fs::write(dir.path().join(LIVE), "1,-1,-1,-1\n").unwrap();
    let r = doctor(dir.path(), &tommi(), None);
    check(&r, &[("hda_udelay", OK)], "usb+intel");
    assert!(current(&r, "hda_udelay").contains("card2 (snd_hda_intel #0)"));
}

fn reload_pending() -> Report {
    let dir = temp_root("skylake-old-kernel");
    fs::write(
        dir.path().join("etc/modprobe.d/zz-audio.conf"),
        "options snd_hda_intel position_fix=1\n",
    )
    .unwrap();
    doctor(dir.path(), &tommi(), None)
}

#[test]
fn a_configured_but_not_loaded_position_fix_asks_for_the_reload() {
    let r = reload_pending();
    check(
        &r,
        &[("hda_position_fix", WC), ("hda_udelay", WC)],
        "reload pending",
    );
    let u = r.finding("hda_udelay").unwrap();
    assert_eq!(u.fix.as_deref(), Some(RELOAD_HDA));
    assert!(
        u.hint.as_deref().unwrap().contains("zz-audio.conf"),
        "{:?}",
        u.hint
    );
    assert_eq!(
        r.finding("hda_position_fix").unwrap().fix.as_deref(),
        Some(RELOAD_HDA)
    );
    // The kernel command line counts too (modprobe applies it after the files).
    let dir = temp_root("skylake-old-kernel");
    let cmdline = fs::read_to_string(dir.path().join("proc/cmdline")).unwrap();
    fs::write(
        dir.path().join("proc/cmdline"),
        format!("{} snd_hda_intel.position_fix=2\n", cmdline.trim()),
    )
    .unwrap();
    let r = doctor(dir.path(), &tommi(), None);
    let u = r.finding("hda_udelay").unwrap();
    assert_eq!(u.fix.as_deref(), Some(RELOAD_HDA), "{}", u.current);
}

#[test]
fn memfd_off_is_not_shm_off() {
    // enable-memfd = no on both ends: POSIX shared memory, srbchannel still works.
    let dir = temp_root("skylake-fixed-kernel");
    fs::write(
        dir.path().join("etc/pulse/daemon.conf"),
        "enable-memfd = no\n",
    )
    .unwrap();
    fs::write(
        dir.path().join("home/tommi/.config/pulse/client.conf"),
        "enable-memfd = no\n",
    )
    .unwrap();
    let r = doctor(dir.path(), &tommi(), Some(&pulse_low_latency()));
    check(&r, &[("srbchannel", OK), ("client_shm", OK)], "memfd off");
    assert!(current(&r, "srbchannel").contains("another kind of shared memory"));
    assert!(current(&r, "client_shm").contains("memfd off"));
}

#[test]
fn shm_off_in_daemon_or_module_blocks_srbchannel() {
    let dir = temp_root("skylake-fixed-kernel");
    fs::write(
        dir.path().join("etc/pulse/daemon.conf"),
        "enable-shm = no\n",
    )
    .unwrap();
    let r = doctor(dir.path(), &tommi(), Some(&pulse_low_latency()));
    check(
        &r,
        &[("srbchannel", WC), ("client_shm", OK)],
        "daemon shm off",
    );
    let f = r.finding("srbchannel").unwrap();
    assert!(
        f.current.contains("shared memory is off for the server"),
        "{}",
        f.current
    );
    assert!(f
        .hint
        .as_deref()
        .unwrap()
        .contains("/etc/pulse/daemon.conf"));
    // An edit of the daemon's file: no command to copy.
    assert_eq!(f.fix, None);
    // The module argument, in any spelling PulseAudio accepts (parsed in audio.rs).
    let mut off = pulse_low_latency();
    off.srbchannel_module_arg = Some(false);
    let r = fixture_report("skylake-fixed-kernel", Some(&off));
    check(&r, &[("srbchannel", WC)], "module arg off");
}

#[test]
fn client_shm_off_where_the_fixer_cannot_reach() {
    // In the .d directory of the user's own client.conf: micoff does not edit those.
    let dir = temp_root("skylake-fixed-kernel");
    let dot_d = dir.path().join("home/tommi/.config/pulse/client.conf.d");
    fs::create_dir_all(&dot_d).unwrap();
    fs::write(dot_d.join("50-noshm.conf"), "enable-shm = no\n").unwrap();
    let r = doctor(dir.path(), &tommi(), Some(&pulse_low_latency()));
    check(&r, &[("client_shm", WC), ("srbchannel", WC)], "user .d");
    let f = r.finding("client_shm").unwrap();
    assert_eq!(f.fix, None);
    assert!(
        f.hint.as_deref().unwrap().contains("50-noshm.conf"),
        "{:?}",
        f.hint
    );
    // $PULSE_CLIENTCONFIG naming a file with shm off.
    let dir = temp_root("skylake-fixed-kernel");
    fs::write(dir.path().join("home/tommi/ab.conf"), "enable-shm = no\n").unwrap();
    let env = UserEnv {
        pulse_clientconfig: Some("/home/tommi/ab.conf".into()),
        ..tommi()
    };
    let r = doctor(dir.path(), &env, Some(&pulse_low_latency()));
    let f = r.finding("client_shm").unwrap();
    assert_eq!(f.status, WC);
    assert_eq!(f.fix, None);
    assert!(f.hint.as_deref().unwrap().contains("$PULSE_CLIENTCONFIG"));
}

/// All the reports the tests above build, for the coverage and command checks.
fn all_reports() -> Vec<(String, Report)> {
    vec![
        (
            "skylake-old-kernel".into(),
            fixture_report("skylake-old-kernel", Some(&pulse_low_latency())),
        ),
        (
            "skylake-fixed-kernel".into(),
            fixture_report("skylake-fixed-kernel", Some(&pulse_low_latency())),
        ),
        (
            "usb-headset".into(),
            fixture_report("usb-headset", Some(&pulse_tcp())),
        ),
        (
            "ci-no-soundcard".into(),
            fixture_report("ci-no-soundcard", None),
        ),
        (
            "pipewire".into(),
            fixture_report("skylake-old-kernel", Some(&pipewire())),
        ),
        (
            "usb-headset on pipewire".into(),
            fixture_report("usb-headset", Some(&pipewire())),
        ),
        (
            "empty".into(),
            doctor(
                tempfile::tempdir().unwrap().path(),
                &UserEnv::default(),
                None,
            ),
        ),
        ("no hrtimers".into(), without_high_res_timers()),
        ("reload pending".into(), reload_pending()),
        ("position_fix=1".into(), with_live_position_fix(1)),
    ]
}

#[test]
fn every_finding_has_each_of_its_states_somewhere() {
    // The states each finding can take; informational findings have no worth_changing.
    let informational = [
        "audio_server",
        "sound_cards",
        "hda_controller",
        "hda_power_save",
        "cpu_model",
        "kernel_isolation",
        "cpu_dma_latency",
    ];
    let reports = all_reports();
    let mut seen: BTreeSet<(String, String)> = BTreeSet::new();
    for (label, r) in &reports {
        check_fixes(r, label);
        for f in &r.findings {
            seen.insert((f.id.to_owned(), format!("{:?}", f.status)));
        }
    }
    let ids: BTreeSet<&str> = reports[0].1.findings.iter().map(|f| f.id).collect();
    assert_eq!(ids.len(), 21);
    for id in ids {
        for st in ["Ok", "WorthChanging", "NotApplicable"] {
            if st == "WorthChanging" && informational.contains(&id) {
                continue;
            }
            assert!(
                seen.contains(&(id.to_owned(), st.to_owned())),
                "{id} never {st}"
            );
        }
    }
}

/// What the doctor says is for a desktop user: no internal jargon in a title, a why or a hint
/// (the project's own words, kernel function names, terms left unexplained); a technical name in
/// a title only in parentheses, after plain words.
#[test]
fn findings_speak_to_a_desktop_user() {
    let internal = [
        "the seeds",
        "azx_get_pos_skl",
        "delay_tsc",
        "SKL+",
        "ring buffer",
        "POSIX",
        "runnable",
        "preemption point",
        "sub-ms",
        "execution units",
        "source-output",
        "tsched",
        "libpulse client",
        "quantum floor",
        "legacy IRQ",
    ];
    let technical = [
        "srbchannel",
        "SMT",
        "PCM",
        "udelay",
        "IRQ",
        "RTPRIO",
        "MEMLOCK",
        "_",
    ];
    for (label, r) in all_reports() {
        for f in &r.findings {
            let texts = [Some(f.title), Some(f.why.as_str()), f.hint.as_deref()];
            for text in texts.into_iter().flatten() {
                for word in internal {
                    assert!(
                        !text.contains(word),
                        "{label}: {}: {word:?} in {text:?}",
                        f.id
                    );
                }
            }
            // The title without its parentheses.
            let mut plain = String::new();
            let mut depth = 0;
            for c in f.title.chars() {
                match c {
                    '(' => depth += 1,
                    ')' => depth -= 1,
                    _ if depth == 0 => plain.push(c),
                    _ => {}
                }
            }
            for word in technical {
                assert!(!plain.contains(word), "{label}: title {:?}", f.title);
            }
        }
    }
}

#[test]
fn json_shape_is_stable() {
    let r = fixture_report("skylake-old-kernel", Some(&pulse_low_latency()));
    let mut buf = Vec::new();
    r.write_json(&mut buf).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&buf).unwrap();
    assert_eq!(v["schema_version"], 1);
    assert_eq!(v["kernel_release"], "5.10.0-9-amd64");
    assert_eq!(v["kernel_version"], "5.10.70");
    assert!(v["summary"]["worth_changing"].as_u64().unwrap() > 0);
    let findings = v["findings"].as_array().unwrap();
    let f = findings.iter().find(|f| f["id"] == "hda_udelay").unwrap();
    assert_eq!(f["status"], "worth_changing");
    assert_eq!(f["category"], "intel_hda");
    assert_eq!(f["fix"], FIX_HDA);
    assert!(f["hint"].as_str().unwrap().contains("upgrade the kernel"));
    for f in findings {
        for key in [
            "id", "category", "title", "current", "why", "fix", "hint", "details",
        ] {
            assert!(f.get(key).is_some(), "{}: missing {key}", f["id"]);
        }
        if f["status"] == "not_applicable" {
            assert!(f["fix"].is_null(), "{}", f["id"]);
        }
    }
}

#[test]
fn human_output_lists_fixes_and_hints() {
    let r = fixture_report("skylake-old-kernel", Some(&pulse_low_latency()));
    let mut buf = Vec::new();
    r.write_human(&mut buf, false).unwrap();
    let s = String::from_utf8(buf).unwrap();
    assert!(
        s.contains("[FIX ] Recording busy-wait in the kernel (Intel Skylake or later)"),
        "{s}"
    );
    assert!(
        s.contains("\n         fix: sudo micoff-host fix hda --apply\n"),
        "{s}"
    );
    assert!(s.contains("\n         hint: writes position_fix=1"), "{s}");
    // A finding with a hint only shows no `fix:` line.
    let threadirqs = s
        .split("\n  [")
        .find(|b| b.contains("Interrupt handlers as threads"))
        .unwrap();
    assert!(!threadirqs.contains("fix:"), "{threadirqs}");
    assert!(threadirqs.contains("hint: add threadirqs"), "{threadirqs}");
    assert!(s.contains("worth changing"), "{s}");
}

/// The real machine: never crashes; on this CI VM (no sound card) the HDA findings are not
/// applicable. Reads only.
#[test]
fn doctor_on_the_real_machine() {
    let args = micoff_doctor::DoctorArgs {
        json: true,
        root: "/".into(),
        no_audio: false,
        verbose: false,
    };
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = micoff_doctor::run_doctor(&args, None, &mut out, &mut err);
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let findings = v["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 21);
    let status = |id: &str| {
        findings
            .iter()
            .find(|f| f["id"] == id)
            .map(|f| f["status"].as_str().unwrap().to_owned())
            .unwrap()
    };
    // 0 with an audio server, 4 (and its error line) without one.
    let err = String::from_utf8(err).unwrap();
    if status("audio_server") == "failed" {
        assert_eq!(code, 4, "{err}");
        assert!(
            err.starts_with("micoff-host doctor: Audio server: "),
            "{err}"
        );
    } else {
        assert_eq!(code, 0, "{err}");
        assert_eq!(err, "");
    }
    assert!(!v["kernel_release"].as_str().unwrap().is_empty());
    assert_eq!(status("cpu_model"), "ok");
    for f in findings {
        if let Some(cmd) = f["fix"].as_str() {
            assert_runnable(cmd, f["id"].as_str().unwrap());
        }
    }
    if !Path::new("/proc/asound/cards").exists()
        || fs::read_to_string("/proc/asound/cards")
            .unwrap_or_default()
            .contains("no soundcards")
    {
        for id in [
            "sound_cards",
            "hda_controller",
            "hda_udelay",
            "hda_position_fix",
        ] {
            assert_eq!(status(id), "not_applicable", "{id}");
        }
    }
    // Human form too.
    let args = micoff_doctor::DoctorArgs {
        json: false,
        no_audio: true,
        ..args
    };
    let mut out = Vec::new();
    assert_eq!(
        micoff_doctor::run_doctor(&args, None, &mut out, &mut Vec::new()),
        0
    );
    let s = String::from_utf8(out).unwrap();
    assert!(s.starts_with("micoff doctor: kernel "), "{s}");
}
