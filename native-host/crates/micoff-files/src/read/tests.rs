//! Reads: regular files only, bounded; a FIFO or a link to a device is refused at once.

use std::fs;
use std::os::unix::fs::symlink;
use std::time::{Duration, Instant};

use super::*;

/// A FIFO at `path` (mkfifo).
fn fifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

#[test]
fn a_regular_file_is_read_and_a_missing_one_is_none() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("a.json");
    fs::write(&p, "{}\n").unwrap();
    assert_eq!(read_regular(&p, 10).unwrap().unwrap(), b"{}\n");
    assert_eq!(read_regular_text(&p, 10).unwrap().unwrap(), "{}\n");
    assert!(read_regular(&dir.path().join("none"), 10)
        .unwrap()
        .is_none());
    // A file where a folder of the path would be: nothing there either.
    assert!(read_regular(&p.join("x"), 10).unwrap().is_none());
    // Through a link (dotfiles).
    symlink(&p, dir.path().join("link")).unwrap();
    assert_eq!(
        read_regular(&dir.path().join("link"), 10).unwrap().unwrap(),
        b"{}\n"
    );
}

#[test]
fn a_fifo_is_refused_at_once_instead_of_hanging() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("org.micoff.host.json");
    fifo(&p);
    let started = Instant::now();
    let e = read_regular(&p, MAX_TEXT_BYTES).unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(e.kind(), io::ErrorKind::InvalidData);
    assert!(
        e.to_string().contains("is a FIFO, not a regular file"),
        "{e}"
    );
    let e = read_with_mode(&p).unwrap_err();
    assert!(e.to_string().contains("FIFO"), "{e}");
}

#[test]
fn a_link_to_a_device_is_refused_instead_of_read_without_end() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("user.js");
    symlink("/dev/zero", &p).unwrap();
    let e = read_regular(&p, MAX_TEXT_BYTES).unwrap_err();
    assert!(e.to_string().contains("character device"), "{e}");
    let e = read_with_mode(&p).unwrap_err();
    assert!(e.to_string().contains("character device"), "{e}");
    // A folder is not a file either.
    let e = read_regular(dir.path(), 10).unwrap_err();
    assert!(e.to_string().contains("a folder"), "{e}");
}

#[test]
fn a_file_over_the_bound_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("big");
    fs::write(&p, vec![b'x'; 11]).unwrap();
    let e = read_regular(&p, 10).unwrap_err();
    assert!(e.to_string().contains("larger than 10 bytes"), "{e}");
    assert_eq!(read_regular(&p, 11).unwrap().unwrap().len(), 11);
    fs::write(&p, [0xff, 0xfe]).unwrap();
    assert!(read_regular_text(&p, 10)
        .unwrap_err()
        .to_string()
        .contains("not UTF-8"));
}
