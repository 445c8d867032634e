//! `micoff-host install` in temp dirs: detection, idempotence, uninstall, dry-run, Flatpak.

#![allow(clippy::unwrap_used)] // tests may unwrap (house style)

use std::path::{Path, PathBuf};

use micoff_install::{Browser, InstallArgs, InstallEnv};

mod support;

use support::{env, executable, install, temp_env, touch};

fn args() -> InstallArgs {
    support::install_args()
}

/// Whether the host manifest stands in `dir` below `tmp`.
fn manifest_in(tmp: &tempfile::TempDir, dir: &str) -> bool {
    tmp.path().join(dir).join(MANIFEST).is_file()
}

/// A micoff-host at another path (`<tmp>/opt/micoff-host`, a link to the one these tests run).
fn host_elsewhere(tmp: &Path) -> PathBuf {
    let host = tmp.join("opt/micoff-host");
    std::fs::create_dir_all(host.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(support::host(), &host).unwrap();
    host
}

fn uninstall_all() -> InstallArgs {
    let mut a = args();
    a.uninstall = true;
    a
}

/// Uninstall for Chromium with `--chromium-crx` and no crx named.
fn uninstall_chromium_crx() -> InstallArgs {
    let mut u = uninstall_all();
    u.browsers = vec![Browser::Chromium];
    u.chromium_crx = Some(None);
    u
}

const MANIFEST: &str = "org.micoff.host.json";

#[test]
fn a_firefox_that_made_its_profile_under_the_config_home_is_detected_and_gets_the_manifest_it_reads(
) {
    for config_home in [None, Some("cfg")] {
        let (tmp, mut env) = temp_env();
        env.config_home = config_home.map(|c| tmp.path().join(c));
        let profiles_ini = env.config_home().join("mozilla/firefox/profiles.ini");
        touch(&profiles_ini);
        let (code, out) = install(&args(), &env);
        assert_eq!(code, 0, "{out}");
        assert!(
            out.contains(&format!(
                "found Firefox: profile {}",
                profiles_ini.display()
            )),
            "{out}"
        );
        // The manifest in ~/.mozilla, the one per-user folder Firefox reads, XDG or not; no
        // legacy profile root made.
        assert!(tmp
            .path()
            .join("home/.mozilla/native-messaging-hosts")
            .join(MANIFEST)
            .is_file());
        assert!(!tmp.path().join("home/.mozilla/firefox").exists());
    }
}

#[test]
fn installs_for_detected_browsers_only_and_is_idempotent() {
    let (tmp, env) = temp_env();
    executable(&tmp.path().join("bin/chromium"));
    // Firefox has run for this user: its profiles.ini exists.
    touch(&tmp.path().join("home/.mozilla/firefox/profiles.ini"));
    let (code, out) = install(&args(), &env);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("found Chromium:") && out.contains("in PATH"),
        "{out}"
    );
    assert!(out.contains("found Firefox: profile"), "{out}");
    let chromium = tmp
        .path()
        .join("home/.config/chromium/NativeMessagingHosts")
        .join(MANIFEST);
    let firefox = tmp
        .path()
        .join("home/.mozilla/native-messaging-hosts")
        .join(MANIFEST);
    let m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&chromium).unwrap()).unwrap();
    assert_eq!(m["name"], "org.micoff.host");
    assert_eq!(m["type"], "stdio");
    assert_eq!(m["path"], support::host());
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

    // A changed host path updates the file (another micoff-host: a link to this one).
    let mut moved = args();
    moved.host_path = Some(host_elsewhere(tmp.path()));
    let (_, out) = install(&moved, &env);
    assert_eq!(out.matches("updated").count(), 2, "{out}");
    // No temp files left behind.
    let left: Vec<_> = std::fs::read_dir(chromium.parent().unwrap())
        .unwrap()
        .collect();
    assert_eq!(left.len(), 1);
}

