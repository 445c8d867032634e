//! `micoff-fuzz [--seconds S] [--runs N] [--timeout T] [--fuzz-dir DIR] [--seed N] [TARGET...]`:
//! the stable bounded fuzz run. For each target (default: all): every committed seed, then mutations
//! with `DIR/dicts/<target>.dict` for S seconds (default 20) or N mutations, whichever ends first
//! (with `--seed`, N mutations are the same run every time). A crash is written to
//! `DIR/artifacts/<target>/crash-<hash>`, an input over T seconds (default 10) to `.../timeout-<hash>`,
//! and the run exits 1. `--replay FILE...` runs the given inputs once per `--target`.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use micoff_fuzz::bounded::{run_bounded, Finding, Limits};
use micoff_fuzz::mutate::{parse_dict, read_dir_files};
use micoff_fuzz::TARGETS;

/// Inputs larger than this are cut (the parsers read small files; frames are capped too).
const MAX_LEN: usize = 8192;

fn usage() -> ExitCode {
    eprintln!(
        "usage: micoff-fuzz [--seconds S] [--runs N] [--timeout T] [--fuzz-dir DIR] [--seed N] \
         [TARGET...]"
    );
    eprintln!(
        "targets: {}",
        TARGETS
            .iter()
            .map(|(n, _)| *n)
            .collect::<Vec<_>>()
            .join(", ")
    );
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let mut seconds = 20.0f64;
    let mut runs = None;
    // Per input: the parsers take microseconds on inputs of at most MAX_LEN bytes.
    let mut timeout_s = 10.0f64;
    let mut dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../fuzz"));
    let mut seed = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64);
    let mut names = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--seconds" => match args.next().and_then(|v| v.parse().ok()) {
                Some(s) => seconds = s,
                None => return usage(),
            },
            "--runs" => match args.next().and_then(|v| v.parse().ok()) {
                Some(n) => runs = Some(n),
                None => return usage(),
            },
            "--timeout" => match args.next().and_then(|v| v.parse().ok()) {
                Some(s) => timeout_s = s,
                None => return usage(),
            },
            "--fuzz-dir" => match args.next() {
                Some(d) => dir = PathBuf::from(d),
                None => return usage(),
            },
            "--seed" => match args.next().and_then(|v| v.parse().ok()) {
                Some(s) => seed = s,
                None => return usage(),
            },
            "-h" | "--help" => {
                usage();
                return ExitCode::SUCCESS;
            }
            name if TARGETS.iter().any(|(n, _)| *n == name) => names.push(name.to_owned()),
            _ => return usage(),
        }
    }
    if names.is_empty() {
        names = TARGETS.iter().map(|(n, _)| (*n).to_owned()).collect();
    }
    let mut summary = Vec::new();
    let mut stdout = std::io::stdout().lock();
    for name in &names {
        let Some((_, target)) = TARGETS.iter().find(|(n, _)| n == name) else {
            return usage();
        };
        let seeds = match read_dir_files(&dir.join("seeds").join(name)) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("micoff-fuzz: {name}: cannot read its seeds: {e}");
                return ExitCode::FAILURE;
            }
        };
        if seeds.is_empty() {
            eprintln!(
                "micoff-fuzz: {name}: no seeds in {}",
                dir.join("seeds").join(name).display()
            );
            return ExitCode::FAILURE;
        }
        let dict = std::fs::read_to_string(dir.join("dicts").join(format!("{name}.dict")))
            .map(|t| parse_dict(&t))
            .unwrap_or_default();
        let n_seeds = seeds.len();
        let limits = Limits {
            budget: Duration::from_secs_f64(seconds),
            mutations: runs,
            per_input: Duration::from_secs_f64(timeout_s),
            max_len: MAX_LEN,
        };
        let out = run_bounded(
            *target,
            seeds.into_iter().map(|(_, b)| b).collect(),
            &dict,
            limits,
            seed,
        );
        let rate = out.executions as f64 / out.elapsed.as_secs_f64().max(1e-9);
        let _ = writeln!(
            stdout,
            "{name}: {} executions in {:.1} s ({rate:.0}/s), {n_seeds} seeds, {} dictionary words, \
             {} behaviours seen, corpus grew to {} (rng seed {seed})",
            out.executions,
            out.elapsed.as_secs_f64(),
            dict.len(),
            out.signatures,
            out.corpus
        );
        if let Some(finding) = out.finding {
            let (kind, input) = match &finding {
                Finding::Crash { input, message } => {
                    eprintln!("micoff-fuzz: {name} CRASHED: {message}");
                    ("crash", input)
                }
                Finding::Hang { input, ran } => {
                    eprintln!(
                        "micoff-fuzz: {name} HUNG: one input ran over the {timeout_s} s limit (still \
                         running after {:.1} s)",
                        ran.as_secs_f64()
                    );
                    ("timeout", input)
                }
            };
            save_input(&dir, name, kind, input);
            return ExitCode::FAILURE;
        }
        summary.push(format!("{name} {}", out.executions));
    }
    let _ = writeln!(
        stdout,
        "fuzz (stable runner): executions per target: {}; no crash",
        summary.join(", ")
    );
    ExitCode::SUCCESS
}

/// Writes what a target crashed or hung on to `DIR/artifacts/<name>/<kind>-<hash>` (libFuzzer's
/// names), and says where (or, when it cannot be written, the input itself).
fn save_input(dir: &std::path::Path, name: &str, kind: &str, input: &[u8]) {
    let hash = input.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    });
    let art = dir.join("artifacts").join(name);
    let file = art.join(format!("{kind}-{hash:016x}"));
    match std::fs::create_dir_all(&art).and_then(|()| std::fs::write(&file, input)) {
        Ok(()) => eprintln!(
            "input saved as {} ({} bytes); add it to seeds/{name}/ once fixed",
            file.display(),
            input.len()
        ),
        Err(e) => eprintln!("could not save the input ({e}): {input:?}"),
    }
}
