//! `micoff-host uninstall`: one command undoes everything micoff wrote, from micoff's record, and
//! the machine's folders are back as they were; a file edited since is the user's and is left and
//! named (exit 3); what an older micoff wrote without a record is found by each command's own
//! rule; `--system` takes the policy entries out in two runs (the first blocks micoff); a dry run
//! changes nothing.

#![allow(clippy::unwrap_used)] // tests may unwrap (house style)

mod support;

use support::install;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use micoff_doctor::fix::System;
use micoff_install::uninstall::UninstallArgs;
use micoff_install::{Browser, InstallArgs, InstallEnv};
use micoff_native::FIREFOX_EXTENSION_ID;

/// The fixers' outside world: this process's euid, no terminal, nothing run.
struct Quiet;

impl System for Quiet {
    fn euid(&self) -> u32 {
        // SAFETY: geteuid has no preconditions.
        unsafe { libc::geteuid() }
    }
    fn interactive(&self) -> bool {
        false
    }
    fn ask(&mut self, _: &str, _: &mut dyn std::io::Write) -> bool {
        false
    }
    fn run(&mut self, program: &str, _: &[String]) -> std::io::Result<i32> {
        panic!("the test ran {program}")
    }
    fn has(&self, _: &str) -> bool {
        false
    }
    fn graphical(&self) -> bool {
        false
    }
    fn self_command(&self) -> (String, Vec<String>) {
        (support::host().into(), Vec::new())
    }
    fn can_reload(&self, _: &micoff_doctor::Root) -> bool {
        false
    }
}

struct Machine {
    tmp: tempfile::TempDir,
    env: InstallEnv,
    profile: PathBuf,
    xpi: PathBuf,
    crx: PathBuf,
}