#[test]
fn folders_we_created_do_not_make_a_browser_detected() {
    let (tmp, env) = temp_env();
    executable(&tmp.path().join("bin/chromium"));
    let mut edge = args();
    edge.browsers = vec![Browser::Edge];
    assert_eq!(install(&edge, &env).0, 0);
    assert!(tmp.path().join("home/.config/microsoft-edge").is_dir());
    // A plain install afterwards: Chromium only; Edge's folder (ours) says nothing.
    let (code, out) = install(&args(), &env);
    assert_eq!(code, 0, "{out}");
    assert!(!out.contains("Edge"), "{out}");
    // Neither does an empty config folder, nor a non-executable file in PATH.
    std::fs::create_dir_all(tmp.path().join("home/.config/vivaldi")).unwrap();
    touch(&tmp.path().join("bin/brave-browser"));
    let (_, out) = install(&args(), &env);
    assert!(!out.contains("Vivaldi") && !out.contains("Brave"), "{out}");
    // Real profile state does.
    touch(&tmp.path().join("home/.config/vivaldi/Local State"));
    let (_, out) = install(&args(), &env);
    assert!(out.contains("found Vivaldi: profile"), "{out}");
}

#[test]
fn detects_browsers_at_their_usual_install_locations() {
    let (tmp, env) = temp_env();
    let root = tmp.path().join("root");
    executable(&root.join("opt/google/chrome/chrome"));
    executable(&root.join("opt/microsoft/msedge/msedge"));
    executable(&root.join("opt/brave.com/brave/brave"));
    executable(&root.join("opt/vivaldi/vivaldi"));
    executable(&root.join("usr/lib/firefox-esr/firefox-esr"));
    std::fs::create_dir_all(root.join("snap/bin")).unwrap();
    std::os::unix::fs::symlink("/usr/bin/snap", root.join("snap/bin/chromium")).unwrap();
    let (code, out) = install(&args(), &env);
    assert_eq!(code, 0, "{out}");
    for (name, why) in [
        ("Chrome", "opt/google/chrome/chrome"),
        ("Edge", "opt/microsoft/msedge/msedge"),
        ("Brave", "opt/brave.com/brave/brave"),
        ("Vivaldi", "opt/vivaldi/vivaldi"),
        ("Firefox", "usr/lib/firefox-esr/firefox-esr"),
        ("Chromium", "snap chromium"),
    ] {
        assert!(
            out.lines()
                .any(|l| l.starts_with(&format!("found {name}:")) && l.contains(why)),
            "{name}: {out}"
        );
    }
    assert_eq!(out.matches(" written").count(), 6, "{out}");
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
    assert!(manifest_in(
        &tmp,
        "xdg/BraveSoftware/Brave-Browser/NativeMessagingHosts"
    ));
    assert!(manifest_in(&tmp, "xdg/microsoft-edge/NativeMessagingHosts"));
}

#[test]
fn nothing_detected_is_exit_4() {
    let tmp = tempfile::tempdir().unwrap();
    let (code, out) = install(&args(), &env(tmp.path()));
    assert_eq!(code, 4, "{out}");
    assert!(out.contains("no supported browser found"), "{out}");
}

#[test]
fn dry_run_changes_nothing_and_uninstall_removes_exactly_the_files() {
    let (tmp, env) = temp_env();
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
    a.dry_run = true;
    let (code, out) = install(&a, &env);
    assert_eq!(
        (code, out.matches("would be removed").count()),
        (0, 2),
        "{out}"
    );
    assert!(chrome_dir.join(MANIFEST).exists());
    a.dry_run = false;
    let (code, out) = install(&a, &env);
    assert_eq!(code, 0, "{out}");
    assert_eq!(out.matches("removed").count(), 2, "{out}");
    assert!(!chrome_dir.join(MANIFEST).exists());
    assert!(chrome_dir.join("other.host.json").exists());
    let (code, out) = install(&a, &env);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("nothing to remove"), "{out}");
}

