//! `micoff-host sample`: one CPU report over a window (used by the demo and the e2e tests).

use std::collections::BTreeSet;
use std::io::Write;
use std::time::Duration;

use micoff_exit::{Range, PID};

use crate::{report, EXIT_ERROR, EXIT_NOT_FOUND, EXIT_OK, EXIT_USAGE};
use micoff_native::deps::{Deps, HostError};
use micoff_native::protocol::CpuReport;

/// `--window`: how long one report measures.
pub const WINDOW_S: Range<f64> = Range::new(0.1, 600.0, "s");

#[derive(Debug, Clone, clap::Args)]
pub struct SampleArgs {
    #[arg(long = "pid", value_name = "P", value_parser = |s: &str| PID.parse(s),
          help = PID.help("Process to sample (repeatable), a process id; all its threads."))]
    pub pids: Vec<u32>,
    #[arg(long, value_name = "P", value_parser = |s: &str| PID.parse(s),
          help = PID.help("A browser's main process: sample its whole process tree."))]
    pub browser_pid: Option<u32>,
    /// Also sample the audio server's process(es) (found by its socket).
    #[arg(long)]
    pub audio_server: bool,
    #[arg(long, value_name = "S", default_value_t = 1.0, value_parser = |s: &str| WINDOW_S.parse(s),
          help = WINDOW_S.help("How long the report measures, in seconds."))]
    pub window: f64,
    /// Print one JSON document instead of a table: the protocol's CpuReport with `time` (when it
    /// was taken, RFC 3339 local time) and `idle_threads_hidden` beside its fields.
    #[arg(long)]
    pub json: bool,
    /// Show idle threads too (no CPU time and no wakeup in the window).
    #[arg(long)]
    pub all: bool,
}

/// `sample --help`'s closing text: what the columns count, the exit codes.
pub fn after_help() -> String {
    format!("{}\n\n{}", report::COLUMNS_HELP, crate::EXIT_CODES_HELP)
}

/// `sample --json`: the report's own fields, with when it was taken and what was left out.
#[derive(serde::Serialize)]
struct Json<'a> {
    #[serde(flatten)]
    shown: &'a report::Shown,
    #[serde(flatten)]
    report: &'a CpuReport,
}

/// The pids `sample` / `top` measure: explicit pids, a browser's tree, the audio server.
pub async fn resolve_pids(
    deps: &Deps,
    pids: &[u32],
    browser_pids: &[u32],
    audio_server: bool,
) -> Result<Vec<u32>, HostError> {
    let mut all: BTreeSet<u32> = pids.iter().copied().collect();
    for browser in browser_pids {
        let tree = deps.sampler.processes(Some(*browser)).await?;
        all.extend(tree.processes.iter().map(|p| p.pid));
        if audio_server {
            all.extend(tree.audio_server.iter().map(|p| p.pid));
        }
    }
    if audio_server && browser_pids.is_empty() {
        let found = deps.sampler.processes(None).await?;
        all.extend(found.audio_server.iter().map(|p| p.pid));
    }
    Ok(all.into_iter().collect())
}

/// `seconds` as a window when `range` allows it.
pub fn window(seconds: f64, range: &Range<f64>) -> Option<Duration> {
    range
        .contains(seconds)
        .then(|| Duration::from_secs_f64(seconds))
}

pub async fn run(args: &SampleArgs, deps: &Deps, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let Some(window) = window(args.window, &WINDOW_S) else {
        micoff_exit::report(
            err,
            CMD,
            format!("--window must be {}", WINDOW_S.describe()),
            "give a window in that range",
        );
        return EXIT_USAGE;
    };
    if args.pids.is_empty() && args.browser_pid.is_none() && !args.audio_server {
        micoff_exit::report(
            err,
            CMD,
            "nothing named to sample",
            "give --pid, --browser-pid and/or --audio-server",
        );
        return EXIT_USAGE;
    }
    let browsers: Vec<u32> = args.browser_pid.into_iter().collect();
    let pids = match resolve_pids(deps, &args.pids, &browsers, args.audio_server).await {
        Ok(pids) => pids,
        Err(e) => return fail(&e, err),
    };
    if pids.is_empty() {
        micoff_exit::report(
            err,
            CMD,
            "nothing to sample: no audio server process found",
            "start PulseAudio or PipeWire, or name processes with --pid",
        );
        return EXIT_NOT_FOUND;
    }
    match deps.sampler.cpu_sample(Some(pids), window).await {
        Ok(mut report) => {
            let shown = report::Shown::now(&mut report, args.all);
            print(args.json, &report, &shown, out, err)
        }
        Err(e) => fail(&e, err),
    }
}

/// The subcommand's name in its error lines.
const CMD: &str = "sample";

fn fail(e: &HostError, err: &mut dyn Write) -> i32 {
    micoff_exit::report(err, CMD, e, crate::todo_for(e));
    crate::exit_code_for(e)
}

fn print(
    json: bool,
    report: &CpuReport,
    shown: &report::Shown,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    let written = if json {
        serde_json::to_string(&Json { shown, report })
            .map_err(std::io::Error::other)
            .and_then(|line| writeln!(out, "{line}"))
    } else {
        report::write_report(out, report, shown, None)
    };
    match written.and_then(|()| out.flush()) {
        Ok(()) => EXIT_OK,
        Err(e) => {
            micoff_exit::report(
                err,
                CMD,
                format!("cannot write the report: {e}"),
                "check where the output goes",
            );
            EXIT_ERROR
        }
    }
}
