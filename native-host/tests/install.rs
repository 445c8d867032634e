//! `micoff-host install` in temp dirs: detection, idempotence, uninstall, dry-run, Flatpak.

#![allow(clippy::unwrap_used)] // tests may unwrap (house style)

use std::path::{Path, PathBuf};

use micoff_host::cli::install::{run, Browser, InstallArgs, InstallEnv};

fn args() -> InstallArgs {
    InstallArgs {
        browsers: vec![],
        all_detected: false,
        system: false,
        target_dir: None,
        uninstall: false,
        dry_run: false,
        host_path: Some(PathBuf::from("/opt/micoff/micoff-host")),
    }
}

fn env(tmp: &Path) -> InstallEnv {
    let bin = tmp.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    InstallEnv {
        home: tmp.join("home"),
        config_home: None,
        root: tmp.join("root"),
        path_dirs: vec![bin],
        flatpak_apps: vec![],
    }
}

fn touch(path: &Path) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, "").unwrap();
}

fn install(args: &InstallArgs, env: &InstallEnv) -> (i32, String) {
    let mut out = Vec::new();
    let code = run(args, env, &mut out);
    (code, String::from_utf8(out).unwrap())
}

#[test]
fn installs_for_detected_browsers_only_and_is_idempotent() {
    let tmp = tempfile::tempdir().unwrap();
    let env = env(tmp.path());
    touch(&tmp.path().join("bin/chromium"));
    std::fs::create_dir_all(tmp.path().join("home/.mozilla/firefox")).unwrap();
    let (code, out) = install(&args(), &env);
    assert_eq!(code, 0, "{out}");
    let chromium = tmp
        .path()
        .join("home/.config/chromium/NativeMessagingHosts/org.micoff.host.json");
    let firefox = tmp
        .path()
        .join("home/.mozilla/native-messaging-hosts/org.micoff.host.json");
    let m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&chromium).unwrap()).unwrap();
    assert_eq!(m["name"], "org.micoff.host");
    assert_eq!(m["type"], "stdio");
    assert_eq!(m["path"], "/opt/micoff/micoff-host");
    assert_eq!(
        m["allowed_origins"],
        serde_json::json!(["chrome-extension://ipgdconbmedmelnlpalblnicflhpfkim/"])
    );
    let m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&firefox).unwrap()).unwrap();
    assert_eq!(
        m["allowed_extensions"],
        serde_json::json!(["micoff@micoff.org"])
    );
    assert!(!tmp.path().join("home/.config/google-chrome").exists());
    assert!(out.contains("written"), "{out}");

    let (code, out) = install(&args(), &env);
    assert_eq!(code, 0);
    assert_eq!(out.matches("unchanged").count(), 2, "{out}");

    // A changed host path updates the file.
    let mut moved = args();
    moved.host_path = Some(PathBuf::from("/usr/bin/micoff-host"));
    let (_, out) = install(&moved, &env);
    assert_eq!(out.matches("updated").count(), 2, "{out}");
    // No temp files left behind.
    let left: Vec<_> = std::fs::read_dir(chromium.parent().unwrap())
        .unwrap()
        .collect();
    assert_eq!(left.len(), 1);
}

#[test]
fn honours_xdg_config_home_and_explicit_browsers() {
    let tmp = tempfile::tempdir().unwrap();
    let mut env = env(tmp.path());
    env.config_home = Some(tmp.path().join("xdg"));
    let mut a = args();
    a.browsers = vec![Browser::Brave, Browser::Edge];
    let (code, out) = install(&a, &env);
    assert_eq!(code, 0, "{out}");
    assert!(tmp
        .path()
        .join("xdg/BraveSoftware/Brave-Browser/NativeMessagingHosts/org.micoff.host.json")
        .is_file());
    assert!(tmp
        .path()
        .join("xdg/microsoft-edge/NativeMessagingHosts/org.micoff.host.json")
        .is_file());
}

#[test]
fn nothing_detected_is_exit_4() {
    let tmp = tempfile::tempdir().unwrap();
    let (code, out) = install(&args(), &env(tmp.path()));
    assert_eq!(code, 4, "{out}");
}

#[test]
fn dry_run_changes_nothing_and_uninstall_removes_exactly_the_files() {
    let tmp = tempfile::tempdir().unwrap();
    let env = env(tmp.path());
    let mut a = args();
    a.browsers = vec![Browser::Chrome, Browser::Firefox];
    a.dry_run = true;
    let (code, out) = install(&a, &env);
    assert_eq!(code, 0);
    assert!(out.contains("would be written"), "{out}");
    assert!(!tmp.path().join("home").exists());

    a.dry_run = false;
    install(&a, &env);
    let chrome_dir = tmp
        .path()
        .join("home/.config/google-chrome/NativeMessagingHosts");
    touch(&chrome_dir.join("other.host.json"));
    a.uninstall = true;
    let (code, out) = install(&a, &env);
    assert_eq!(code, 0, "{out}");
    assert_eq!(out.matches("removed").count(), 2, "{out}");
    assert!(!chrome_dir.join("org.micoff.host.json").exists());
    assert!(chrome_dir.join("other.host.json").exists());
    let (_, out) = install(&a, &env);
    assert_eq!(out.matches("not present").count(), 2, "{out}");
}

#[test]
fn system_and_target_dir() {
    let tmp = tempfile::tempdir().unwrap();
    let env = env(tmp.path());
    let mut a = args();
    a.browsers = vec![Browser::Chromium, Browser::Firefox, Browser::Vivaldi];
    a.system = true;
    let (code, out) = install(&a, &env);
    assert_eq!(code, 0, "{out}");
    assert!(tmp
        .path()
        .join("root/etc/chromium/native-messaging-hosts/org.micoff.host.json")
        .is_file());
    assert!(tmp
        .path()
        .join("root/usr/lib/mozilla/native-messaging-hosts/org.micoff.host.json")
        .is_file());
    assert!(out.contains("Vivaldi: no system-wide"), "{out}");

    let mut a = args();
    a.target_dir = Some(tmp.path().join("profile/NativeMessagingHosts"));
    let (code, _) = install(&a, &env);
    assert_eq!(code, 0);
    let text = std::fs::read_to_string(
        tmp.path()
            .join("profile/NativeMessagingHosts/org.micoff.host.json"),
    )
    .unwrap();
    assert!(text.contains("allowed_origins"));
    a.browsers = vec![Browser::Chromium, Browser::Firefox];
    assert_eq!(install(&a, &env).0, 2);
}

#[test]
fn explains_flatpak_browsers() {
    let tmp = tempfile::tempdir().unwrap();
    let mut env = env(tmp.path());
    std::fs::create_dir_all(tmp.path().join("home/.var/app/org.chromium.Chromium")).unwrap();
    env.flatpak_apps = vec!["org.mozilla.firefox".into()];
    let (_, out) = install(&args(), &env);
    assert!(
        out.contains("Flatpak Chromium (org.chromium.Chromium)"),
        "{out}"
    );
    assert!(
        out.contains(".var/app/org.chromium.Chromium/config/chromium/NativeMessagingHosts"),
        "{out}"
    );
    assert!(
        out.contains("Flatpak Firefox (org.mozilla.firefox)"),
        "{out}"
    );
    assert!(out.contains("portal"), "{out}");
}