#[test]
fn uninstall_sweeps_every_known_folder_and_removes_only_ours() {
    let (tmp, env) = temp_env();
    // Nothing installed, nothing detected: nothing to do is not an error.
    let (code, out) = install(&uninstall_all(), &env);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("nothing to remove"), "{out}");

    // Ours for browsers that are not (or no longer) detected, in a Flatpak folder too.
    let mut a = args();
    a.browsers = vec![Browser::Edge, Browser::Vivaldi, Browser::Firefox];
    assert_eq!(install(&a, &env).0, 0);
    let flatpak_dir = tmp
        .path()
        .join("home/.var/app/org.chromium.Chromium/config/chromium/NativeMessagingHosts");
    let mut flat = args();
    flat.target_dir = Some(flatpak_dir.clone());
    assert_eq!(install(&flat, &env).0, 0);
    // Not ours: another host's manifest under our name, and a manifest pointing elsewhere.
    let chrome_dir = tmp
        .path()
        .join("home/.config/google-chrome/NativeMessagingHosts");
    std::fs::create_dir_all(&chrome_dir).unwrap();
    std::fs::write(
        chrome_dir.join(MANIFEST),
        r#"{"name": "org.micoff.host", "path": "/usr/bin/something-else", "type": "stdio"}"#,
    )
    .unwrap();
    let brave_dir = tmp
        .path()
        .join("home/.config/BraveSoftware/Brave-Browser/NativeMessagingHosts");
    std::fs::create_dir_all(&brave_dir).unwrap();
    std::fs::write(brave_dir.join(MANIFEST), "not json").unwrap();

    let (code, out) = install(&uninstall_all(), &env);
    assert_eq!(code, 0, "{out}");
    assert_eq!(out.matches(" removed").count(), 4, "{out}");
    assert_eq!(out.matches("left alone, not ours").count(), 2, "{out}");
    assert!(!out.contains("not present"), "{out}");
    for gone in [
        tmp.path()
            .join("home/.config/microsoft-edge/NativeMessagingHosts"),
        tmp.path().join("home/.config/vivaldi/NativeMessagingHosts"),
        tmp.path().join("home/.mozilla/native-messaging-hosts"),
        flatpak_dir,
    ] {
        assert!(!gone.join(MANIFEST).exists(), "{}", gone.display());
    }
    assert!(chrome_dir.join(MANIFEST).exists());
    assert!(brave_dir.join(MANIFEST).exists());
}

