//! `micoff-host install` checks everything it is given before it writes anything (a host that is
//! not an executable micoff-host, a crx or xpi that is not micoff's, a profile that is not one),
//! reads only regular files where it writes (a FIFO or a link to /dev/zero at a manifest's name,
//! at user.js), shows in a dry run what it would write as a diff with the warnings, and leaves the
//! files micoff-host's Debian package owns alone.

#![allow(clippy::unwrap_used)] // tests may unwrap (house style)

mod support;

use support::{env, install, tree};

use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use micoff_install::{Browser, InstallArgs};
use micoff_native::FIREFOX_EXTENSION_ID;

const MANIFEST: &str = "org.micoff.host.json";

fn chromium_and_firefox() -> InstallArgs {
    InstallArgs {
        browsers: vec![Browser::Chromium, Browser::Firefox],
        ..support::install_args()
    }
}

/// A FIFO at `path`.
fn fifo(path: &Path) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

#[test]
fn a_host_path_that_is_not_an_executable_micoff_host_is_refused_and_nothing_is_written() {
    let tmp = tempfile::tempdir().unwrap();
    let env = env(tmp.path());
    std::fs::create_dir_all(&env.home).unwrap();
    let d = tmp.path().join("hosts");
    std::fs::create_dir_all(&d).unwrap();
    // A script named micoff-host, executable.
    let script = d.join("script/micoff-host");
    std::fs::create_dir_all(script.parent().unwrap()).unwrap();
    std::fs::write(&script, "#!/bin/sh\necho micoff-host 0.1.0\n").unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    // Another program, named micoff-host.
    let other = d.join("other/micoff-host");
    std::fs::create_dir_all(other.parent().unwrap()).unwrap();
    symlink("/bin/true", &other).unwrap();
    // The real host, renamed.
    let renamed = d.join("mh");
    symlink(support::host(), &renamed).unwrap();
    // The real host's content, not executable.
    let plain = d.join("plain/micoff-host");
    std::fs::create_dir_all(plain.parent().unwrap()).unwrap();
    std::fs::copy(support::host(), &plain).unwrap();
    std::fs::set_permissions(&plain, std::fs::Permissions::from_mode(0o644)).unwrap();
    // A folder, and a FIFO, named micoff-host.
    let folder = d.join("folder/micoff-host");
    std::fs::create_dir_all(&folder).unwrap();
    let pipe = d.join("fifo/micoff-host");
    fifo(&pipe);
    let before = tree(tmp.path());
    for (host, says) in [
        (
            d.join("gone/micoff-host"),
            "does not exist (moved or renamed?)",
        ),
        (renamed, "is not named micoff-host"),
        (script, "is not a program binary"),
        (other, "carries no micoff-host ident"),
        (plain, "is not executable"),
        (folder, "is a folder"),
        (pipe, "is a FIFO"),
    ] {
        let mut a = chromium_and_firefox();
        a.host_path = Some(host.clone());
        let started = Instant::now();
        let (code, out) = install(&a, &env);
        assert!(started.elapsed() < Duration::from_secs(10));
        assert_eq!(code, 2, "{}: {out}", host.display());
        assert!(out.contains(says), "{}: {out}", host.display());
        assert!(out.contains("nothing written"), "{out}");
        assert_eq!(tree(tmp.path()), before, "{}: {out}", host.display());
    }
    // The real host passes.
    let (code, out) = install(&chromium_and_firefox(), &env);
    assert_eq!(code, 0, "{out}");
}

#[test]
fn a_crx_or_xpi_that_is_not_micoffs_is_refused_before_the_manifests_are_written() {
    let tmp = tempfile::tempdir().unwrap();
    let env = env(tmp.path());
    std::fs::create_dir_all(&env.home).unwrap();
    let not_a_crx = tmp.path().join("x.crx");
    std::fs::write(&not_a_crx, b"PK\x03\x04 a zip, not a crx").unwrap();
    let pipe = tmp.path().join("pipe.crx");
    fifo(&pipe);
    let not_an_xpi = tmp.path().join("x.xpi");
    std::fs::write(&not_an_xpi, b"nothing").unwrap();
    let before = tree(tmp.path());
    for (crx, says) in [
        (not_a_crx, "not a crx"),
        (pipe, "is a FIFO"),
        (tmp.path().join("none.crx"), "no such file"),
    ] {
        let mut a = chromium_and_firefox();
        a.chromium_crx = Some(Some(crx.clone()));
        let (code, out) = install(&a, &env);
        assert_eq!(code, 2, "{out}");
        assert!(out.contains(says), "{}: {out}", crx.display());
        assert_eq!(tree(tmp.path()), before, "{out}");
    }
    let mut a = chromium_and_firefox();
    a.firefox_xpi = Some(Some(not_an_xpi));
    let (code, out) = install(&a, &env);
    assert_eq!(code, 2, "{out}");
    assert_eq!(tree(tmp.path()), before, "{out}");
}

