//! Where the files go: XDG folders, `~/.local/bin`, `$PATH`.

use super::*;

#[test]
fn paths_honour_xdg_and_fall_back_to_home() {
    let p = Paths::from_env(&env(&[
        ("HOME", "/home/u"),
        ("XDG_CONFIG_HOME", "/cfg"),
        ("XDG_DATA_DIRS", "/a:relative:/b"),
    ]))
    .unwrap();
    assert_eq!(
        p.rule_file(),
        PathBuf::from("/cfg/pipewire/pipewire-pulse.conf.d/50-micoff-capture-latency.conf")
    );
    assert_eq!(p.data_home, PathBuf::from("/home/u/.local/share"));
    assert_eq!(p.data_dirs, vec![PathBuf::from("/a"), PathBuf::from("/b")]);
    // A relative XDG value is ignored (XDG spec), the default data dirs apply.
    let p = Paths::from_env(&env(&[("HOME", "/h"), ("XDG_CONFIG_HOME", "rel")])).unwrap();
    assert_eq!(p.config_home, PathBuf::from("/h/.config"));
    assert_eq!(p.data_dirs[1], PathBuf::from("/usr/share"));
    assert!(Paths::from_env(&env(&[])).is_err());
}

#[test]
fn paths_find_path_and_bin_home() {
    let p = Paths::from_env(&env(&[
        ("HOME", "/home/u"),
        ("PATH", "/home/u/.local/bin:relative:/usr/bin:/bin"),
    ]))
    .unwrap();
    assert_eq!(p.bin_home, Some(PathBuf::from("/home/u/.local/bin")));
    assert_eq!(
        p.path_dirs,
        vec![
            PathBuf::from("/home/u/.local/bin"),
            PathBuf::from("/usr/bin"),
            PathBuf::from("/bin")
        ]
    );
    assert!(p.wrapper_first(Path::new("/usr/bin/chromium")));
    let later = Paths::from_env(&env(&[
        ("HOME", "/home/u"),
        ("PATH", "/usr/bin:/home/u/.local/bin"),
    ]))
    .unwrap();
    assert!(!later.wrapper_first(Path::new("/usr/bin/chromium")));
    let q = Paths::from_env(&env(&[("XDG_CONFIG_HOME", "/c"), ("XDG_DATA_HOME", "/d")])).unwrap();
    assert_eq!(q.bin_home, None);
    assert!(q.path_dirs.is_empty());
    assert_eq!(sh_quote("/a b/it's"), r"'/a b/it'\''s'");
    let meta = read_meta(&wrapper_content(
        20,
        Browser::Firefox,
        "firefox",
        Path::new("/usr/bin/firefox"),
    ))
    .unwrap();
    assert_eq!(meta["browser"], "firefox");
    assert_eq!(meta["capture_ms"], "20");
    assert!(read_meta("#!/bin/sh\nexec chromium\n").is_none());
}