#[test]
fn system_and_target_dir() {
    let (tmp, env) = temp_env();
    let mut a = args();
    a.browsers = vec![Browser::Chromium, Browser::Firefox, Browser::Vivaldi];
    a.system = true;
    let (code, out) = install(&a, &env);
    // Two written, Vivaldi cannot be: partial.
    assert_eq!(code, 3, "{out}");
    assert!(manifest_in(
        &tmp,
        "root/etc/chromium/native-messaging-hosts"
    ));
    assert!(manifest_in(
        &tmp,
        "root/usr/lib/mozilla/native-messaging-hosts"
    ));
    assert!(
        out.contains("Vivaldi: has no system-wide manifest folder; install it per user"),
        "{out}"
    );

    // Only impossible browsers named: a usage error, and no "no browser found" (one was named).
    for browser in [Browser::Vivaldi, Browser::Brave] {
        let mut a = args();
        a.browsers = vec![browser];
        a.system = true;
        let (code, out) = install(&a, &env);
        assert_eq!(code, 2, "{out}");
        assert!(!out.contains("no supported browser found"), "{out}");
        assert!(out.contains("without --system"), "{out}");
        // Removing from a folder that does not exist: nothing to do.
        a.uninstall = true;
        let (code, out) = install(&a, &env);
        assert_eq!(code, 0, "{out}");
    }

    // --system --uninstall sweeps the system folders (Firefox's lib64 one too).
    let lib64 = tmp
        .path()
        .join("root/usr/lib64/mozilla/native-messaging-hosts");
    std::fs::create_dir_all(&lib64).unwrap();
    std::fs::copy(
        tmp.path()
            .join("root/usr/lib/mozilla/native-messaging-hosts")
            .join(MANIFEST),
        lib64.join(MANIFEST),
    )
    .unwrap();
    let mut a = uninstall_all();
    a.system = true;
    let (code, out) = install(&a, &env);
    assert_eq!(code, 0, "{out}");
    assert_eq!(out.matches(" removed").count(), 3, "{out}");
    assert!(!lib64.join(MANIFEST).exists());

    let mut a = args();
    a.target_dir = Some(tmp.path().join("profile/NativeMessagingHosts"));
    let (code, _) = install(&a, &env);
    assert_eq!(code, 0);
    let text = std::fs::read_to_string(
        tmp.path()
            .join("profile/NativeMessagingHosts")
            .join(MANIFEST),
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

/// A symlink planted at the temporary name the installer used to pick
/// (`.<name>.tmp-<pid>`) is never followed: its target is left alone.
#[test]
fn a_symlink_planted_at_a_temporary_name_is_not_followed() {
    let (tmp, env) = temp_env();
    let dir = tmp.path().join("hosts");
    std::fs::create_dir_all(&dir).unwrap();
    let victim = tmp.path().join("victim");
    std::fs::write(&victim, "precious\n").unwrap();
    for name in [
        format!(".{MANIFEST}.tmp-{}", std::process::id()),
        format!(".{MANIFEST}.micoff-tmp-{}", std::process::id()),
    ] {
        std::os::unix::fs::symlink(&victim, dir.join(name)).unwrap();
    }
    let mut a = args();
    a.target_dir = Some(dir.clone());
    let (code, out) = install(&a, &env);
    assert_eq!(code, 0, "{out}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
    assert!(std::fs::read_to_string(dir.join(MANIFEST))
        .unwrap()
        .contains("micoff-host"));
}

/// A manifest that is a symlink (dotfiles) is written through the link: the
/// link stays a link pointing where it pointed.
#[test]
fn a_symlinked_manifest_is_written_through_the_link() {
    let (tmp, env) = temp_env();
    let dir = tmp.path().join("hosts");
    let dotfiles = tmp.path().join("dotfiles");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::create_dir_all(&dotfiles).unwrap();
    let real = dotfiles.join(MANIFEST);
    std::fs::write(&real, "{}\n").unwrap();
    let link = dir.join(MANIFEST);
    std::os::unix::fs::symlink("../dotfiles/org.micoff.host.json", &link).unwrap();
    let mut a = args();
    a.target_dir = Some(dir.clone());
    let (code, out) = install(&a, &env);
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        std::fs::read_link(&link).unwrap(),
        Path::new("../dotfiles/org.micoff.host.json")
    );
    assert!(std::fs::read_to_string(&real)
        .unwrap()
        .contains(support::host()));
}

/// `--uninstall` leaves alone a manifest of ours the user edited since (here:
/// a second allowed origin), says so, and exits 3.
#[test]
fn uninstall_leaves_a_manifest_the_user_edited() {
    let (tmp, env) = temp_env();
    let dir = tmp.path().join("hosts");
    let mut a = args();
    a.target_dir = Some(dir.clone());
    let (code, out) = install(&a, &env);
    assert_eq!(code, 0, "{out}");
    let path = dir.join(MANIFEST);
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    v["allowed_origins"]
        .as_array_mut()
        .unwrap()
        .push("chrome-extension://abcdefghijklmnopabcdefghijklmnop/".into());
    let edited = serde_json::to_string_pretty(&v).unwrap();
    std::fs::write(&path, &edited).unwrap();
    a.uninstall = true;
    let (code, out) = install(&a, &env);
    assert_eq!(code, 3, "{out}");
    assert!(out.contains("changed since micoff wrote it"), "{out}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), edited);
    // Unedited (apart from the description, which changes between versions): removed.
    a.uninstall = false;
    std::fs::remove_file(&path).unwrap();
    install(&a, &env);
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replace("micoff native host", "an older description");
    std::fs::write(&path, text).unwrap();
    a.uninstall = true;
    let (code, out) = install(&a, &env);
    assert_eq!(code, 0, "{out}");
    assert!(!path.exists());
}

#[test]
fn install_prints_the_extension_steps_it_cannot_do() {
    let (_tmp, env) = temp_env();
    let mut a = args();
    a.browsers = vec![Browser::Chromium];
    let (code, out) = install(&a, &env);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("chrome://extensions"), "{out}");
    assert!(!out.contains("addons.mozilla.org"), "{out}");
    a.browsers = vec![Browser::Firefox];
    let (_, out) = install(&a, &env);
    assert!(out.contains("addons.mozilla.org"), "{out}");
    assert!(
        out.contains("--firefox-xpi <micoff-<version>.xpi>"),
        "{out}"
    );
    assert!(!out.contains("chrome://extensions"), "{out}");
}

// ---- --chromium-crx ---------------------------------------------------------------------------

use support::crx;

use micoff_install::chromium::crx::inspect;
use micoff_install::chromium::external::CRX_NAME;
use micoff_native::CHROME_EXTENSION_ID;

#[test]
fn crx_id_and_version_are_read_from_the_header_and_the_zip() {
    let key = crx::micoff_public_key();
    for deflate in [true, false] {
        let info = inspect(&crx::crx(&key, &key, "1.2.3", deflate)).unwrap();
        assert_eq!(info.id, CHROME_EXTENSION_ID);
        assert_eq!(info.version, "1.2.3");
    }
    let other = b"another key".to_vec();
    assert_ne!(
        inspect(&crx::crx(&other, &other, "1", true)).unwrap().id,
        CHROME_EXTENSION_ID
    );
    // A crx_id that is no key's hash, a zip, something truncated: errors, never a guess.
    let e = inspect(&crx::crx(&other, &key, "1", true)).unwrap_err();
    assert!(e.contains("no RSA key"), "{e}");
    assert!(inspect(b"PK\x03\x04").unwrap_err().contains("not a crx"));
    let good = crx::crx(&key, &key, "1", true);
    assert!(inspect(&good[..good.len() - 30]).is_err());
}

fn crx_env(tmp: &Path) -> (InstallEnv, PathBuf) {
    let env = env(tmp);
    let key = crx::micoff_public_key();
    let source = tmp.join("dist/micoff-0.1.0.crx");
    std::fs::create_dir_all(source.parent().unwrap()).unwrap();
    std::fs::write(&source, crx::crx(&key, &key, "0.1.0", true)).unwrap();
    (env, source)
}

/// The exit code, and what it wrote to stdout then to stderr (its error lines).
fn install_all(a: &InstallArgs, env: &InstallEnv) -> (i32, String) {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = micoff_install::run(a, env, &mut out, &mut err);
    out.extend(err);
    (code, String::from_utf8(out).unwrap())
}

#[test]
fn chromium_crx_per_user_install_is_idempotent_and_uninstall_removes_only_ours() {
    let tmp = tempfile::tempdir().unwrap();
    let (env, source) = crx_env(tmp.path());
    let json = tmp
        .path()
        .join("home/.config/chromium/External Extensions")
        .join(format!("{CHROME_EXTENSION_ID}.json"));
    let copy = tmp.path().join("home/.local/share/micoff").join(CRX_NAME);
    let mut a = args();
    a.browsers = vec![Browser::Chromium];
    a.chromium_crx = Some(Some(source.clone()));

    a.dry_run = true;
    let (code, out) = install_all(&a, &env);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("would be written"), "{out}");
    assert!(!json.exists() && !copy.exists());

    a.dry_run = false;
    let (code, out) = install_all(&a, &env);
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        std::fs::read(&copy).unwrap(),
        std::fs::read(&source).unwrap()
    );
    let entry: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(
        entry,
        serde_json::json!({"external_crx": copy.to_str().unwrap(), "external_version": "0.1.0"})
    );
    assert!(out.contains("enabled, no prompt"), "{out}");
    assert!(!out.contains("chrome://extensions"), "{out}");
    let (code, out) = install_all(&a, &env);
    assert_eq!(code, 0, "{out}");
    assert_eq!(out.matches("unchanged").count(), 3, "{out}");

    // Uninstall without naming a crx: both go, and only those.
    let u = uninstall_chromium_crx();
    let (code, out) = install_all(&u, &env);
    assert_eq!(code, 0, "{out}");
    assert!(!json.exists() && !copy.exists(), "{out}");
    assert!(source.exists());
    let (code, out) = install_all(&u, &env);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("nothing of micoff's found"), "{out}");

    // An entry for micoff's id that the user wrote (another crx): never overwritten or removed.
    std::fs::create_dir_all(json.parent().unwrap()).unwrap();
    let theirs = "{\"external_crx\": \"/opt/mine.crx\", \"external_version\": \"9\"}\n";
    std::fs::write(&json, theirs).unwrap();
    let (code, out) = install_all(&a, &env);
    assert_eq!(code, 3, "{out}");
    assert!(out.contains("did not write"), "{out}");
    let (code, out) = install_all(&u, &env);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("left alone"), "{out}");
    assert_eq!(std::fs::read_to_string(&json).unwrap(), theirs);
}

