//! What a set writes goes into micoff's record; a reset takes it out again. Whatever sits at a
//! file's name is read only when it is a regular file.

use super::*;

/// The files micoff's record names, by role.
fn recorded(paths: &Paths) -> Vec<(PathBuf, String)> {
    let Some(record) = micoff_files::record::journal::load(&paths.record().unwrap()).unwrap()
    else {
        return Vec::new();
    };
    record
        .entries
        .into_iter()
        .filter_map(|e| match e {
            micoff_files::record::Entry::File { path, role, .. } => Some((path, role)),
            _ => None,
        })
        .collect()
}

#[test]
fn a_set_records_its_files_and_a_reset_forgets_them() {
    let (d, mut paths) = temp_paths();
    let pa = server_of(Some(&info(None)));
    system_entry(&paths, "chromium.desktop");
    paths.path_dirs = vec![d.path().join("usr/bin")];
    fake_command(&d.path().join("usr/bin"), "chromium");
    set_for_server(&paths, &set_req(Some(40), None), &pa, 0).unwrap();
    let copy = paths.user_applications().join("chromium.desktop");
    let wrapper = paths.wrapper("chromium").unwrap();
    assert_eq!(
        recorded(&paths),
        vec![
            (copy.clone(), "latency desktop entry".to_owned()),
            (wrapper.clone(), "latency wrapper".to_owned()),
        ]
    );
    // The rule instead: the desktop entry and wrapper are forgotten with the files.
    let pw = server_of(Some(&info(Some("1.0.5"))));
    set_for_server(&paths, &set_req(Some(40), None), &pw, 0).unwrap();
    assert_eq!(
        recorded(&paths),
        vec![(
            paths.rule_file(),
            "latency rule (pipewire-pulse)".to_owned()
        )]
    );
    set_for_server(&paths, &set_req(None, None), &pw, 0).unwrap();
    assert!(recorded(&paths).is_empty());
    // The folders the sets made stay recorded, for `micoff-host uninstall` to take away.
    let record = micoff_files::record::journal::load(&paths.record().unwrap())
        .unwrap()
        .unwrap();
    assert!(record
        .entries
        .contains(&micoff_files::record::Entry::Folder {
            path: paths.config_home.join("pipewire"),
            by: "latency set".to_owned(),
        }));
}

#[test]
fn a_fifo_where_a_latency_file_goes_is_skipped_not_waited_on() {
    // Before: the planner read it with read_to_string and hung.
    let (_d, paths) = temp_paths();
    let rule = paths.rule_file();
    fs::create_dir_all(rule.parent().unwrap()).unwrap();
    let c = std::ffi::CString::new(rule.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let (tx, rx) = std::sync::mpsc::channel();
    let p = paths.clone();
    std::thread::spawn(move || {
        let pw = server_of(Some(&info(Some("1.0.5"))));
        let _ = tx.send(set_for_server(&p, &set_req(Some(40), None), &pw, 0));
    });
    let r = match rx.recv_timeout(Duration::from_secs(10)) {
        Ok(r) => r.unwrap(),
        Err(_) => {
            let _ = fs::OpenOptions::new().write(true).open(&rule);
            panic!("the planner hung on a FIFO");
        }
    };
    assert_eq!(r.skipped_files, vec![rule.display().to_string()]);
    assert!(r.changed_files.is_empty());
}
