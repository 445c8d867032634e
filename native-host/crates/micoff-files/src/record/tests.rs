//! The record: written through a journal, committed under a lock, undone by sha256.

use std::fs;

use super::journal::load;
use super::undo::{undo_file, undo_folder, FileUndone, FolderUndone};
use super::*;

#[test]
fn a_journal_writes_records_and_commits_files_and_the_folders_it_made() {
    let dir = tempfile::tempdir().unwrap();
    let record = user_record(&dir.path().join("state"));
    let manifest = dir
        .path()
        .join("home/.config/chromium/NativeMessagingHosts/m.json");
    fs::create_dir_all(dir.path().join("home/.config")).unwrap();
    let mut j = Journal::at(record.clone(), "install");
    j.write(&manifest, b"{}\n", 0o644, "host manifest").unwrap();
    j.commit().unwrap();
    let r = load(&record).unwrap().unwrap();
    assert_eq!(r.format, RECORD_FORMAT);
    assert_eq!(
        r.entries,
        vec![
            Entry::Folder {
                path: dir.path().join("home/.config/chromium"),
                by: "install".into()
            },
            Entry::Folder {
                path: dir
                    .path()
                    .join("home/.config/chromium/NativeMessagingHosts"),
                by: "install".into()
            },
            Entry::File {
                path: manifest.clone(),
                role: "host manifest".into(),
                by: "install".into(),
                sha256: crate::sha256_hex(b"{}\n"),
            },
        ]
    );
    // The record's own folders (state/, state/micoff) were made for it.
    assert_eq!(
        r.own_folders,
        vec![dir.path().join("state"), dir.path().join("state/micoff")]
    );
    // A second write of the same file replaces its entry; a part is kept beside it.
    let mut j = Journal::at(record.clone(), "install");
    j.write(&manifest, b"{\"a\":1}\n", 0o644, "host manifest")
        .unwrap();
    j.part("fix", "client-shm", serde_json::json!({"path": "/x"}));
    j.commit().unwrap();
    let r = load(&record).unwrap().unwrap();
    assert_eq!(r.entries.len(), 4);
    assert_eq!(r.parts("fix").count(), 1);
}

#[test]
fn undo_removes_a_file_as_written_keeps_an_edited_one_and_the_record_goes_when_empty() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let record = user_record(&state);
    let a = dir.path().join("out/a.json");
    let b = dir.path().join("out/b.json");
    let mut j = Journal::at(record.clone(), "install");
    j.write(&a, b"a\n", 0o644, "host manifest").unwrap();
    j.write(&b, b"b\n", 0o644, "host manifest").unwrap();
    j.commit().unwrap();
    fs::write(&b, "b, edited by hand\n").unwrap();

    let r = load(&record).unwrap().unwrap();
    let mut j = Journal::at(record.clone(), "uninstall");
    let sha = |p: &std::path::Path| match r.entries.iter().find(|e| e.path() == Some(p)) {
        Some(Entry::File { sha256, .. }) => sha256.clone(),
        _ => panic!("no entry for {}", p.display()),
    };
    // A dry run changes nothing.
    assert_eq!(
        undo_file(&a, &sha(&a), &mut Journal::unrecorded("x"), true),
        FileUndone::Removed
    );
    assert!(a.exists());
    assert_eq!(undo_file(&a, &sha(&a), &mut j, false), FileUndone::Removed);
    assert!(!a.exists());
    let kept = undo_file(&b, &sha(&b), &mut j, false);
    assert!(
        matches!(&kept, FileUndone::Kept(why) if why.contains("changed since micoff wrote it")),
        "{kept:?}"
    );
    assert!(kept.left_something());
    assert_eq!(fs::read(&b).unwrap(), b"b, edited by hand\n");
    assert_eq!(
        undo_folder(&dir.path().join("out"), &mut j, false, false),
        FolderUndone::NotEmpty
    );
    j.commit().unwrap();
    // The edited file stays recorded, and so does its folder: the next uninstall names it again.
    let r = load(&record).unwrap().unwrap();
    assert_eq!(r.entries.len(), 2, "{r:?}");

    // Once it is gone, uninstall's journal finishes the record: it goes, with the folders made
    // for it and the empty folders it still named.
    fs::remove_file(&b).unwrap();
    let mut j = Journal::at(record.clone(), "uninstall").finishing();
    assert_eq!(undo_file(&b, &sha(&b), &mut j, false), FileUndone::Gone);
    j.commit().unwrap();
    assert!(!record.exists());
    assert!(!state.exists());
    assert!(!dir.path().join("out").exists());
}

#[test]
fn a_record_micoff_cannot_read_is_never_written_over() {
    let dir = tempfile::tempdir().unwrap();
    let record = user_record(dir.path());
    fs::create_dir_all(record.parent().unwrap()).unwrap();
    fs::write(&record, "not json").unwrap();
    let mut j = Journal::at(record.clone(), "install");
    j.part("fix", "governor", serde_json::Value::Null);
    let e = j.commit().unwrap_err();
    assert!(
        e.to_string().contains("not a record micoff can read"),
        "{e}"
    );
    assert_eq!(fs::read(&record).unwrap(), b"not json");
}

#[test]
fn only_forgetting_where_there_is_no_record_makes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let record = user_record(&dir.path().join("state"));
    let mut j = Journal::at(record, "install");
    j.forget_file(&dir.path().join("x"));
    j.commit().unwrap();
    assert!(!dir.path().join("state").exists());
}