#[test]
fn chromium_crx_of_another_key_is_installed_when_it_is_micoffs_and_its_id_allowed_until_uninstall()
{
    let tmp = tempfile::tempdir().unwrap();
    let (env, _) = crx_env(tmp.path());
    let ext = tmp.path().join("home/.config/chromium/External Extensions");
    let manifest = tmp
        .path()
        .join("home/.config/chromium/NativeMessagingHosts/org.micoff.host.json");
    let origins = || -> serde_json::Value {
        serde_json::from_str::<serde_json::Value>(&std::fs::read_to_string(&manifest).unwrap())
            .unwrap()["allowed_origins"]
            .clone()
    };
    let other = b"this machine's local key".to_vec();
    let mut a = args();
    a.browsers = vec![Browser::Chromium];

    // Not micoff's (another name, another key): one error line saying what to give, nothing written.
    let foreign = tmp.path().join("other.crx");
    std::fs::write(
        &foreign,
        crx::crx_named(&other, &other, "1.0", true, "other"),
    )
    .unwrap();
    a.chromium_crx = Some(Some(foreign));
    let (code, out) = install_all(&a, &env);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("not micoff's extension"), "{out}");
    assert!(out.contains("dist/micoff-<version>.crx"), "{out}");
    assert!(!tmp.path().join("home/.config/chromium").exists(), "{out}");

    // micoff signed with another key: installed under that key's id, which the manifest allows.
    let source = tmp.path().join("local.crx");
    std::fs::write(&source, crx::crx(&other, &other, "2.0", false)).unwrap();
    let other_id = inspect(&std::fs::read(&source).unwrap()).unwrap().id;
    assert_ne!(other_id, CHROME_EXTENSION_ID);
    a.chromium_crx = Some(Some(source));
    let (code, out) = install_all(&a, &env);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("note: ") && out.contains(&other_id), "{out}");
    assert!(ext.join(format!("{other_id}.json")).is_file());
    let both = serde_json::json!([
        format!("chrome-extension://{CHROME_EXTENSION_ID}/"),
        format!("chrome-extension://{other_id}/")
    ]);
    assert_eq!(origins(), both);
    // The host answers what the crx copy says (the one home of the local id).
    let data_home = tmp.path().join("home/.local/share");
    assert_eq!(
        micoff_install::chromium::external::local_ids(&data_home, &tmp.path().join("root")),
        vec![other_id.clone()]
    );
    // A later install without the crx keeps the local id allowed.
    a.chromium_crx = None;
    let (code, out) = install_all(&a, &env);
    assert_eq!(code, 0, "{out}");
    assert_eq!(origins(), both, "{out}");

    // A crx of yet another key (a new local key) replaces the copy: the old entry goes, the
    // manifest allows the new id instead.
    let newer = tmp.path().join("newer.crx");
    let third = b"a new local key".to_vec();
    std::fs::write(&newer, crx::crx(&third, &third, "2.1", true)).unwrap();
    let third_id = inspect(&std::fs::read(&newer).unwrap()).unwrap().id;
    a.chromium_crx = Some(Some(newer));
    let (code, out) = install_all(&a, &env);
    assert_eq!(code, 0, "{out}");
    assert!(!ext.join(format!("{other_id}.json")).exists(), "{out}");
    assert!(ext.join(format!("{third_id}.json")).is_file(), "{out}");
    assert_eq!(
        origins(),
        serde_json::json!([
            format!("chrome-extension://{CHROME_EXTENSION_ID}/"),
            format!("chrome-extension://{third_id}/")
        ])
    );
    let other_id = third_id;

    // Uninstall: the entry, the copy and the manifest (the local id with it) go.
    let (code, out) = install_all(&uninstall_chromium_crx(), &env);
    assert_eq!(code, 0, "{out}");
    assert!(!ext.join(format!("{other_id}.json")).exists(), "{out}");
    assert!(!manifest.exists(), "{out}");
    assert!(
        micoff_install::chromium::external::local_ids(&data_home, &tmp.path().join("root"))
            .is_empty()
    );
}

