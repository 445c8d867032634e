//! Writing micoff's file over a foreign one with a backup, and putting it back.

use std::fs;
use std::path::{Path, PathBuf};

use crate::ours::backup::{
    backup_named_in, backup_path, install, is_applied, uninstall, Installed, Removed, BACKUP_LINE,
};
use crate::ours::marked::{ownership_of, Marked, MARKER, SEAL};
use crate::ours::{sha256_hex, Ownership};
use crate::test_support::names;

/// The fixers' note on the seal line.
const NOTE: &str =
    "of this file without this line; --revert keeps your edits when it no longer matches";

fn install_ours(p: &Path, body: &str) -> Installed {
    install(p, body, NOTE).unwrap()
}

#[test]
fn install_backup_uninstall() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("etc/x.conf");
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(&p, "theirs\n").unwrap();
    let ours = format!("{MARKER}\nours\n");
    let r = install_ours(&p, &ours);
    assert_eq!(
        r,
        Installed::Written {
            backup: Some(backup_path(&p, 1))
        }
    );
    let text = fs::read_to_string(&p).unwrap();
    let unsealed = format!("{MARKER}\n{BACKUP_LINE}x.conf.micoff-backup\nours\n");
    assert_eq!(
        text,
        format!(
            "{MARKER}\n{BACKUP_LINE}x.conf.micoff-backup\n{SEAL}{} ({NOTE})\nours\n",
            sha256_hex(unsealed.as_bytes())
        )
    );
    assert_eq!(ownership_of(&text), Ownership::AsWritten);
    assert!(matches!(
        ownership_of(&text.replace("ours", "theirs")),
        Ownership::Edited(_)
    ));
    assert!(is_applied(Some(&text), &ours));
    assert_eq!(install_ours(&p, &ours), Installed::AlreadyApplied);
    // A newer version of ours replaces ours, keeping the backup it names.
    let ours2 = format!("{MARKER}\nours 2\n");
    assert_eq!(
        install_ours(&p, &ours2),
        Installed::Written { backup: None }
    );
    assert!(fs::read_to_string(&p)
        .unwrap()
        .contains("kept as x.conf.micoff-backup\n"));
    assert_eq!(fs::read_to_string(backup_path(&p, 1)).unwrap(), "theirs\n");
    let r = uninstall(&p, None).unwrap();
    assert_eq!(
        r,
        Removed::Removed {
            restored: Some(backup_path(&p, 1)),
            left: vec![]
        }
    );
    assert_eq!(fs::read_to_string(&p).unwrap(), "theirs\n");
    assert_eq!(uninstall(&p, None).unwrap(), Removed::NotOurs);
    fs::remove_file(&p).unwrap();
    assert_eq!(uninstall(&p, None).unwrap(), Removed::NothingThere);
    // No temporary files left behind.
    assert_eq!(fs::read_dir(dir.path().join("etc")).unwrap().count(), 0);
}

#[test]
fn a_foreign_file_that_replaced_ours_gets_its_own_backup() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("x.conf");
    let ours = format!("{MARKER}\nours\n");
    fs::write(&p, "A\n").unwrap();
    install_ours(&p, &ours);
    // The user puts their own file B in place of ours; apply again.
    fs::write(&p, "B\n").unwrap();
    assert_eq!(
        install_ours(&p, &ours),
        Installed::Written {
            backup: Some(backup_path(&p, 2))
        }
    );
    assert_eq!(fs::read_to_string(backup_path(&p, 1)).unwrap(), "A\n");
    assert_eq!(fs::read_to_string(backup_path(&p, 2)).unwrap(), "B\n");
    // Revert puts back B (what this apply replaced) and leaves A's backup alone.
    assert_eq!(
        uninstall(&p, None).unwrap(),
        Removed::Removed {
            restored: Some(backup_path(&p, 2)),
            left: vec![backup_path(&p, 1)]
        }
    );
    assert_eq!(fs::read_to_string(&p).unwrap(), "B\n");
    assert_eq!(names(dir.path()), ["x.conf", "x.conf.micoff-backup"]);
}