/// A user with Chromium on PATH, a Firefox ESR, one Firefox profile (Firefox has run: its own
/// prefs.js with the user's about:config choice for autoDisableScopes, and the user's user.js),
/// the packaged xpi and crx.
fn machine() -> Machine {
    let tmp = tempfile::tempdir().unwrap();
    let bin = tmp.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let chromium = bin.join("chromium");
    std::fs::write(&chromium, "").unwrap();
    std::os::unix::fs::PermissionsExt::set_mode(
        &mut std::fs::metadata(&chromium).unwrap().permissions(),
        0o755,
    );
    std::fs::set_permissions(
        &chromium,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let home = tmp.path().join("home");
    let profile = home.join(".mozilla/firefox/abc.default-esr");
    std::fs::create_dir_all(&profile).unwrap();
    std::fs::write(
        home.join(".mozilla/firefox/profiles.ini"),
        "[Profile0]\nName=default-esr\nIsRelative=1\nPath=abc.default-esr\n",
    )
    .unwrap();
    std::fs::write(
        profile.join("user.js"),
        "user_pref(\"browser.startup.page\", 3);\n",
    )
    .unwrap();
    std::fs::write(
        profile.join("prefs.js"),
        "// Mozilla User Preferences\nuser_pref(\"extensions.autoDisableScopes\", 11);\n",
    )
    .unwrap();
    // Firefox ESR (it accepts the unsigned add-on), as the install tests build it.
    let ff = tmp.path().join("root/usr/lib/firefox-esr");
    std::fs::create_dir_all(ff.join("defaults/pref")).unwrap();
    std::fs::write(ff.join("firefox-esr"), "").unwrap();
    std::fs::set_permissions(
        ff.join("firefox-esr"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    std::fs::write(
        ff.join("omni.ja"),
        support::zip(
            &[(
                "modules/AppConstants.sys.mjs",
                b"export var AppConstants = Object.freeze({\n  MOZ_REQUIRE_SIGNING: false,\n});\n"
                    .as_slice(),
            )],
            true,
        ),
    )
    .unwrap();
    std::fs::write(
        ff.join("defaults/pref/channel-prefs.js"),
        "pref(\"app.update.channel\", \"esr\");\n",
    )
    .unwrap();
    let dist = tmp.path().join("dist");
    std::fs::create_dir_all(&dist).unwrap();
    let xpi = dist.join("micoff-0.1.0.xpi");
    support::write_micoff_xpi(&xpi);
    let crx = dist.join("micoff-0.1.0.crx");
    std::fs::write(&crx, support::crx_of_micoff("0.1.0")).unwrap();
    // The system's desktop entry latency set copies.
    let apps = tmp.path().join("share/applications");
    std::fs::create_dir_all(&apps).unwrap();
    std::fs::write(
        apps.join("chromium.desktop"),
        "[Desktop Entry]\nExec=/usr/bin/chromium %U\n",
    )
    .unwrap();
    let env = InstallEnv {
        home,
        config_home: None,
        root: tmp.path().join("root"),
        path_dirs: vec![bin],
        flatpak_apps: vec![],
        data_home: None,
        state_home: None,
    };
    Machine {
        tmp,
        env,
        profile,
        xpi,
        crx,
    }
}

/// The exit code, and what it wrote to stdout then to stderr (its error lines).
fn uninstall(system: bool, dry_run: bool, env: &InstallEnv) -> (i32, String) {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = micoff_install::uninstall::run(
        &UninstallArgs { system, dry_run },
        env,
        &mut Quiet,
        &mut out,
        &mut err,
    );
    out.extend(err);
    (code, String::from_utf8(out).unwrap())
}

/// Everything the user would get: manifests for Chromium and Firefox, micoff from the crx, the
/// add-on and the release pref in the profile.
fn everything(m: &Machine) -> InstallArgs {
    InstallArgs {
        browsers: vec![Browser::Chromium, Browser::Firefox],
        chromium_crx: Some(Some(m.crx.clone())),
        firefox_xpi: Some(Some(m.xpi.clone())),
        firefox_release: true,
        ..support::install_args()
    }
}

/// Capture latency set for Chromium on PulseAudio, with the same folders.
fn latency_set(m: &Machine) {
    let paths = latency_paths(m);
    let req = micoff_native::latency::SetRequest {
        capture_ms: Some(40),
        browsers: vec![micoff_native::protocol::Browser::Chromium],
        mechanism: Some(micoff_native::protocol::Mechanism::LaunchEnvironment),
        dry_run: false,
    };
    let r = micoff_native::latency::set_for_server(
        &paths,
        &req,
        &micoff_native::latency::server_of(None),
        0,
    )
    .unwrap();
    assert!(!r.changed_files.is_empty(), "{r:?}");
}

fn latency_paths(m: &Machine) -> micoff_native::latency::Paths {
    micoff_native::latency::Paths::from_env(&HashMap::from([
        ("HOME".to_owned(), m.env.home.display().to_string()),
        (
            "XDG_DATA_DIRS".to_owned(),
            m.tmp.path().join("share").display().to_string(),
        ),
        (
            "PATH".to_owned(),
            m.tmp.path().join("bin").display().to_string(),
        ),
    ]))
    .unwrap()
}

/// Every path under `dir` with its content (folders as such): "back as before" is this equal.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Option<Vec<u8>>)> {
    support::tree(dir)
        .into_iter()
        .map(|p| {
            if std::fs::symlink_metadata(&p).unwrap().is_dir() {
                (p, None)
            } else {
                let content = std::fs::read(&p).unwrap_or_default();
                (p, Some(content))
            }
        })
        .collect()
}

#[test]
fn one_uninstall_undoes_everything_and_the_folders_are_as_before() {
    let m = machine();
    let before = snapshot(m.tmp.path());
    let (code, out) = install(&everything(&m), &m.env);
    assert_eq!(code, 0, "{out}");
    latency_set(&m);
    // Firefox ran with micoff's block: it copied micoff's values into prefs.js, over the user's 11.
    let prefs = m.profile.join("prefs.js");
    let block = std::fs::read_to_string(m.profile.join("user.js")).unwrap();
    assert!(
        block.contains("user_pref(\"xpinstall.signatures.required\", false);"),
        "{block}"
    );
    assert!(
        block.contains("// micoff: prefs.js had user_pref(\"extensions.autoDisableScopes\", 11);"),
        "{block}"
    );
    std::fs::write(
        &prefs,
        "// Mozilla User Preferences\nuser_pref(\"extensions.autoDisableScopes\", 10);\nuser_pref(\"xpinstall.signatures.required\", false);\nuser_pref(\"media.getusermedia.microphone.off_while_disabled.enabled\", true);\n",
    )
    .unwrap();
    let record = m.env.home.join(".local/state/micoff/record.json");
    assert!(record.is_file());

    let (code, out) = uninstall(false, false, &m.env);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("(host manifest)") && out.contains("(Chromium crx copy)"),
        "{out}"
    );
    assert!(
        out.contains("(latency wrapper)") || out.contains("(latency desktop entry)"),
        "{out}"
    );
    assert!(
        out.contains("everything micoff wrote was removed or put back"),
        "{out}"
    );
    assert!(!out.contains("written by an older micoff"), "{out}");
    // prefs.js: the values Firefox copied from micoff's block are gone, the user's 11 is back.
    std::fs::write(&prefs, std::fs::read_to_string(&prefs).unwrap()).unwrap();
    let after = snapshot(m.tmp.path());
    let prefs_after = std::fs::read_to_string(&prefs).unwrap();
    assert_eq!(
        prefs_after,
        "// Mozilla User Preferences\nuser_pref(\"extensions.autoDisableScopes\", 11);\n"
    );
    assert_eq!(after, before, "{out}");
    // Once more: nothing left to do.
    let (code, out) = uninstall(false, false, &m.env);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("nothing of micoff's to remove"), "{out}");
}