#[test]
fn an_id_the_user_added_to_the_manifest_keeps_it_from_install_uninstall() {
    let tmp = tempfile::tempdir().unwrap();
    let (env, source) = crx_env(tmp.path());
    let manifest = tmp
        .path()
        .join("home/.config/chromium/NativeMessagingHosts/org.micoff.host.json");
    let mut a = args();
    a.browsers = vec![Browser::Chromium];
    a.chromium_crx = Some(Some(source));
    let (code, out) = install_all(&a, &env);
    assert_eq!(code, 0, "{out}");
    let text = std::fs::read_to_string(&manifest).unwrap();
    let mine = text.replace(
        &format!("\"chrome-extension://{CHROME_EXTENSION_ID}/\""),
        &format!(
            "\"chrome-extension://{CHROME_EXTENSION_ID}/\", \"chrome-extension://{}/\"",
            "a".repeat(32)
        ),
    );
    assert_ne!(mine, text);
    std::fs::write(&manifest, &mine).unwrap();
    let (_, out) = install_all(&uninstall_chromium_crx(), &env);
    assert!(out.contains("left alone"), "{out}");
    assert_eq!(std::fs::read_to_string(&manifest).unwrap(), mine);
}

#[test]
fn chromium_crx_system_wide_goes_next_to_chromiums_binary() {
    let tmp = tempfile::tempdir().unwrap();
    let (env, source) = crx_env(tmp.path());
    let root = tmp.path().join("root");
    let mut a = args();
    a.browsers = vec![Browser::Chromium];
    a.system = true;
    a.chromium_crx = Some(Some(source));
    // No Chromium binary folder known: Chromium's standalone folder.
    let (code, out) = install_all(&a, &env);
    assert_eq!(code, 0, "{out}");
    let standalone = root
        .join("usr/share/chromium/extensions")
        .join(format!("{CHROME_EXTENSION_ID}.json"));
    assert!(standalone.is_file(), "{out}");
    assert!(root.join("usr/local/share/micoff").join(CRX_NAME).is_file());
    // Debian's layout: <binary folder>/extensions (its wrapper misreads /usr/share/chromium/extensions).
    executable(&root.join("usr/lib/chromium/chromium"));
    let (code, out) = install_all(&a, &env);
    assert_eq!(code, 0, "{out}");
    assert!(root
        .join("usr/lib/chromium/extensions")
        .join(format!("{CHROME_EXTENSION_ID}.json"))
        .is_file());
    assert!(out.contains("for every user"), "{out}");
}

