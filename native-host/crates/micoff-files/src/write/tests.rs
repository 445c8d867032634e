//! Writes: atomic with the exact mode, through links, copies never over anything, exact restores.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::PathBuf;

use super::*;
use crate::test_support::{mode, names};

#[test]
fn writes_atomically_with_the_exact_mode_and_leaves_no_temporary_file() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("a/b/x.conf");
    write_atomic(&p, b"one\n", 0o644).unwrap();
    assert_eq!(fs::read(&p).unwrap(), b"one\n");
    assert_eq!(mode(&p), 0o644);
    write_atomic(&p, b"two\n", 0o600).unwrap();
    assert_eq!(fs::read(&p).unwrap(), b"two\n");
    assert_eq!(mode(&p), 0o600);
    assert_eq!(names(p.parent().unwrap()), ["x.conf"]);
}

#[test]
fn the_mode_does_not_depend_on_the_umask() {
    // The umask is per process; the other tests here set every mode they check.
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("m.json");
    // SAFETY: umask only sets the process's file creation mask; restored right after.
    let old = unsafe { libc::umask(0o077) };
    let r = write_atomic(&p, b"{}\n", 0o644);
    // SAFETY: as above.
    unsafe { libc::umask(old) };
    r.unwrap();
    assert_eq!(mode(&p), 0o644);
}

#[test]
fn writes_through_a_symlink_and_the_link_stays() {
    let dir = tempfile::tempdir().unwrap();
    let dotfiles = dir.path().join("dotfiles");
    fs::create_dir(&dotfiles).unwrap();
    fs::write(dotfiles.join("x.conf"), "theirs\n").unwrap();
    let conf = dir.path().join("conf");
    fs::create_dir(&conf).unwrap();
    let link = conf.join("x.conf");
    symlink("../dotfiles/x.conf", &link).unwrap();
    write_atomic(&link, b"ours\n", 0o644).unwrap();
    assert!(is_symlink(&link));
    assert_eq!(
        fs::read_link(&link).unwrap(),
        PathBuf::from("../dotfiles/x.conf")
    );
    assert_eq!(fs::read(dotfiles.join("x.conf")).unwrap(), b"ours\n");
    assert_eq!(names(&dotfiles), ["x.conf"]);
    assert_eq!(names(&conf), ["x.conf"]);
    // A link into a folder that does not exist: refused, nothing created.
    let dangling = conf.join("y.conf");
    symlink(dir.path().join("nowhere/y.conf"), &dangling).unwrap();
    let e = write_atomic(&dangling, b"ours\n", 0o644).unwrap_err();
    assert!(e.to_string().contains("whose folder does not exist"), "{e}");
    assert!(!dir.path().join("nowhere").exists());
}

#[test]
fn copy_new_never_overwrites_and_never_follows_a_link() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    fs::write(&src, "data\n").unwrap();
    fs::set_permissions(&src, fs::Permissions::from_mode(0o640)).unwrap();
    let victim = dir.path().join("victim");
    fs::write(&victim, "precious\n").unwrap();
    let planted = dir.path().join("backup");
    symlink(&victim, &planted).unwrap();
    assert!(copy_new(&src, &planted).is_err());
    assert_eq!(fs::read(&victim).unwrap(), b"precious\n");
    let b = dir.path().join("backup2");
    copy_new(&src, &b).unwrap();
    assert_eq!(fs::read(&b).unwrap(), b"data\n");
    assert_eq!(mode(&b), 0o640);
    assert!(copy_new(&src, &b).is_err());
}

#[test]
fn restore_through_a_link_keeps_the_link_and_the_mode() {
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("real.conf");
    fs::write(&real, "ours\n").unwrap();
    let link = dir.path().join("x.conf");
    symlink(&real, &link).unwrap();
    let backup = dir.path().join("x.conf.bak");
    fs::write(&backup, "theirs\n").unwrap();
    fs::set_permissions(&backup, fs::Permissions::from_mode(0o600)).unwrap();
    restore(&backup, &link).unwrap();
    assert_eq!(fs::read_link(&link).unwrap(), real);
    assert_eq!(fs::read(&real).unwrap(), b"theirs\n");
    assert_eq!(mode(&real), 0o600);
    assert!(!backup.exists());
    // A plain file: renamed into place.
    let plain = dir.path().join("plain.conf");
    fs::write(&plain, "ours\n").unwrap();
    fs::write(&backup, "theirs\n").unwrap();
    restore(&backup, &plain).unwrap();
    assert_eq!(fs::read(&plain).unwrap(), b"theirs\n");
    // remove() through a link removes what it points to, not the link.
    remove(&link).unwrap();
    assert!(is_symlink(&link));
    assert!(!real.exists());
}

#[test]
fn write_existing_writes_in_place_through_a_trusted_link_and_creates_nothing() {
    use std::os::unix::fs::MetadataExt;
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("scaling_governor");
    fs::write(&p, "powersave\n").unwrap();
    let inode = fs::metadata(&p).unwrap().ino();
    write_existing(&p, b"performance").unwrap();
    assert_eq!(fs::read(&p).unwrap(), b"performance");
    assert_eq!(
        fs::metadata(&p).unwrap().ino(),
        inode,
        "in place, not renamed over"
    );
    write_existing(&p, b"ondemand").unwrap();
    assert_eq!(fs::read(&p).unwrap(), b"ondemand", "the old text is gone");
    // Through a link of the user's own into a folder only they can write.
    let link = dir.path().join("link");
    symlink(&p, &link).unwrap();
    write_existing(&link, b"performance").unwrap();
    assert_eq!(fs::read(&p).unwrap(), b"performance");
    assert!(is_symlink(&link));
    // Nothing is created.
    let missing: PathBuf = dir.path().join("missing");
    assert!(write_existing(&missing, b"x").is_err());
    assert!(!missing.exists());
}