/// Runs `f` on its own thread and returns what it returns, or fails the test when it is not done in
/// 10 s: a reader blocked on one of the FIFOs `fifos` is then released (a writer opens and closes
/// it) so the test ends instead of hanging.
fn within<T: Send + 'static>(fifos: &[PathBuf], f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(Duration::from_secs(10)) {
        Ok(v) => v,
        Err(_) => {
            for f in fifos {
                let _ = std::fs::OpenOptions::new().write(true).open(f);
            }
            panic!("hung on a FIFO for 10 s");
        }
    }
}

#[test]
fn whatever_sits_at_a_manifests_name_is_read_only_when_it_is_a_regular_file() {
    // Before: a FIFO there hung install (the test fails after 10 s), a link to /dev/zero grew it
    // without bound.
    let tmp = tempfile::tempdir().unwrap();
    let env = env(tmp.path());
    let chromium = env
        .home
        .join(".config/chromium/NativeMessagingHosts")
        .join(MANIFEST);
    let firefox = env
        .home
        .join(".mozilla/native-messaging-hosts")
        .join(MANIFEST);
    fifo(&chromium);
    for uninstall in [false, true] {
        let mut a = chromium_and_firefox();
        a.browsers = vec![Browser::Chromium];
        a.uninstall = uninstall;
        let env = env.clone();
        let (code, out) = within(std::slice::from_ref(&chromium), move || install(&a, &env));
        assert_ne!(code, 0, "{out}");
        assert!(out.contains("is a FIFO, not a regular file"), "{out}");
    }
    std::fs::create_dir_all(firefox.parent().unwrap()).unwrap();
    symlink("/dev/zero", &firefox).unwrap();
    for uninstall in [false, true] {
        let mut a = chromium_and_firefox();
        a.browsers = vec![Browser::Firefox];
        a.uninstall = uninstall;
        let env = env.clone();
        let (code, out) = within(&[], move || install(&a, &env));
        assert_ne!(code, 0, "{out}");
        assert!(
            out.contains("is a character device, not a regular file"),
            "{out}"
        );
    }
    // Both are still what they were.
    assert!(std::fs::symlink_metadata(&firefox)
        .unwrap()
        .file_type()
        .is_symlink());
}

#[test]
fn a_user_js_that_is_not_a_regular_file_fails_that_profile_without_hanging() {
    let tmp = tempfile::tempdir().unwrap();
    let env = env(tmp.path());
    let profile = support::firefox_profile(&env.home);
    std::fs::write(profile.join("prefs.js"), "").unwrap();
    let user_js = profile.join("user.js");
    fifo(&user_js);
    let mut a = support::install_args();
    a.browsers = vec![Browser::Firefox];
    a.firefox_release = true;
    let (code, out) = within(&[user_js], move || install(&a, &env));
    assert_ne!(code, 0, "{out}");
    assert!(
        out.contains("user.js FAILED") && out.contains("FIFO"),
        "{out}"
    );
}

#[test]
fn a_dry_run_shows_the_json_and_user_js_it_would_write_and_warns() {
    let tmp = tempfile::tempdir().unwrap();
    let env = env(tmp.path());
    let profile = support::firefox_profile(&env.home);
    std::fs::write(profile.join("user.js"), "user_pref(\"mine\", 1);\n").unwrap();
    let xpi = tmp.path().join("micoff.xpi");
    support::write_micoff_xpi(&xpi);
    // The host in a temporary folder: a link named micoff-host under the test's /tmp folder.
    let host = tmp.path().join("micoff-host");
    symlink(support::host(), &host).unwrap();
    let mut a = support::install_args();
    a.browsers = vec![Browser::Firefox];
    a.host_path = Some(host.clone());
    a.firefox_release = true;
    a.firefox_xpi = Some(Some(xpi));
    a.dry_run = true;
    let before = tree(tmp.path());
    let (code, out) = install(&a, &env);
    assert_eq!(code, 0, "{out}");
    assert_eq!(tree(tmp.path()), before, "a dry run writes nothing: {out}");
    let ff = env
        .home
        .join(".mozilla/native-messaging-hosts")
        .join(MANIFEST);
    // The manifest, as a diff against nothing.
    assert!(
        out.contains(&format!(
            "--- /dev/null\n+++ {} (as micoff would write it)\n",
            ff.display()
        )),
        "{out}"
    );
    assert!(
        out.contains(&format!("+  \"path\": \"{}\",", host.display())),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "+  \"allowed_extensions\": [\n+    \"{FIREFOX_EXTENSION_ID}\""
        )),
        "{out}"
    );
    // user.js: the user's line kept as context, micoff's block added.
    let user_js = profile.join("user.js");
    assert!(
        out.contains(&format!(
            "--- {0}\n+++ {0} (as micoff would write it)\n",
            user_js.display()
        )),
        "{out}"
    );
    assert!(
        out.contains(" user_pref(\"mine\", 1);\n+// micoff: begin"),
        "{out}"
    );
    assert!(
        out.contains("+user_pref(\"xpinstall.signatures.required\", false);"),
        "{out}"
    );
    assert!(
        out.contains(
            "+user_pref(\"media.getusermedia.microphone.off_while_disabled.enabled\", true);"
        ),
        "{out}"
    );
    // The warnings: signatures off, a host in a temporary folder.
    assert!(out.contains("warning: ") && out.contains("xpinstall.signatures.required = false turns off Firefox's check of add-on signatures"), "{out}");
    assert!(out.contains("is in a temporary folder (/tmp)"), "{out}");
}