#[test]
fn ours_written_over_nothing_restores_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("x.conf");
    let ours = format!("{MARKER}\nours\n");
    fs::write(&p, "A\n").unwrap();
    install_ours(&p, &ours);
    // The user deletes our file, then applies again: ours replaced nothing this time.
    fs::remove_file(&p).unwrap();
    install_ours(&p, &ours);
    let text = fs::read_to_string(&p).unwrap();
    assert!(is_applied(Some(&text), &ours));
    assert!(!text.contains(BACKUP_LINE), "{text}");
    assert_eq!(
        uninstall(&p, None).unwrap(),
        Removed::Removed {
            restored: None,
            left: vec![backup_path(&p, 1)]
        }
    );
    assert!(!p.exists());
    assert_eq!(fs::read_to_string(backup_path(&p, 1)).unwrap(), "A\n");
}

#[test]
fn an_edited_file_of_ours_is_stripped_or_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("x.conf");
    fs::write(&p, "A\n").unwrap();
    install_ours(&p, &format!("{MARKER}\nours\n"));
    let edited = fs::read_to_string(&p)
        .unwrap()
        .replace("ours", "ours, edited");
    fs::write(&p, &edited).unwrap();
    assert_eq!(
        uninstall(&p, None).unwrap(),
        Removed::Changed {
            backup: Some(backup_path(&p, 1))
        }
    );
    assert_eq!(fs::read_to_string(&p).unwrap(), edited);
    let strip = |t: &str| Marked::read(t).map(|m| m.body()).unwrap_or_default();
    assert_eq!(
        uninstall(&p, Some(&strip)).unwrap(),
        Removed::KeptEdits {
            left: vec![backup_path(&p, 1)]
        }
    );
    assert_eq!(fs::read_to_string(&p).unwrap(), "ours, edited\n");
}

#[test]
fn a_backup_line_cannot_point_outside_the_folder() {
    let p = Path::new("/etc/modprobe.d/x.conf");
    let evil = format!("{MARKER}\n{BACKUP_LINE}../../passwd\n");
    assert_eq!(backup_named_in(p, &Marked::read(&evil).unwrap()), None);
    let ok = format!("{MARKER}\n{BACKUP_LINE}x.conf.micoff-backup.2\n");
    assert_eq!(
        backup_named_in(p, &Marked::read(&ok).unwrap()),
        Some(PathBuf::from("/etc/modprobe.d/x.conf.micoff-backup.2"))
    );
}

/// A symlink planted at the temporary name micoff used to pick (`.<name>.micoff-tmp-<pid>`) is
/// not followed.
#[test]
fn install_does_not_follow_a_symlink_planted_at_a_temporary_name() {
    let dir = tempfile::tempdir().unwrap();
    let victim = dir.path().join("victim");
    fs::write(&victim, "precious\n").unwrap();
    let etc = dir.path().join("etc");
    fs::create_dir_all(&etc).unwrap();
    std::os::unix::fs::symlink(
        &victim,
        etc.join(format!(".x.conf.micoff-tmp-{}", std::process::id())),
    )
    .unwrap();
    let p = etc.join("x.conf");
    install_ours(&p, &format!("{MARKER}\nours\n"));
    assert_eq!(fs::read_to_string(&victim).unwrap(), "precious\n");
    assert!(fs::read_to_string(&p).unwrap().ends_with("ours\n"));
}

/// A target that is a symlink stays one, pointing where it pointed, and revert restores the
/// content it had.
#[test]
fn a_symlinked_target_stays_a_link_through_install_and_uninstall() {
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("dotfiles.conf");
    fs::write(&real, "theirs\n").unwrap();
    let p = dir.path().join("x.conf");
    std::os::unix::fs::symlink("dotfiles.conf", &p).unwrap();
    install_ours(&p, &format!("{MARKER}\nours\n"));
    assert_eq!(fs::read_link(&p).unwrap(), PathBuf::from("dotfiles.conf"));
    assert!(fs::read_to_string(&real).unwrap().ends_with("ours\n"));
    assert!(matches!(
        uninstall(&p, None).unwrap(),
        Removed::Removed { .. }
    ));
    assert_eq!(fs::read_link(&p).unwrap(), PathBuf::from("dotfiles.conf"));
    assert_eq!(fs::read_to_string(&real).unwrap(), "theirs\n");
    assert_eq!(names(dir.path()), ["dotfiles.conf", "x.conf"]);
}
