//! The generated completions, run in the real shells: `micoff-host install --b<TAB>` offers
//! `--browser` in bash, zsh and fish. The shells come from scripts/ensure-deps.sh (`--package`); a
//! missing one fails with that hint.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// The words typed before TAB, as a user types them.
const LINE: &[&str] = &["micoff-host", "install", "--b"];

/// The completions written the way `npm run package` writes them, in a fresh folder.
fn completions() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("completions");
    micoff_dist::completions::write(micoff_dist::command(), &out).unwrap();
    (dir, out)
}

/// Runs `shell args…` (at most 30 s); its stdout, one offered word a line.
fn offered(shell: &str, args: &[&str], cwd: &Path) -> Vec<String> {
    let out = Command::new("timeout")
        .arg("30")
        .arg(shell)
        .args(args)
        .current_dir(cwd)
        .env("HOME", cwd)
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("ZDOTDIR")
        .output()
        .unwrap_or_else(|e| panic!("cannot run {shell}: {e}"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.code() != Some(127),
        "{shell} is not installed: run `bash scripts/ensure-deps.sh --package` ({stderr})"
    );
    assert!(out.status.success(), "{shell} failed: {stderr}");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        // fish prints `word<TAB>description`.
        .map(|l| l.split('\t').next().unwrap_or_default().to_owned())
        .collect()
}

fn assert_offers_browser(shell: &str, got: &[String]) {
    assert!(
        got.iter().any(|w| w == "--browser"),
        "{shell}: `{}<TAB>` offered {got:?}, not --browser",
        LINE.join(" ")
    );
}

#[test]
fn bash_completes_a_subcommand_option() {
    let (tmp, dir) = completions();
    // As bash calls a `complete -F` function: COMP_* set, arguments (command, word, previous word).
    let script = format!(
        r#"source {file}
fn=$(complete -p micoff-host | sed -n 's/.*-F \([^ ]*\) .*/\1/p')
[ -n "$fn" ] || {{ echo "no completion registered for micoff-host" >&2; exit 1; }}
COMP_WORDS=({words})
COMP_CWORD={cword}
COMP_LINE="{line}"
COMP_POINT=${{#COMP_LINE}}
"$fn" micoff-host "{cur}" "{prev}"
printf '%s\n' "${{COMPREPLY[@]}}""#,
        file = dir.join("micoff-host.bash").display(),
        words = LINE.join(" "),
        cword = LINE.len() - 1,
        line = LINE.join(" "),
        cur = LINE[LINE.len() - 1],
        prev = LINE[LINE.len() - 2],
    );
    let got = offered(
        "bash",
        &["--norc", "--noprofile", "-c", &script],
        tmp.path(),
    );
    assert_offers_browser("bash", &got);
}

#[test]
fn zsh_completes_a_subcommand_option() {
    let (tmp, dir) = completions();
    let driver = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/complete.zsh");
    let got = offered(
        "zsh",
        &[
            "-f",
            &driver.display().to_string(),
            &dir.display().to_string(),
            &LINE.join(" "),
        ],
        tmp.path(),
    );
    assert_offers_browser("zsh", &got);
}

#[test]
fn fish_completes_a_subcommand_option() {
    let (tmp, dir) = completions();
    let script = format!(
        "source {}; complete -C '{}'",
        dir.join("micoff-host.fish").display(),
        LINE.join(" ")
    );
    let got = offered("fish", &["--no-config", "-c", &script], tmp.path());
    assert_offers_browser("fish", &got);
}