/// With micoff-host's Debian package installed, a per-user install says first which browsers the
/// package's system manifests already serve, and what a per-user one is still for.
#[test]
fn a_per_user_install_says_what_the_package_already_covers() {
    use micoff_install::manifest::content::manifest_json;
    let (tmp, env) = temp_env();
    let host = Path::new(support::host());
    for b in [Browser::Chromium, Browser::Firefox, Browser::Brave] {
        executable(&env.root.join(b.install_paths().next().unwrap()));
    }
    // The package's files: a link into /usr/share/micoff-host for Chromium, a file dpkg lists
    // for Firefox.
    let share = env
        .root
        .join("usr/share/micoff-host/native-messaging-hosts/chromium")
        .join(MANIFEST);
    std::fs::create_dir_all(share.parent().unwrap()).unwrap();
    std::fs::write(&share, manifest_json(false, host, &[])).unwrap();
    let chromium = env.root.join("etc/chromium/native-messaging-hosts");
    std::fs::create_dir_all(&chromium).unwrap();
    std::os::unix::fs::symlink(&share, chromium.join(MANIFEST)).unwrap();
    let firefox = env.root.join("usr/lib/mozilla/native-messaging-hosts");
    std::fs::create_dir_all(&firefox).unwrap();
    std::fs::write(firefox.join(MANIFEST), manifest_json(true, host, &[])).unwrap();
    let dpkg = env.root.join("var/lib/dpkg/info");
    std::fs::create_dir_all(&dpkg).unwrap();
    std::fs::write(
        dpkg.join("micoff-host.list"),
        format!("/usr/lib/mozilla/native-messaging-hosts/{MANIFEST}\n"),
    )
    .unwrap();
    let dry = InstallArgs {
        dry_run: true,
        ..args()
    };
    let (code, out) = install(&dry, &env);
    assert_eq!(code, 0, "{out}");
    // The first line, but for the warning a build in a temporary folder gets (CARGO_TARGET_DIR
    // under /tmp: the stand-in host is in it).
    let first = out
        .lines()
        .find(|l| !l.contains("is in a temporary folder"))
        .unwrap();
    assert_eq!(
        first,
        format!(
            "note: the micoff-host package already gives Chromium, Firefox the host through {}, {}; \
             a per-user install is only needed for Brave (the package has no manifest for it that \
             works), or a micoff-host other than the package's (a user's manifest comes first for \
             the browser, so it replaces the package's for this user)",
            chromium.join(MANIFEST).display(),
            firefox.join(MANIFEST).display()
        ),
        "{out}"
    );
    assert!(
        out.contains("would be written") && !manifest_in(&tmp, "home/.config/chromium"),
        "{out}"
    );
    // Without the package, nothing is said about it.
    std::fs::remove_file(chromium.join(MANIFEST)).unwrap();
    std::fs::remove_file(firefox.join(MANIFEST)).unwrap();
    let (_, out) = install(&dry, &env);
    assert!(!out.contains("package already gives"), "{out}");
}