#[test]
fn a_dry_run_changes_nothing_and_names_what_it_would_remove() {
    let m = machine();
    install(&everything(&m), &m.env);
    let before = snapshot(m.tmp.path());
    let (code, out) = uninstall(false, true, &m.env);
    assert_eq!(code, 0, "{out}");
    assert_eq!(snapshot(m.tmp.path()), before);
    assert!(out.contains("would remove"), "{out}");
    assert!(
        out.contains("user.js would be removed") || out.contains("user.js would be updated"),
        "{out}"
    );
    assert!(
        out.contains("everything micoff wrote would be removed or put back"),
        "{out}"
    );
}

/// The dry run's lines in the real run's words (`would remove X` / `X would be removed` ->
/// `removed X` / `X removed`).
fn as_done(dry: &str) -> Vec<String> {
    dry.lines()
        .map(|l| {
            l.replacen("wrote would be removed", "wrote was removed", 1)
                .replacen("would remove ", "removed ", 1)
                .replacen(" would be ", " ", 1)
        })
        .collect()
}

/// A dry run names exactly what the real run then does, each thing once (what micoff's record
/// holds is not named again as an older micoff's), and changes nothing.
fn dry_run_says_what_the_real_run_does(m: &Machine) {
    let before = snapshot(m.tmp.path());
    let (dry_code, dry) = uninstall(false, true, &m.env);
    assert_eq!(snapshot(m.tmp.path()), before, "{dry}");
    assert!(!dry.contains("written by an older micoff"), "{dry}");
    let (code, out) = uninstall(false, false, &m.env);
    assert_eq!((dry_code, code), (0, 0), "{dry}\n{out}");
    // What Firefox does at its next start is said once it is so.
    let done: Vec<&str> = out
        .lines()
        .filter(|l| *l != "Firefox: Firefox removes micoff at its next start")
        .collect();
    assert_eq!(as_done(&dry), done, "dry run:\n{dry}\nreal run:\n{out}");
}

#[test]
fn a_dry_run_after_a_firefox_add_on_install_names_each_file_once_as_the_real_run_does() {
    let m = machine();
    let a = InstallArgs {
        browsers: vec![Browser::Firefox],
        firefox_xpi: Some(Some(m.xpi.clone())),
        firefox_release: true,
        ..support::install_args()
    };
    let (code, out) = install(&a, &m.env);
    assert_eq!(code, 0, "{out}");
    dry_run_says_what_the_real_run_does(&m);
}

#[test]
fn a_dry_run_after_everything_names_each_file_once_as_the_real_run_does() {
    let m = machine();
    let (code, out) = install(&everything(&m), &m.env);
    assert_eq!(code, 0, "{out}");
    latency_set(&m);
    dry_run_says_what_the_real_run_does(&m);
}

#[test]
fn an_edited_file_is_the_users_left_and_named_until_it_is_gone() {
    let m = machine();
    install(&everything(&m), &m.env);
    let manifest = m
        .env
        .home
        .join(".config/chromium/NativeMessagingHosts/org.micoff.host.json");
    let edited = std::fs::read_to_string(&manifest)
        .unwrap()
        .replace("stdio", "stdio ");
    std::fs::write(&manifest, &edited).unwrap();
    let (code, out) = uninstall(false, false, &m.env);
    assert_eq!(code, 3, "{out}");
    assert!(
        out.contains(&format!("left {}: ", manifest.display())),
        "{out}"
    );
    assert!(out.contains("changed since micoff wrote it"), "{out}");
    assert_eq!(std::fs::read_to_string(&manifest).unwrap(), edited);
    // Still named the next time, until the user removes it.
    let (code, _) = uninstall(false, false, &m.env);
    assert_eq!(code, 3);
    std::fs::remove_file(&manifest).unwrap();
    let (code, out) = uninstall(false, false, &m.env);
    assert_eq!(code, 0, "{out}");
    assert!(!m.env.home.join(".config/chromium").exists(), "{out}");
}

