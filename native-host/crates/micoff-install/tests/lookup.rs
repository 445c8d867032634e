//! Which manifest each browser uses when a user's and a system one both exist, by the browser's
//! own order (doctor's native messaging finding): Chromium takes the first file it finds (the
//! user's unless a policy says no), Firefox the first valid one; a snap Chromium none.

#![allow(clippy::unwrap_used)] // tests may unwrap (house style)

mod support;

use std::path::{Path, PathBuf};

use micoff_doctor::Status;
use micoff_install::lookup::{finding, lookup};
use micoff_install::manifest::content::manifest_json;
use micoff_install::{Browser, InstallEnv};

const FILE: &str = "org.micoff.host.json";

fn env(tmp: &Path) -> InstallEnv {
    InstallEnv {
        home: tmp.join("home"),
        config_home: None,
        root: tmp.join("root"),
        path_dirs: vec![],
        flatpak_apps: vec![],
        data_home: None,
        state_home: None,
    }
}

/// `browser` installed: its program at its first usual path under the fake root.
fn installed(env: &InstallEnv, browser: Browser) {
    let at = browser.install_paths().next().unwrap();
    support::executable(&env.root.join(at));
}

fn put(path: &Path, text: &str) -> PathBuf {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
    path.to_path_buf()
}

#[test]
fn chromium_uses_the_users_manifest_unless_a_policy_says_no() {
    let tmp = tempfile::tempdir().unwrap();
    let env = env(tmp.path());
    installed(&env, Browser::Chromium);
    let host = Path::new(support::host());
    let user = put(
        &env.home
            .join(".config/chromium/NativeMessagingHosts")
            .join(FILE),
        &manifest_json(false, host, &[]),
    );
    // The package's: a link into /usr/share/micoff-host.
    let share = put(
        &env.root
            .join("usr/share/micoff-host/native-messaging-hosts/chromium")
            .join(FILE),
        &manifest_json(false, host, &[]),
    );
    let system = env
        .root
        .join("etc/chromium/native-messaging-hosts")
        .join(FILE);
    std::fs::create_dir_all(system.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(&share, &system).unwrap();
    let l = lookup(&env, Browser::Chromium).unwrap();
    assert_eq!(l.found.len(), 2);
    assert_eq!(l.found[l.used.unwrap()].path, user);
    assert_eq!(l.found[1].whose, "package");
    assert!(l.works());
    assert!(l.line().contains("(user): works; also"), "{}", l.line());
    // The administrator turns per-user hosts off: the package's is used.
    put(
        &env.root.join("etc/chromium/policies/managed/hosts.json"),
        r#"{"NativeMessagingUserLevelHosts": false}"#,
    );
    let l = lookup(&env, Browser::Chromium).unwrap();
    assert_eq!(l.found.len(), 1);
    assert_eq!(l.found[0].path, system);
    assert!(
        l.line().contains("NativeMessagingUserLevelHosts"),
        "{}",
        l.line()
    );
}

#[test]
fn chromium_takes_the_first_file_even_broken_firefox_the_first_valid() {
    let tmp = tempfile::tempdir().unwrap();
    let env = env(tmp.path());
    installed(&env, Browser::Chromium);
    installed(&env, Browser::Firefox);
    let host = Path::new(support::host());
    // A user's manifest naming a host that is gone, before a good system one.
    let gone = Path::new("/nonexistent/micoff-host");
    put(
        &env.home
            .join(".config/chromium/NativeMessagingHosts")
            .join(FILE),
        &manifest_json(false, gone, &[]),
    );
    put(
        &env.root
            .join("etc/chromium/native-messaging-hosts")
            .join(FILE),
        &manifest_json(false, host, &[]),
    );
    let l = lookup(&env, Browser::Chromium).unwrap();
    assert_eq!(l.used, Some(0));
    assert!(!l.works());
    assert!(
        l.line().contains("BROKEN") && l.line().contains("does not exist"),
        "{}",
        l.line()
    );
    // Firefox passes over a manifest that does not allow micoff's add-on.
    put(
        &env.home.join(".mozilla/native-messaging-hosts").join(FILE),
        &manifest_json(false, host, &[]),
    );
    let system = put(
        &env.root
            .join("usr/lib/mozilla/native-messaging-hosts")
            .join(FILE),
        &manifest_json(true, host, &[]),
    );
    let l = lookup(&env, Browser::Firefox).unwrap();
    assert_eq!(l.found[l.used.unwrap()].path, system);
    assert!(l.works());
    let f = finding(&env);
    assert_eq!(f.status, Status::WorthChanging, "{f:?}");
    assert!(f.current.contains("Chromium"), "{f:?}");
}

#[test]
fn a_snap_chromium_cannot_and_a_snap_firefox_is_told_about_the_portal() {
    let tmp = tempfile::tempdir().unwrap();
    let env = env(tmp.path());
    let bin = env.root.join("snap/bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink("/usr/bin/snap", bin.join("chromium")).unwrap();
    std::os::unix::fs::symlink("/usr/bin/snap", bin.join("firefox")).unwrap();
    put(
        &env.home.join(".mozilla/native-messaging-hosts").join(FILE),
        &manifest_json(true, Path::new(support::host()), &[]),
    );
    let l = lookup(&env, Browser::Chromium).unwrap();
    assert!(l.snap && !l.works());
    assert!(
        l.line().contains("cannot use a native messaging host"),
        "{}",
        l.line()
    );
    let l = lookup(&env, Browser::Firefox).unwrap();
    assert!(l.snap && l.works(), "{}", l.line());
    let f = finding(&env);
    assert!(f
        .hint
        .unwrap()
        .contains("widget.use-xdg-desktop-portal.native-messaging"));
    // The installer says the same where it cannot do more.
    let mut out = Vec::new();
    let a = micoff_install::InstallArgs {
        dry_run: true,
        ..support::install_args()
    };
    micoff_install::run(&a, &env, &mut out, &mut Vec::new());
    let out = String::from_utf8(out).unwrap();
    assert!(
        out.contains(
            "note: snap Firefox found: it reaches micoff-host only through the desktop portal"
        ),
        "{out}"
    );
    assert!(
        out.contains(
            "note: snap Chromium found: a snap Chromium cannot start native messaging hosts"
        ),
        "{out}"
    );
}

/// The package's manifests cover Chromium, Google Chrome and Firefox; only the installed browsers
/// "work", a manifest for one that is not installed is said to be waiting for it.
#[test]
fn a_manifest_for_a_browser_that_is_not_installed_does_not_work() {
    let tmp = tempfile::tempdir().unwrap();
    let env = env(tmp.path());
    let host = Path::new(support::host());
    installed(&env, Browser::Chromium);
    for dir in [
        "etc/chromium/native-messaging-hosts",
        "etc/opt/chrome/native-messaging-hosts",
    ] {
        put(
            &env.root.join(dir).join(FILE),
            &manifest_json(false, host, &[]),
        );
    }
    let chrome = lookup(&env, Browser::Chrome).unwrap();
    assert!(chrome.installed.is_none());
    assert!(!chrome.works());
    let line = chrome.line();
    assert!(
        line.starts_with("Chrome: not installed (a manifest for it is ready: ")
            && !line.contains("works"),
        "{line}"
    );
    assert!(lookup(&env, Browser::Chromium).unwrap().works());
    let f = finding(&env);
    assert_eq!(f.status, Status::Ok, "{f:?}");
    assert_eq!(
        f.current, "every browser found reaches micoff-host: Chromium",
        "{f:?}"
    );
    assert!(f.details.iter().any(|d| d == &line), "{f:?}");
    // With no browser installed at all, nothing works and nothing is broken.
    std::fs::remove_file(
        env.root
            .join(Browser::Chromium.install_paths().next().unwrap()),
    )
    .unwrap();
    let f = finding(&env);
    assert_eq!(f.status, Status::NotApplicable, "{f:?}");
    assert!(
        f.details.iter().all(|d| d.contains("not installed")),
        "{f:?}"
    );
}
