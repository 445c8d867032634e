//! Every subcommand's failures in the one error style, through the real binary: each line on stderr
//! `micoff-host <cmd>: <what>, <what to do>`, no log lines (`ERROR`, `WARN`, timestamps), at most
//! 256 characters, at most 64 characters of a long value the caller gave (docs/design/security.md,
//! "The command line's messages"). No audio server is reachable (a private, empty runtime folder).

#![allow(clippy::unwrap_used)] // tests may unwrap (house style)

use std::process::{Command, Output, Stdio};

const HOST: &str = env!("CARGO_BIN_EXE_micoff-host");

/// A value longer than any message may quote.
fn long() -> String {
    "A".repeat(300)
}

/// `micoff-host <args>` with no audio server anywhere and `HOME` (when given) in `dir`.
fn host(dir: &std::path::Path, args: &[&str], home: bool) -> Output {
    let mut cmd = Command::new(HOST);
    cmd.args(args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("XDG_RUNTIME_DIR", dir)
        .env("PULSE_RUNTIME_PATH", dir)
        .env("PULSE_SERVER", format!("unix:{}/none", dir.display()))
        .stdin(Stdio::null());
    if home {
        cmd.env("HOME", dir);
    }
    cmd.output().unwrap()
}

/// The command line's error lines: the one style, bounded, quoting little of `long()`.
fn assert_error_lines(args: &[&str], out: &Output, cmd: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{args:?} succeeded: {stderr}");
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert!(!lines.is_empty(), "{args:?}: nothing on stderr");
    let prefix = format!("micoff-host {cmd}: ");
    let errors: Vec<&&str> = lines.iter().filter(|l| l.starts_with(&prefix)).collect();
    assert!(
        !errors.is_empty(),
        "{args:?}: no line starts {prefix:?}:\n{stderr}"
    );
    for line in &lines {
        assert!(
            !line.contains(" ERROR ") && !line.contains(" WARN ") && !line.contains("Z ERROR"),
            "{args:?}: a log line:\n{stderr}"
        );
        assert!(
            line.chars().count() <= 256,
            "{args:?}: {} characters: {line}",
            line.chars().count()
        );
        let quoted = line.split(|c| c != 'A').map(str::len).max().unwrap_or(0);
        assert!(
            quoted <= 64,
            "{args:?}: {quoted} characters of the value: {line}"
        );
    }
    for line in errors {
        // `<what>, <what to do>`: something after the prefix, and a comma before the advice.
        let rest = &line[prefix.len()..];
        assert!(rest.contains(", "), "{args:?}: no what-to-do in {line:?}");
    }
}

#[test]
fn every_subcommand_fails_in_the_one_error_style() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let long = long();
    let long_path = format!("/nonexistent/{long}");
    let server = format!("unix:/nonexistent/{long}");
    let cases: Vec<(Vec<&str>, &str, bool)> = vec![
        (vec!["sample"], "sample", true),
        (vec!["sample", "--pid", "4194303"], "sample", true),
        (vec!["sample", "--window", &long], "sample", true),
        (vec!["top", "--pid", "4194303", "--count", "1"], "top", true),
        (vec!["top", "--interval", "0.01"], "top", true),
        (
            vec!["install", "--dry-run", "--host-path", &long_path],
            "install",
            true,
        ),
        (
            vec!["install", "--dry-run", "--firefox-xpi", &long_path],
            "install",
            true,
        ),
        (
            vec!["install", "--dry-run", "--chromium-crx", &long_path],
            "install",
            true,
        ),
        (vec!["doctor", "--bogus"], "doctor", true),
        // No audio server reachable: a failure (exit 4), not "not applicable".
        (vec!["doctor"], "doctor", true),
        (
            vec!["fix", "governor", "--cpus", &long],
            "fix governor",
            true,
        ),
        (
            vec![
                "fix",
                "hda",
                "--apply",
                "--force",
                "--root",
                d.to_str().unwrap(),
            ],
            "fix hda",
            true,
        ),
        (vec!["bench", "record", "--server", &server], "bench", true),
        (
            vec!["latency", "set", "--capture-ms", "40"],
            "latency",
            false,
        ),
        (vec!["latency", "restart-audio-service"], "latency", true),
        (
            vec!["latency", "set", "--capture-ms", "5"],
            "latency set",
            true,
        ),
        (vec!["uninstall", "--dry-run", "--bogus"], "uninstall", true),
        (vec!["no-such-command", &long_path], "", true),
    ];
    for (args, cmd, home) in cases {
        let out = host(d, &args, home);
        if cmd.is_empty() {
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(stderr.starts_with("micoff-host: "), "{stderr}");
            continue;
        }
        assert_error_lines(&args, &out, cmd);
        if args == ["doctor"] {
            assert_eq!(out.status.code(), Some(4), "{args:?}");
        }
    }
}

/// `uninstall --system` as a user (as root, the test runs it as `nobody` through util-linux's
/// `setpriv`): refused before anything is read, in the one error style, exit 1.
#[test]
fn uninstall_system_as_a_user_fails_in_the_one_error_style() {
    let dir = tempfile::tempdir().unwrap();
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let args = ["uninstall", "--system"];
    let mut cmd = if root {
        // nobody must be able to reach its HOME: the test's folder, opened to all.
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups", HOST]);
        c
    } else {
        Command::new(HOST)
    };
    let out = cmd
        .args(args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", dir.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_error_lines(&args, &out, "uninstall");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("run it as root"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