#[test]
fn what_an_older_micoff_wrote_without_a_record_is_found_by_each_commands_rule() {
    let m = machine();
    let (code, out) = install(&everything(&m), &m.env);
    assert_eq!(code, 0, "{out}");
    latency_set(&m);
    // An older micoff kept no record.
    std::fs::remove_dir_all(m.env.home.join(".local/state")).unwrap();
    let (code, out) = uninstall(false, false, &m.env);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("no record of micoff's"), "{out}");
    assert!(
        out.contains("not in micoff's record (written by an older micoff)"),
        "{out}"
    );
    assert!(
        !m.env
            .home
            .join(".config/chromium/NativeMessagingHosts/org.micoff.host.json")
            .exists(),
        "{out}"
    );
    assert!(!m
        .env
        .home
        .join(".mozilla/native-messaging-hosts/org.micoff.host.json")
        .exists());
    assert!(!m
        .profile
        .join("extensions")
        .join(format!("{FIREFOX_EXTENSION_ID}.xpi"))
        .exists());
    assert_eq!(
        std::fs::read_to_string(m.profile.join("user.js")).unwrap(),
        "user_pref(\"browser.startup.page\", 3);\n"
    );
    assert!(
        !latency_paths(&m).wrapper("chromium").unwrap().exists(),
        "{out}"
    );
}

#[test]
fn a_recorded_fix_is_undone_by_its_own_revert() {
    let m = machine();
    let conf = m.env.home.join(".config/pulse/client.conf");
    std::fs::create_dir_all(conf.parent().unwrap()).unwrap();
    std::fs::write(&conf, "enable-shm = no\n").unwrap();
    let body =
        micoff_doctor::fix::client_shm::render("enable-shm = no\n", &conf.display().to_string());
    micoff_doctor::fix::install(&conf, &body).unwrap();
    let record = micoff_files::record::user_record(&m.env.home.join(".local/state"));
    let mut out = Vec::new();
    micoff_doctor::fix::recorded::note(
        Some(record.clone()),
        "client-shm",
        Some(serde_json::json!({"path": conf})),
        &mut out,
    );
    // Recorded: named once, by its part, not again as an older micoff's.
    let (code, out) = uninstall(false, true, &m.env);
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        out.matches("would run: micoff-host fix client-shm --revert")
            .count(),
        1,
        "{out}"
    );
    let (code, out) = uninstall(false, false, &m.env);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("fix client-shm --revert: removed"), "{out}");
    assert_eq!(std::fs::read_to_string(&conf).unwrap(), "enable-shm = no\n");
    assert!(!record.exists());
}

#[test]
fn system_uninstall_blocks_micoff_first_then_takes_everything_out() {
    let m = machine();
    let root = &m.env.root;
    std::fs::create_dir_all(root.join("etc/firefox")).unwrap();
    std::fs::create_dir_all(root.join("etc/chromium")).unwrap();
    let before = snapshot(m.tmp.path());
    let a = InstallArgs {
        browsers: vec![Browser::Chromium, Browser::Firefox],
        system: true,
        firefox_xpi: Some(Some(m.xpi.clone())),
        firefox_release: true,
        ..support::install_args()
    };
    let (code, out) = install(&a, &m.env);
    assert_eq!(code, 0, "{out}");
    assert!(root.join("var/lib/micoff/record.json").is_file(), "{out}");
    // A per-user uninstall leaves what --system wrote.
    let (code, out) = uninstall(false, false, &m.env);
    assert_eq!(code, 0, "{out}");
    assert!(
        root.join("etc/firefox/policies/policies.json").is_file(),
        "{out}"
    );
    let (code, out) = uninstall(true, false, &m.env);
    assert_eq!(code, 3, "{out}");
    assert!(out.contains("now blocks micoff"), "{out}");
    let policies =
        std::fs::read_to_string(root.join("etc/firefox/policies/policies.json")).unwrap();
    assert!(policies.contains("blocked"), "{policies}");
    let (code, out) = uninstall(true, false, &m.env);
    assert_eq!(code, 0, "{out}");
    assert_eq!(snapshot(m.tmp.path()), before, "{out}");
}

