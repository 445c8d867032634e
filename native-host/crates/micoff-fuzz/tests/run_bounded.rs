//! `native-host/fuzz/explore.sh` (`npm run bench:fuzz`) when the nightly side misbehaves: a sanitizer build that hangs
//! or fails, a missing toolchain, a libFuzzer run that dies without a crash, crashes and hangs
//! under either runner (a hang fails the run, it is not fallen back from). The nightly toolchain is
//! played by a `cargo` first in `PATH`, answering `cargo +nightly ...` as each case needs; the rest
//! goes to the real stable runner for half a second per target, unless `$FAKE_STABLE` says not.

#![allow(clippy::unwrap_used)] // tests may unwrap (house style)

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const TARGETS: [&str; 5] = [
    "proc_parsers",
    "doctor_parsers",
    "request",
    "framing",
    "policies_json",
];

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/explore.sh")
}

/// The stand-in `cargo`: `$FAKE_NIGHTLY` says how the nightly side behaves, `$FAKE_STABLE=crash`
/// makes the stable runner report a crash, `$FAKE_STABLE=hang` never end; the rest is the real
/// runner. `fuzz run` with `FAKE_NIGHTLY=hang` hangs on an input as libFuzzer does: reported after
/// its `-timeout=N` when given one, else not for 1200 s (libFuzzer's default; 600 here).
const FAKE_CARGO: &str = r#"#!/bin/sh
if [ "$1" = +nightly ]; then
  shift
  [ "$FAKE_NIGHTLY" = missing ] && { echo "error: toolchain 'nightly' is not installed" >&2; exit 1; }
  case "$1 $2" in
    "--version "*) echo "cargo 1.101.0-nightly"; exit 0 ;;
    "fuzz --version") echo "cargo-fuzz 0.13.2"; exit 0 ;;
    "fuzz build")
      case "$FAKE_NIGHTLY" in
        hang-build) exec sleep 600 ;;
        fail-build) echo "error: could not compile \`micoff-fuzz-targets\`" >&2; exit 101 ;;
      esac
      exit 0 ;;
    "fuzz run")
      case "$FAKE_NIGHTLY" in
        crash)
          echo "==4242== ERROR: libFuzzer: deadly signal"
          echo "artifact_prefix='artifacts/$3/'; Test unit written to artifacts/$3/crash-0"
          exit 77 ;;
        die) echo "error: toolchain vanished" >&2; exit 1 ;;
        hang)
          for a in "$@"; do
            case $a in -timeout=*)
              sleep "${a#-timeout=}"
              echo "==4242== ERROR: libFuzzer: timeout after ${a#-timeout=} seconds"
              echo "artifact_prefix='artifacts/$3/'; Test unit written to artifacts/$3/timeout-0"
              exit 70 ;;
            esac
          done
          exec sleep 600 ;;
        hang-forever) exec sleep 600 ;;
      esac
      echo "Done 4321 runs in 1 second(s)"
      echo "stat::number_of_executed_units: 4321"
      exit 0 ;;
  esac
  exit 2
fi
case "$1" in
  build) exit 0 ;;
  run)
    while [ "$#" -gt 0 ] && [ "$1" != -- ]; do shift; done
    shift
    if [ "$FAKE_STABLE" = crash ]; then
      echo "micoff-fuzz: request CRASHED: attempt to add with overflow" >&2
      exit 1
    fi
    [ "$FAKE_STABLE" = hang ] && exec sleep 600
    exec "$MICOFF_FUZZ_BIN" --seed 1 "$@" ;;
esac
exit 2
"#;

struct Run {
    code: Option<i32>,
    out: String,
    took: Duration,
}

fn run_script(nightly: &str, stable: &str) -> Run {
    run_script_with(nightly, stable, &[])
}

/// Bounds small enough for a hang to be seen within seconds: one input 1 s, a run its fuzzing
/// time plus 3 s.
const HANG_BOUNDS: &[(&str, &str)] = &[
    ("MICOFF_FUZZ_INPUT_TIMEOUT", "1"),
    ("MICOFF_FUZZ_RUN_SLACK", "3"),
];

