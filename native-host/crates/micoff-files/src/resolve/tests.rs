//! Which links are followed: chains and loops, and every way of planting or redirecting one.

use std::fs;
use std::io;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::PathBuf;

use super::*;
use crate::test_support::names;
use crate::{is_symlink, remove, restore, write_atomic, write_existing};

#[test]
fn resolve_follows_chains_and_stops_loops() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a");
    let b = dir.path().join("b");
    symlink("b", &a).unwrap();
    symlink("c", &b).unwrap();
    let canonical = fs::canonicalize(dir.path()).unwrap();
    assert_eq!(resolve(&a).unwrap(), canonical.join("c"));
    let l1 = dir.path().join("l1");
    let l2 = dir.path().join("l2");
    symlink("l2", &l1).unwrap();
    symlink("l1", &l2).unwrap();
    assert!(resolve(&l1).is_err());
}

/// A dotfiles-style setup in a fresh temporary folder: `conf/x.conf -> ../dotfiles/x.conf`.
struct Dotfiles {
    dir: tempfile::TempDir,
}

impl Dotfiles {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        for d in ["conf", "dotfiles"] {
            fs::create_dir(dir.path().join(d)).unwrap();
            fs::set_permissions(dir.path().join(d), fs::Permissions::from_mode(0o755)).unwrap();
        }
        fs::write(dir.path().join("dotfiles/x.conf"), "theirs\n").unwrap();
        symlink("../dotfiles/x.conf", dir.path().join("conf/x.conf")).unwrap();
        Self { dir }
    }
    fn at(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }
    fn link(&self) -> PathBuf {
        self.at("conf/x.conf")
    }
    fn target(&self) -> PathBuf {
        self.at("dotfiles/x.conf")
    }
    /// Every way of writing through the link is refused with `needle` in the message, and
    /// the target and the link stay as they were.
    fn assert_refused(&self, needle: &str) {
        let backup = self.at("backup");
        fs::write(&backup, "backup\n").unwrap();
        for (what, r) in [
            ("write_atomic", write_atomic(&self.link(), b"ours\n", 0o644)),
            ("restore", restore(&backup, &self.link())),
            ("remove", remove(&self.link())),
            ("write_existing", write_existing(&self.link(), b"ours\n")),
        ] {
            let e = r.expect_err(what);
            assert_eq!(e.kind(), io::ErrorKind::PermissionDenied, "{what}: {e}");
            assert!(e.to_string().contains(needle), "{what}: {e}");
            assert!(e.to_string().contains("nothing written"), "{what}: {e}");
        }
        assert_eq!(fs::read(self.target()).unwrap(), b"theirs\n");
        assert!(is_symlink(&self.link()));
        assert_eq!(names(&self.at("dotfiles")), ["x.conf"]);
        assert_eq!(names(&self.at("conf")), ["x.conf"]);
        fs::remove_file(backup).unwrap();
    }
    fn assert_followed(&self) {
        write_atomic(&self.link(), b"ours\n", 0o644).unwrap();
        assert_eq!(fs::read(self.target()).unwrap(), b"ours\n");
        assert!(is_symlink(&self.link()));
    }
}

// Tests that plant files as another user need root (chown): they are `#[ignore]`d, so that a
// run without root shows them as ignored rather than passing them untested, and run as root
// with `cargo test -- --include-ignored` (npm test does, as root; under CI an ignored test
// fails the run).

/// A uid that is neither root nor whoever runs the tests (`nobody`).
const OTHER_UID: u32 = 65534;

#[test]
fn a_link_in_a_folder_others_can_write_is_not_followed() {
    for mode in [0o777, 0o1777, 0o757] {
        let d = Dotfiles::new();
        fs::set_permissions(d.at("conf"), fs::Permissions::from_mode(mode)).unwrap();
        d.assert_refused("can be written by everyone");
    }
    // The same folder, closed again: followed (the control).
    let d = Dotfiles::new();
    d.assert_followed();
}

#[test]
fn a_link_into_a_folder_others_can_write_is_not_followed() {
    for mode in [0o777, 0o1777] {
        let d = Dotfiles::new();
        fs::set_permissions(d.at("dotfiles"), fs::Permissions::from_mode(mode)).unwrap();
        d.assert_refused("can be written by everyone");
    }
}

#[test]
#[ignore = "needs root to chown files to another user: cargo test -- --include-ignored as root (npm test does)"]
fn a_link_planted_by_another_user_is_not_followed() {
    let d = Dotfiles::new();
    std::os::unix::fs::lchown(d.link(), Some(OTHER_UID), None).unwrap();
    d.assert_refused(&format!("owned by uid {OTHER_UID}, not by root"));
    // A link further down the chain, planted by someone else, is refused too.
    let d = Dotfiles::new();
    fs::rename(d.target(), d.at("dotfiles/real.conf")).unwrap();
    symlink("real.conf", d.target()).unwrap();
    std::os::unix::fs::lchown(d.target(), Some(OTHER_UID), None).unwrap();
    let e = write_atomic(&d.link(), b"ours\n", 0o644).unwrap_err();
    assert!(e.to_string().contains("on its way is owned by uid"), "{e}");
    assert_eq!(fs::read(d.at("dotfiles/real.conf")).unwrap(), b"theirs\n");
}