#[test]
fn a_manifest_written_through_a_dotfiles_link_goes_as_the_link_the_file_stays() {
    let m = machine();
    let dotfiles = m.tmp.path().join("dotfiles");
    std::fs::create_dir_all(&dotfiles).unwrap();
    std::fs::write(dotfiles.join("org.micoff.host.json"), "{}\n").unwrap();
    let folder = m.env.home.join(".mozilla/native-messaging-hosts");
    std::fs::create_dir_all(&folder).unwrap();
    let link = folder.join("org.micoff.host.json");
    std::os::unix::fs::symlink(dotfiles.join("org.micoff.host.json"), &link).unwrap();
    let a = InstallArgs {
        browsers: vec![Browser::Firefox],
        ..support::install_args()
    };
    let (code, out) = install(&a, &m.env);
    assert_eq!(code, 0, "{out}");
    let written = std::fs::read_to_string(dotfiles.join("org.micoff.host.json")).unwrap();
    assert!(written.contains("micoff-host"), "{written}");
    let (code, out) = uninstall(false, false, &m.env);
    assert_eq!(code, 0, "{out}");
    assert!(std::fs::symlink_metadata(&link).is_err(), "{out}");
    assert_eq!(
        std::fs::read_to_string(dotfiles.join("org.micoff.host.json")).unwrap(),
        written
    );
}

/// The machine's Firefox as Firefox 147+ makes it for a new user: its profile root under
/// `config` (`$XDG_CONFIG_HOME`, or `~/.config` when `None`), no `~/.mozilla` at all.
fn profiles_in_config_home(m: &mut Machine, config: Option<&Path>) {
    let base = config.map_or_else(|| m.env.home.join(".config"), Path::to_path_buf);
    std::fs::create_dir_all(&base).unwrap();
    std::fs::rename(m.env.home.join(".mozilla"), base.join("mozilla")).unwrap();
    m.profile = base.join("mozilla/firefox/abc.default-esr");
    m.env.config_home = config.map(Path::to_path_buf);
}

fn firefox_only(m: &Machine) -> InstallArgs {
    InstallArgs {
        browsers: vec![Browser::Firefox],
        firefox_xpi: Some(Some(m.xpi.clone())),
        firefox_release: true,
        ..support::install_args()
    }
}

#[test]
fn a_profile_under_the_config_home_gets_micoff_and_one_uninstall_puts_the_home_back() {
    for config in [None, Some("cfg")] {
        let mut m = machine();
        let config = config.map(|c| m.tmp.path().join(c));
        profiles_in_config_home(&mut m, config.as_deref());
        let before = snapshot(m.tmp.path());
        let (code, out) = install(&firefox_only(&m), &m.env);
        assert_eq!(code, 0, "{out}");
        let copy = m
            .profile
            .join("extensions")
            .join(format!("{FIREFOX_EXTENSION_ID}.xpi"));
        assert!(copy.is_file(), "{out}");
        let user_js = std::fs::read_to_string(m.profile.join("user.js")).unwrap();
        assert!(
            user_js.contains("off_while_disabled.enabled\", true"),
            "{user_js}"
        );
        // The manifest where Firefox reads a user's: ~/.mozilla/native-messaging-hosts, whatever
        // the profile root; no legacy profile root made.
        assert!(m
            .env
            .home
            .join(".mozilla/native-messaging-hosts/org.micoff.host.json")
            .is_file());
        assert!(!m.env.home.join(".mozilla/firefox").exists());
        let (code, out) = uninstall(false, false, &m.env);
        assert_eq!(code, 0, "{out}");
        assert_eq!(snapshot(m.tmp.path()), before, "{out}");
    }
}

#[test]
fn no_firefox_profile_anywhere_is_an_error_that_writes_nothing() {
    let mut m = machine();
    std::fs::remove_dir_all(m.env.home.join(".mozilla")).unwrap();
    // Firefox's XDG root with no profiles.ini in it (a Firefox that never finished its first
    // start) lists no profile either.
    std::fs::create_dir_all(m.env.home.join(".config/mozilla/firefox")).unwrap();
    let before = snapshot(m.tmp.path());
    for dry_run in [false, true] {
        let (code, out) = install(
            &InstallArgs {
                dry_run,
                ..firefox_only(&m)
            },
            &m.env,
        );
        assert_eq!(code, 1, "{out}");
        assert!(
            out.contains("no Firefox profile found")
                && out.contains("~/.mozilla/firefox/profiles.ini")
                && out.contains("~/.config/mozilla/firefox/profiles.ini")
                && out.contains("nothing written"),
            "{out}"
        );
        assert_eq!(snapshot(m.tmp.path()), before, "{out}");
    }
    // The same with $XDG_CONFIG_HOME: that is where it looked.
    m.env.config_home = Some(m.tmp.path().join("cfg"));
    let (code, out) = install(&firefox_only(&m), &m.env);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("cfg/mozilla/firefox/profiles.ini"), "{out}");
    assert_eq!(snapshot(m.tmp.path()), before, "{out}");
}