fn run_script_with(nightly: &str, stable: &str, env: &[(&str, &str)]) -> Run {
    // A folder of this run's own for the stand-in (cargo's scratch folder for integration tests).
    let dir =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("run-bounded-{nightly}-{stable}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let cargo = dir.join("cargo");
    std::fs::write(&cargo, FAKE_CARGO).unwrap();
    std::fs::set_permissions(&cargo, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let started = Instant::now();
    let mut child = Command::new("bash")
        .arg(script())
        // Its own process group, so that everything it started can be ended with it.
        .process_group(0)
        .env("PATH", path)
        .env("FAKE_NIGHTLY", nightly)
        .env("FAKE_STABLE", stable)
        .env("MICOFF_FUZZ_BIN", env!("CARGO_BIN_EXE_micoff-fuzz"))
        .env("MICOFF_FUZZ_SECONDS", "0.5")
        .env("MICOFF_FUZZ_BUILD_TIMEOUT", "3")
        .env_remove("MICOFF_FUZZ_RUNNER")
        .env_remove("MICOFF_FUZZ_INPUT_TIMEOUT")
        .env_remove("MICOFF_FUZZ_RUN_SLACK")
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let out_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stdout.read_to_string(&mut s);
        s
    });
    // The old script waited for a hanging build forever: give up (and say so) after 3 minutes.
    let deadline = started + Duration::from_secs(180);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > deadline {
            // The process group created above (its id is the script's pid): the script and
            // everything it started.
            let _ = Command::new("kill")
                .args(["-KILL", "--", &format!("-{}", child.id())])
                .status();
            let _ = child.wait();
            panic!("run-bounded.sh ({nightly}) did not end within 180 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let out = format!(
        "{}{}",
        out_reader.join().unwrap(),
        err_reader.join().unwrap()
    );
    Run {
        code: status.code(),
        out,
        took: started.elapsed(),
    }
}

/// Every target's executions are printed, as npm test's summary reads them.
fn assert_executions_per_target(r: &Run) {
    for t in TARGETS {
        let line = r
            .out
            .lines()
            .find(|l| l.starts_with(&format!("{t}: ")) && l.contains(" executions"))
            .unwrap_or_else(|| panic!("no executions line for {t}:\n{}", r.out));
        let n: u64 = line
            .split_whitespace()
            .nth(1)
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{line}"));
        assert!(n > 0, "{line}");
    }
}

#[test]
fn a_hanging_libfuzzer_build_is_cut_off_and_the_stable_runner_runs() {
    let r = run_script("hang-build", "");
    assert_eq!(r.code, Some(0), "{}", r.out);
    assert!(
        r.out.contains("did not finish within 3 s"),
        "the reason is said:\n{}",
        r.out
    );
    assert!(r.out.contains("fuzz: ran the stable runner"), "{}", r.out);
    assert_executions_per_target(&r);
    assert!(r.took < Duration::from_secs(150), "took {:?}", r.took);
}

#[test]
fn a_failed_libfuzzer_build_falls_back_to_the_stable_runner() {
    let r = run_script("fail-build", "");
    assert_eq!(r.code, Some(0), "{}", r.out);
    assert!(
        r.out.contains("the libFuzzer build failed (exit 101)"),
        "{}",
        r.out
    );
    assert!(
        r.out.contains("could not compile"),
        "the build's tail is shown:\n{}",
        r.out
    );
    assert_executions_per_target(&r);
}

#[test]
fn a_missing_toolchain_falls_back_to_the_stable_runner() {
    let r = run_script("missing", "");
    assert_eq!(r.code, Some(0), "{}", r.out);
    assert!(
        r.out.contains("no nightly toolchain or no cargo-fuzz"),
        "{}",
        r.out
    );
    assert_executions_per_target(&r);
}

#[test]
fn a_libfuzzer_run_that_dies_without_a_crash_falls_back_for_the_rest() {
    let r = run_script("die", "");
    assert_eq!(r.code, Some(0), "{}", r.out);
    assert!(
        r.out
            .contains("cargo fuzz run proc_parsers ended (exit 1) without a crash report"),
        "{}",
        r.out
    );
    assert_executions_per_target(&r);
}

#[test]
fn libfuzzer_runs_print_their_executions() {
    let r = run_script("ok", "");
    assert_eq!(r.code, Some(0), "{}", r.out);
    assert_executions_per_target(&r);
    assert!(
        r.out.contains("fuzz: ran cargo-fuzz (libFuzzer, nightly)"),
        "{}",
        r.out
    );
}

#[test]
fn a_crash_fails_the_run_whichever_runner_found_it() {
    let r = run_script("crash", "");
    assert_eq!(r.code, Some(1), "{}", r.out);
    assert!(
        r.out.contains("cargo-fuzz proc_parsers FAILED"),
        "{}",
        r.out
    );
    for nightly in ["missing", "fail-build"] {
        let r = run_script(nightly, "crash");
        assert_ne!(r.code, Some(0), "{nightly}: {}", r.out);
        assert!(r.out.contains("CRASHED"), "{nightly}: {}", r.out);
    }
}

#[test]
fn an_input_that_hangs_libfuzzer_fails_the_run() {
    let r = run_script_with("hang", "", HANG_BOUNDS);
    assert_eq!(r.code, Some(1), "{}", r.out);
    assert!(
        r.out.contains("libFuzzer: timeout after 1 seconds"),
        "libFuzzer was given -timeout=1:\n{}",
        r.out
    );
    assert!(
        r.out.contains("cargo-fuzz proc_parsers FAILED"),
        "{}",
        r.out
    );
    assert!(
        !r.out.contains("running the stable runner"),
        "a hang is not fallen back from:\n{}",
        r.out
    );
}

#[test]
fn a_libfuzzer_run_that_never_ends_fails_the_run() {
    let r = run_script_with("hang-forever", "", HANG_BOUNDS);
    assert_eq!(r.code, Some(1), "{}", r.out);
    assert!(
        r.out
            .contains("cargo-fuzz proc_parsers FAILED: it did not end within 4 s (a hang)"),
        "{}",
        r.out
    );
    assert!(!r.out.contains("running the stable runner"), "{}", r.out);
    assert!(r.took < Duration::from_secs(90), "took {:?}", r.took);
}

#[test]
fn a_stable_runner_that_never_ends_fails_the_run() {
    // Five targets of 0.5 s (1 s each, rounded up) plus the 3 s of slack.
    let r = run_script_with("missing", "hang", HANG_BOUNDS);
    assert_eq!(r.code, Some(1), "{}", r.out);
    assert!(
        r.out.contains("at most 8 s"),
        "the bound is said up front:\n{}",
        r.out
    );
    assert!(
        r.out
            .contains("the stable runner FAILED: it did not end within 8 s"),
        "{}",
        r.out
    );
    assert!(r.took < Duration::from_secs(90), "took {:?}", r.took);
}
