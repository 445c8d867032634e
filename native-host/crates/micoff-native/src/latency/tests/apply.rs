//! All or nothing: a failed step puts back exactly what the run had changed.

use super::*;

#[test]
fn apply_is_all_or_nothing_and_puts_back_exactly_what_it_changed() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o7777;
    // A file of ours that a write replaces (mode 0600, not what apply writes).
    let replaced = d.join("replaced.conf");
    let old = rule_content(40, &[Browser::Chromium]);
    fs::write(&replaced, &old).unwrap();
    fs::set_permissions(&replaced, fs::Permissions::from_mode(0o600)).unwrap();
    // A file of ours that a removal takes away, and a link of ours to one.
    let removed = d.join("removed.conf");
    fs::write(&removed, &old).unwrap();
    fs::set_permissions(&removed, fs::Permissions::from_mode(0o640)).unwrap();
    let real = d.join("dotfiles.conf");
    fs::write(&real, &old).unwrap();
    let removed_link = d.join("removed-link.conf");
    std::os::unix::fs::symlink("dotfiles.conf", &removed_link).unwrap();
    // A write through a link, and a write that creates a file.
    let through = d.join("through.conf");
    let through_real = d.join("through-real.conf");
    fs::write(&through_real, "mine\n").unwrap();
    std::os::unix::fs::symlink("through-real.conf", &through).unwrap();
    let created = d.join("created.conf");
    // The last write fails: its folder is a file.
    fs::write(d.join("not-a-folder"), "x").unwrap();
    let failing = d.join("not-a-folder/x.conf");
    let new = rule_content(20, &[Browser::Chromium]);
    let write = |p: &Path| Action::Write {
        path: p.to_path_buf(),
        content: new.clone(),
    };
    let actions = vec![
        write(&replaced),
        Action::Remove {
            path: removed.clone(),
        },
        Action::Remove {
            path: removed_link.clone(),
        },
        write(&through),
        write(&created),
        write(&failing),
    ];
    let err = apply(&actions).unwrap_err();
    assert!(err.contains("cannot write"), "{err}");
    assert!(err.contains("were put back as they were"), "{err}");
    assert_eq!(fs::read_to_string(&replaced).unwrap(), old);
    assert_eq!(mode(&replaced), 0o600);
    assert_eq!(fs::read_to_string(&removed).unwrap(), old);
    assert_eq!(mode(&removed), 0o640);
    assert_eq!(
        fs::read_link(&removed_link).unwrap(),
        PathBuf::from("dotfiles.conf")
    );
    assert_eq!(fs::read_to_string(&real).unwrap(), old);
    assert_eq!(
        fs::read_link(&through).unwrap(),
        PathBuf::from("through-real.conf")
    );
    assert_eq!(fs::read_to_string(&through_real).unwrap(), "mine\n");
    assert!(!created.exists());
    let mut names: Vec<String> = fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "dotfiles.conf",
            "not-a-folder",
            "removed-link.conf",
            "removed.conf",
            "replaced.conf",
            "through-real.conf",
            "through.conf"
        ]
    );
    // Without the failing write, everything is applied.
    apply(&actions[..5]).unwrap();
    assert_eq!(fs::read_to_string(&replaced).unwrap(), new);
    assert!(!removed.exists() && !removed_link.exists());
    assert_eq!(fs::read_to_string(&through_real).unwrap(), new);
    assert_eq!(fs::read_to_string(&created).unwrap(), new);
}
