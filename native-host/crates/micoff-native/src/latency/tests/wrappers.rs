//! The PATH wrappers: written where the browser's own command is, run it with the environment, never replace a user's file.

use super::*;

#[test]
fn wrappers_on_path_run_the_browser_with_the_environment() {
    use std::os::unix::fs::PermissionsExt;
    let (d, mut paths) = temp_paths();
    let usr_bin = d.path().join("usr/bin");
    let bin_home = paths.bin_home.clone().unwrap();
    let real = fake_command(&usr_bin, "chromium");
    // Not executable: not a command, no wrapper for it.
    fs::write(usr_bin.join("firefox"), "not a program").unwrap();
    // ~/.local/bin first, as Debian's ~/.profile puts it.
    paths.path_dirs = vec![bin_home.clone(), usr_bin.clone()];
    let pa = server_of(Some(&info(None)));

    let dry = SetRequest {
        dry_run: true,
        ..set_req(Some(40), None)
    };
    let r = set_for_server(&paths, &dry, &pa, 0).unwrap();
    let wrapper = bin_home.join("chromium");
    assert_eq!(r.changed_files, vec![wrapper.display().to_string()]);
    assert!(!wrapper.exists(), "a dry run writes nothing");

    let r = set_for_server(&paths, &set_req(Some(40), None), &pa, 0).unwrap();
    assert_eq!(r.changed_files, vec![wrapper.display().to_string()]);
    assert_eq!(r.needs_restart, vec!["chromium".to_owned()]);
    assert!(r.message.contains("started by name"), "{}", r.message);
    assert!(r.message.contains("playback latency changes too"));
    let text = fs::read_to_string(&wrapper).unwrap();
    assert_eq!(
        text,
        wrapper_content(40, Browser::Chromium, "chromium", &real)
    );
    assert!(text.starts_with(&format!("#!/bin/sh\n{MARKER}\n")));
    let mode = fs::metadata(&wrapper).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o755);
    // It runs: the browser's own command gets the environment and every argument.
    let out = std::process::Command::new(&wrapper)
        .args(["--new-window", "a b"])
        .env_remove("PULSE_LATENCY_MSEC")
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "40 --new-window a b\n"
    );

    // It counts as the configuration (status reads it back), and the same request is a no-op.
    let (ms, mech, browsers, files) = configured_from(&our_files(&paths)).unwrap();
    assert_eq!(
        (ms, mech, browsers),
        (40, Mechanism::LaunchEnvironment, vec![Browser::Chromium])
    );
    assert_eq!(files, vec![wrapper.display().to_string()]);
    let again = set_for_server(&paths, &set_req(Some(40), None), &pa, 0).unwrap();
    assert!(again.changed_files.is_empty(), "{again:?}");

    // A changed latency rewrites it; reset removes it.
    set_for_server(&paths, &set_req(Some(60), None), &pa, 0).unwrap();
    assert!(fs::read_to_string(&wrapper)
        .unwrap()
        .contains("\nPULSE_LATENCY_MSEC=60\nexport PULSE_LATENCY_MSEC\nexec '"));
    let r = set_for_server(&paths, &set_req(None, None), &pa, 0).unwrap();
    assert_eq!(r.changed_files, vec![wrapper.display().to_string()]);
    assert!(!wrapper.exists());
    assert!(real.exists(), "the browser's own command is never touched");
}

#[test]
fn wrappers_never_replace_a_users_file_and_say_when_path_hides_them() {
    let (d, mut paths) = temp_paths();
    let usr_bin = d.path().join("usr/bin");
    let bin_home = paths.bin_home.clone().unwrap();
    fake_command(&usr_bin, "chromium");
    fake_command(&usr_bin, "firefox-esr");
    // The user's own chromium in ~/.local/bin: left alone.
    let theirs = fake_command(&bin_home, "chromium");
    let theirs_text = fs::read_to_string(&theirs).unwrap();
    // ~/.local/bin after /usr/bin: a shell never finds the wrapper.
    paths.path_dirs = vec![usr_bin.clone(), bin_home.clone()];
    let pa = server_of(Some(&info(None)));
    let r = set_for_server(&paths, &set_req(Some(40), None), &pa, 0).unwrap();
    let ff = bin_home.join("firefox-esr");
    assert_eq!(r.changed_files, vec![ff.display().to_string()]);
    assert_eq!(r.skipped_files, vec![theirs.display().to_string()]);
    assert_eq!(fs::read_to_string(&theirs).unwrap(), theirs_text);
    assert!(r.message.contains("is not in PATH before"), "{}", r.message);
    // The user's file is never taken for the browser's own command either.
    assert!(!fs::read_to_string(&ff).unwrap().contains(".local/bin"));

    // Switching to the rule removes the wrapper (ours), keeps theirs.
    set_for_server(
        &paths,
        &set_req(Some(40), Some(Mechanism::PipewirePulseRule)),
        &server_of(Some(&info(Some("0.3.65")))),
        0,
    )
    .unwrap();
    assert!(!ff.exists());
    assert_eq!(fs::read_to_string(&theirs).unwrap(), theirs_text);

    // No home: no wrappers, the desktop entries still work.
    paths.bin_home = None;
    system_entry(&paths, "chromium.desktop");
    let r = set_for_server(&paths, &set_req(Some(40), None), &pa, 0).unwrap();
    assert_eq!(
        r.changed_files,
        vec![
            paths
                .user_applications()
                .join("chromium.desktop")
                .display()
                .to_string(),
            paths.rule_file().display().to_string(),
        ]
    );
}