#[test]
#[ignore = "needs root to chown files to another user: cargo test -- --include-ignored as root (npm test does)"]
fn a_link_to_a_file_or_folder_of_another_user_is_not_followed() {
    let d = Dotfiles::new();
    std::os::unix::fs::chown(d.target(), Some(OTHER_UID), None).unwrap();
    d.assert_refused("the file it points to");
    // Their folder (mode 0755, so only they can write it): outside where a file of root's
    // may live.
    let d = Dotfiles::new();
    std::os::unix::fs::chown(d.at("dotfiles"), Some(OTHER_UID), None).unwrap();
    d.assert_refused(&format!("is owned by uid {OTHER_UID}, not by root"));
    // Any folder above it, too.
    let d = Dotfiles::new();
    fs::create_dir(d.at("theirs")).unwrap();
    fs::create_dir(d.at("theirs/mine")).unwrap();
    fs::write(d.at("theirs/mine/x.conf"), "theirs\n").unwrap();
    std::os::unix::fs::chown(d.at("theirs"), Some(OTHER_UID), None).unwrap();
    fs::remove_file(d.link()).unwrap();
    symlink("../theirs/mine/x.conf", d.link()).unwrap();
    let e = write_atomic(&d.link(), b"ours\n", 0o644).unwrap_err();
    assert!(e.to_string().contains("theirs is owned by uid"), "{e}");
    assert_eq!(fs::read(d.at("theirs/mine/x.conf")).unwrap(), b"theirs\n");
}

#[test]
#[ignore = "needs root to chown files to another user: cargo test -- --include-ignored as root (npm test does)"]
fn a_group_writable_folder_counts_as_safe_only_for_the_owners_private_group() {
    // root:root 0775 (root's own group, no other members): followed.
    let d = Dotfiles::new();
    assert!(
        is_private_group(0, 0),
        "root's group has other members here"
    );
    fs::set_permissions(d.at("conf"), fs::Permissions::from_mode(0o775)).unwrap();
    d.assert_followed();
    // The same folder handed to a shared group: refused.
    let d = Dotfiles::new();
    fs::set_permissions(d.at("conf"), fs::Permissions::from_mode(0o775)).unwrap();
    std::os::unix::fs::chown(d.at("conf"), None, Some(OTHER_UID)).unwrap();
    d.assert_refused("other members of its group");
}

/// A folder on the way is a link: `home/.config -> ../dotfiles/config`, the file written below it.
struct FolderLink {
    dir: tempfile::TempDir,
}

impl FolderLink {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        for d in ["home", "dotfiles", "dotfiles/config"] {
            fs::create_dir(dir.path().join(d)).unwrap();
            fs::set_permissions(dir.path().join(d), fs::Permissions::from_mode(0o755)).unwrap();
        }
        symlink("../dotfiles/config", dir.path().join("home/.config")).unwrap();
        Self { dir }
    }
    fn at(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }
    /// The file written through the folder link.
    fn file(&self) -> PathBuf {
        self.at("home/.config/chromium/NativeMessagingHosts/m.json")
    }
    fn assert_refused(&self, needle: &str) {
        let e = write_atomic(&self.file(), b"ours\n", 0o644).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::PermissionDenied, "{e}");
        assert!(e.to_string().contains(needle), "{e}");
        assert!(!self.at("dotfiles/config/chromium").exists());
    }
}

#[test]
fn a_folder_link_is_followed_when_it_is_the_users_in_safe_folders() {
    let d = FolderLink::new();
    write_atomic(&d.file(), b"ours\n", 0o644).unwrap();
    assert_eq!(
        fs::read(d.at("dotfiles/config/chromium/NativeMessagingHosts/m.json")).unwrap(),
        b"ours\n"
    );
    assert!(is_symlink(&d.at("home/.config")));
    let canonical = fs::canonicalize(d.at("dotfiles/config")).unwrap();
    assert_eq!(
        resolve(&d.file()).unwrap(),
        canonical.join("chromium/NativeMessagingHosts/m.json")
    );
}

#[test]
fn a_folder_link_in_a_folder_others_can_write_is_not_followed() {
    // Before the whole path was walked, only a link at the file itself was checked: this one was
    // followed and the file written wherever it led.
    for mode in [0o777, 0o1777] {
        let d = FolderLink::new();
        fs::set_permissions(d.at("home"), fs::Permissions::from_mode(mode)).unwrap();
        d.assert_refused("can be written by everyone");
    }
    // A folder link leading into a folder others can write.
    let d = FolderLink::new();
    fs::set_permissions(d.at("dotfiles/config"), fs::Permissions::from_mode(0o777)).unwrap();
    d.assert_refused("can be written by everyone");
}

#[test]
#[ignore = "needs root to chown files to another user: cargo test -- --include-ignored as root (npm test does)"]
fn a_folder_link_planted_by_another_user_is_not_followed() {
    let d = FolderLink::new();
    std::os::unix::fs::lchown(d.at("home/.config"), Some(OTHER_UID), None).unwrap();
    d.assert_refused(&format!("owned by uid {OTHER_UID}"));
    // A folder of theirs the link leads into.
    let d = FolderLink::new();
    std::os::unix::fs::chown(d.at("dotfiles/config"), Some(OTHER_UID), None).unwrap();
    d.assert_refused(&format!("is owned by uid {OTHER_UID}"));
}
