//! `micoff-host install` through the binary: what only its command line and process show (the
//! installer's own tests are micoff-install's).

#![allow(clippy::unwrap_used)] // tests may unwrap (house style)

use std::os::unix::fs::PermissionsExt;

const MANIFEST: &str = "org.micoff.host.json";

/// Manifests are 0644 (browsers run as the user; system folders are read by
/// everyone) whatever the umask of the shell that ran `install`.
#[test]
fn manifests_are_0644_under_umask_077() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("hosts");
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg("umask 077 && exec \"$0\" install --target-dir \"$1\"")
        .arg(env!("CARGO_BIN_EXE_micoff-host"))
        .arg(&dir)
        // micoff's record of what it wrote: in the test's folder, not the real ~/.local/state.
        .env("XDG_STATE_HOME", tmp.path().join("state"))
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    let mode = std::fs::metadata(dir.join(MANIFEST))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o644);
}

/// `--packaged-host-path` goes only into a staging folder: the command line requires --target-dir.
#[test]
fn a_packaged_host_path_without_a_target_dir_is_a_usage_error() {
    let tmp = tempfile::tempdir().unwrap();
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_micoff-host"))
        .args(["install", "--packaged-host-path", "/usr/bin/micoff-host"])
        .env("HOME", tmp.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(2));
}