#[test]
fn system_manifests_micoff_hosts_package_owns_are_never_written_over_or_removed() {
    let tmp = tempfile::tempdir().unwrap();
    let env = env(tmp.path());
    let root = &env.root;
    // What the .deb installs: /etc/chromium/... a link to /usr/share/micoff-host/...; Firefox's
    // manifest a file dpkg lists.
    let share = root
        .join("usr/share/micoff-host/native-messaging-hosts/chromium")
        .join(MANIFEST);
    std::fs::create_dir_all(share.parent().unwrap()).unwrap();
    std::fs::write(
        &share,
        micoff_install::manifest::content::manifest_json(
            false,
            Path::new("/usr/bin/micoff-host"),
            &[],
        ),
    )
    .unwrap();
    let chromium = root
        .join("etc/chromium/native-messaging-hosts")
        .join(MANIFEST);
    std::fs::create_dir_all(chromium.parent().unwrap()).unwrap();
    symlink(&share, &chromium).unwrap();
    let firefox = root
        .join("usr/lib/mozilla/native-messaging-hosts")
        .join(MANIFEST);
    std::fs::create_dir_all(firefox.parent().unwrap()).unwrap();
    let ff_text = micoff_install::manifest::content::manifest_json(
        true,
        Path::new("/usr/bin/micoff-host"),
        &[],
    );
    std::fs::write(&firefox, &ff_text).unwrap();
    std::fs::create_dir_all(root.join("var/lib/dpkg/info")).unwrap();
    std::fs::write(
        root.join("var/lib/dpkg/info/micoff-host.list"),
        "/usr/lib/mozilla/native-messaging-hosts/org.micoff.host.json\n",
    )
    .unwrap();
    let share_text = std::fs::read(&share).unwrap();
    for uninstall in [false, true] {
        let mut a = chromium_and_firefox();
        a.system = true;
        a.uninstall = uninstall;
        let (code, out) = install(&a, &env);
        assert_eq!(code, 0, "{out}");
        assert_eq!(
            out.matches("the package puts it there and takes it away")
                .count(),
            2,
            "{out}"
        );
        assert_eq!(std::fs::read(&share).unwrap(), share_text);
        assert!(std::fs::symlink_metadata(&chromium)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read_to_string(&firefox).unwrap(), ff_text);
    }
}

#[test]
fn a_packager_names_where_the_package_puts_the_host_in_a_staging_folder_only() {
    let tmp = tempfile::tempdir().unwrap();
    let env = env(tmp.path());
    let stage = tmp.path().join("stage/chromium");
    let mut a = support::install_args();
    a.browsers = vec![Browser::Chromium];
    a.target_dir = Some(stage.clone());
    a.packaged_host_path = Some(PathBuf::from("/usr/bin/micoff-host"));
    let (code, out) = install(&a, &env);
    assert_eq!(code, 0, "{out}");
    let m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(stage.join(MANIFEST)).unwrap()).unwrap();
    assert_eq!(m["path"], "/usr/bin/micoff-host");
    a.packaged_host_path = Some(PathBuf::from("/usr/bin/mh"));
    let (code, out) = install(&a, &env);
    assert_eq!(code, 2, "{out}");
}

#[test]
fn a_newline_in_a_profile_path_cannot_forge_a_line_of_the_report() {
    // Before: the path was printed as it was, and its second half stood as a line of its own.
    let tmp = tempfile::tempdir().unwrap();
    let env = env(tmp.path());
    let profile = tmp.path().join("p\nFirefox: /etc/passwd removed");
    std::fs::create_dir_all(&profile).unwrap();
    std::fs::write(profile.join("prefs.js"), "").unwrap();
    let mut a = support::install_args();
    a.browsers = vec![Browser::Firefox];
    a.firefox_release = true;
    a.firefox_profiles = vec![profile];
    let (code, out) = install(&a, &env);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.lines().all(|l| !l.starts_with("Firefox: /etc/passwd")),
        "{out}"
    );
    assert!(
        out.contains("p\\nFirefox: /etc/passwd removed/user.js written"),
        "{out}"
    );
}