/// A browser command found in a PATH folder whose name holds `=`: `exec env VAR=N '<path>' "$@"`
/// made `env` take the path for one more assignment and run the user's first argument as the
/// command. The wrapper now runs the browser, with the environment, whatever the path holds.
#[test]
fn a_path_with_an_equals_sign_still_runs_the_browser_not_the_first_argument() {
    let (d, mut paths) = temp_paths();
    let odd = d.path().join("opt/a=b $x 'q'");
    let real = fake_command(&odd, "chromium");
    let bin_home = paths.bin_home.clone().unwrap();
    paths.path_dirs = vec![bin_home.clone(), odd.clone()];
    let pa = server_of(Some(&info(None)));
    set_for_server(&paths, &set_req(Some(40), None), &pa, 0).unwrap();
    let wrapper = bin_home.join("chromium");
    let text = fs::read_to_string(&wrapper).unwrap();
    assert!(text.contains(&sh_quote(&real.to_string_lossy())), "{text}");
    let touched = d.path().join("touched");
    let out = std::process::Command::new(&wrapper)
        .args(["touch", touched.to_str().unwrap()])
        .env_remove("PULSE_LATENCY_MSEC")
        .output()
        .unwrap();
    assert!(
        !touched.exists(),
        "the user's first argument was run as the command"
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("40 touch {}\n", touched.display())
    );
}

/// A path the wrapper cannot hold safely (a control character: a newline, an escape sequence) is
/// never taken for the browser's own command; the next one in PATH is.
#[test]
fn a_command_path_with_a_control_character_is_passed_over() {
    let (d, mut paths) = temp_paths();
    let bad = d.path().join("bin\u{1b}[2Jx");
    let cr = d.path().join("bin\rx");
    let good = d.path().join("usr/bin");
    fake_command(&bad, "chromium");
    fake_command(&cr, "chromium");
    let real = fake_command(&good, "chromium");
    paths.path_dirs = vec![bad, cr, good];
    assert_eq!(paths.real_command("chromium"), Some(real));
    // Relative PATH entries never count either.
    assert!(!super::super::paths::wrapper_can_hold(
        std::path::Path::new("bin/chromium")
    ));
}

/// A system desktop entry whose program sits in a folder named with `=` (the Desktop Entry spec
/// allows it unquoted): `Exec=env PULSE_LATENCY_MSEC=N /opt/a=b/chromium %U` made `env` take the
/// program for one more assignment and run the file or URL the user opened as the command. Such
/// an entry gets no copy (the PATH wrapper still covers the browser started by name), and says so.
#[test]
fn a_menu_entry_whose_program_holds_an_equals_sign_gets_no_env_copy() {
    let (d, mut paths) = temp_paths();
    paths.bin_home = None;
    let odd = d.path().join("opt/a=b");
    let real = fake_command(&odd, "chromium");
    let entry = paths.data_dirs[0].join("applications/chromium.desktop");
    fs::create_dir_all(entry.parent().unwrap()).unwrap();
    for exec in [
        format!("{} %U", real.display()),
        format!("\"{}\" %U", real.display()),
    ] {
        fs::write(
            &entry,
            format!("[Desktop Entry]\nName=Chromium\nExec={exec}\nType=Application\n"),
        )
        .unwrap();
        let req = SetRequest {
            browsers: vec![Browser::Chromium],
            ..set_req(Some(40), None)
        };
        let r = set_for_server(&paths, &req, &server_of(Some(&info(None))), 0).unwrap();
        let copy = paths.user_applications().join("chromium.desktop");
        assert!(!copy.exists(), "{exec}: a copy whose env runs the argument");
        assert_eq!(r.skipped_files, vec![entry.display().to_string()], "{exec}");
        assert!(r.message.contains("no menu entry copy"), "{}", r.message);
    }
    // What the copy would have run, as a launcher runs `Exec=… %U` with a file the user opened:
    // the file, not the browser (why the entry is passed over).
    let opened = d.path().join("touch-me");
    let touched = d.path().join("touched");
    fs::write(&opened, format!("#!/bin/sh\n: > '{}'\n", touched.display())).unwrap();
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(&opened, fs::Permissions::from_mode(0o755)).unwrap();
    let exec = desktop_entry_content(
        &format!("Exec={} %U\n", real.display()),
        &entry,
        40,
        Browser::Chromium,
    );
    let line = exec.lines().find_map(|l| l.strip_prefix("Exec=")).unwrap();
    let argv: Vec<String> = line
        .replace("%U", opened.to_str().unwrap())
        .split(' ')
        .map(str::to_owned)
        .collect();
    std::process::Command::new(&argv[0])
        .args(&argv[1..])
        .output()
        .unwrap();
    assert!(touched.exists(), "env ran the opened file: {line}");
    // An ordinary entry is still copied, a program named after `env`'s own settings included.
    assert_eq!(
        exec_env_would_misread(
            "Exec=env FOO=1 /usr/bin/chromium %U\nExec=\"/usr/bin/x y\" --a=b\n"
        ),
        None
    );
}
