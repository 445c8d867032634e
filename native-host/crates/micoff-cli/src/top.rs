//! `micoff-host top`: a live, pidstat-like table of the audio path's threads, with the audio
//! server's streams under it. `--json` prints one JSON line per interval.
//!
//! What it watches: `--pid P…` (each process and its descendants: one browser's tree from its
//! main process), `--browser F` (every running browser of that family, whole trees), or by default
//! every running Chromium-family and Firefox browser's tree; the audio server is always added.
//!
//! How: compact by default (at most `--lines` lines a refresh: role totals, the busiest processes,
//! the busiest threads of them all, [`report::write_compact`]); `--full` (or `--threads N`) every
//! process with its busiest threads ([`report::write_report`]). Every round takes one interval, also when there is nothing
//! to sample: named processes that are all gone end it (exit 4); the default mode waits for a
//! browser or the server to (re)appear.

use std::collections::BTreeSet;
use std::io::Write;
use std::sync::Arc;

use clap::ValueEnum;
use micoff_exit::{Range, PID};

use crate::{report, sample, EXIT_ERROR, EXIT_NOT_FOUND, EXIT_OK, EXIT_USAGE};
use micoff_native::deps::{CpuTicker, Deps, HostError, TickOutcome, RESOLVE_EVERY};
use micoff_native::protocol::{AudioStream, BrowserFamily, CpuReport, ProcessInfo};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum BrowserArg {
    Chromium,
    Firefox,
}

impl BrowserArg {
    fn family(self) -> BrowserFamily {
        match self {
            BrowserArg::Chromium => BrowserFamily::Chromium,
            BrowserArg::Firefox => BrowserFamily::Firefox,
        }
    }
}

/// `--interval`: seconds per refresh.
pub const INTERVAL_S: Range<f64> = Range::new(0.25, 600.0, "s");
/// `--count`: refreshes before it stops.
pub const COUNT: Range<u64> = Range::new(1, 1_000_000, "refreshes");
/// `--threads`: thread rows per process (`--full`).
pub const THREADS: Range<usize> = Range::new(0, 100_000, "rows");
/// `--threads`' default.
pub const THREADS_DEFAULT: usize = 8;
/// `--lines`: lines per refresh of the compact view (a terminal's height).
pub const LINES: Range<usize> = Range::new(12, 100_000, "lines");
/// `--lines`' default: a classic terminal's height.
pub const LINES_DEFAULT: usize = 24;

/// `top --help`'s closing text: what it watches, what the columns count, the exit codes.
pub fn after_help() -> String {
    format!(
        "Without --pid or --browser it watches every running Chromium-family and Firefox browser \
         (found in /proc) and the audio server, and waits for them when none runs. --pid P \
         watches P and its descendants (a browser's main process: that browser alone). With --pid \
         or --browser it ends (exit 4) once nothing named is left. Each refresh starts with the \
         local time it was taken, then fits in --lines lines: the role totals, the busiest \
         processes, the busiest threads of them all; --full shows every process with its \
         threads.\n\n{}\n\n{}",
        report::COLUMNS_HELP,
        crate::EXIT_CODES_HELP
    )
}

#[derive(Debug, Clone, clap::Args)]
pub struct TopArgs {
    #[arg(long = "pid", value_name = "P", conflicts_with = "browser",
          value_parser = |s: &str| PID.parse(s),
          help = PID.help("Process to watch with its descendants (repeatable), a process id; the \
              audio server is always added."))]
    pub pids: Vec<u32>,
    /// Watch every running browser of this family (its whole process tree) instead of all.
    #[arg(long, value_enum)]
    pub browser: Option<BrowserArg>,
    #[arg(long, value_name = "S", default_value_t = 1.0,
          value_parser = |s: &str| INTERVAL_S.parse(s),
          help = INTERVAL_S.help("Seconds per refresh."))]
    pub interval: f64,
    #[arg(long, value_name = "N", value_parser = |s: &str| COUNT.parse(s),
          help = COUNT.help("Stop after this many refreshes (default: until Ctrl-C)."))]
    pub count: Option<u64>,
    #[arg(long, value_name = "N", value_parser = |s: &str| THREADS.parse(s),
          help = THREADS.help("Thread rows per process (busiest first) in the full view; gives \
              the full view. Default 8."))]
    pub threads: Option<usize>,
    /// Every process with its busiest threads (--threads per process), instead of the compact
    /// view.
    #[arg(long)]
    pub full: bool,
    #[arg(long, value_name = "N", default_value_t = LINES_DEFAULT,
          value_parser = |s: &str| LINES.parse(s),
          help = LINES.help("Lines per refresh in the compact view, the first (`watching …`) \
              included."))]
    pub lines: usize,
    /// One JSON line per interval: {"time": RFC 3339 local time, "idle_threads_hidden": N,
    /// "report": CpuReport, "streams": [AudioStream]}. Notes (what is watched, what vanished) go
    /// to stderr.
    #[arg(long)]
    pub json: bool,
    /// Show idle threads too (no CPU time and no wakeup in the interval).
    #[arg(long)]
    pub all: bool,
}

/// How `top` writes: table or JSON lines on `out`, notes on `err`; `clear` clears the screen
/// before each table (only when stdout is a terminal).
pub struct TopOutput<'a> {
    pub out: &'a mut dyn Write,
    pub err: &'a mut dyn Write,
    pub clear: bool,
}

#[derive(serde::Serialize)]
struct Line<'a> {
    #[serde(flatten)]
    shown: &'a report::Shown,
    report: &'a CpuReport,
    streams: &'a [AudioStream],
}

/// What the user asked to watch.
enum Watch {
    /// `--pid`: the named processes still running (with their names, once known).
    Pids(Vec<(u32, String)>),
    /// `--browser`: every running browser of the family.
    Family(BrowserFamily),
    /// Every running browser and the audio server, waiting for them when none runs.
    Everything,
}

/// One round's targets.
enum Targets {
    /// Sample these; `picked` says what they are.
    Sample { pids: Vec<u32>, picked: String },
    /// Nothing to sample; why.
    Nothing(String),
}

pub async fn run(args: &TopArgs, deps: &Deps, io: TopOutput<'_>) -> i32 {
    let TopOutput { out, err, clear } = io;
    let Some(interval) = sample::window(args.interval, &INTERVAL_S) else {
        micoff_exit::report(
            err,
            CMD,
            format!("--interval must be {}", INTERVAL_S.describe()),
            "give an interval in that range",
        );
        return EXIT_USAGE;
    };
    let mut watch = match (args.browser, args.pids.is_empty()) {
        (Some(b), _) => Watch::Family(b.family()),
        (None, false) => match named_processes(deps, &args.pids).await {
            Ok(named) if !named.is_empty() => Watch::Pids(named),
            Ok(_) => {
                micoff_exit::report(
                    err,
                    CMD,
                    format!("no process {}: nothing to watch", list(&args.pids)),
                    "give the id of a running process (ps -e)",
                );
                return EXIT_NOT_FOUND;
            }
            Err(e) => return fail(err, &e),
        },
        (None, true) => Watch::Everything,
    };
    let mut done = 0u64;
    let mut shown = 0u64;
    let mut last_note = String::new();
    let mut browsers_seen: Vec<ProcessInfo> = Vec::new();
    // The subscription's stateful sampler: each round costs what a `cpu` event costs (one kept-open
    // `schedstat` per thread, full reads only for threads that ran), not two full walks.
    let mut ticker = Some(Arc::clone(&deps.sampler).cpu_ticker(Some(Vec::new())));
    // What the ticker watches, and since when (the processes are looked for again every
    // RESOLVE_EVERY, or at once when a named one is gone).
    let mut watching: Option<(tokio::time::Instant, Vec<u32>, String)> = None;
    let mut primed = false;
    let ctrl_c = tokio::signal::ctrl_c();
    tokio::pin!(ctrl_c);
    while args.count.is_none_or(|n| done < n) {
        let round_end = tokio::time::Instant::now() + interval;
        let due = watching
            .as_ref()
            .is_none_or(|(at, _, _)| at.elapsed() >= RESOLVE_EVERY);
        let targets = match &watching {
            Some((_, pids, picked)) if !due => Targets::Sample {
                pids: pids.clone(),
                picked: picked.clone(),
            },
            _ => match resolve(deps, &watch, &mut browsers_seen).await {
                Ok(t) => t,
                Err(e) => Targets::Nothing(format!("looking for processes failed: {e}")),
            },
        };
        let (pids, picked) = match targets {
            Targets::Sample { pids, picked } => (pids, picked),
            Targets::Nothing(why) => {
                watching = None;
                if !matches!(watch, Watch::Everything) {
                    micoff_exit::report(
                        err,
                        CMD,
                        format!("{why}: nothing left to watch"),
                        NOTHING_LEFT,
                    );
                    return EXIT_NOT_FOUND;
                }
                let note = format!(
                    "waiting: {why} (looking again every {:.2} s)",
                    args.interval
                );
                let written = if args.json {
                    note_once(err, &mut last_note, &note)
                } else {
                    screen(out, clear).and_then(|()| writeln!(out, "micoff-host top: {note}"))
                };
                if let Err(e) = written.and_then(|()| out.flush()) {
                    return cannot_write(err, &e);
                }
                done += 1;
                tokio::select! {
                    () = tokio::time::sleep_until(round_end) => continue,
                    _ = &mut ctrl_c => return EXIT_OK,
                }
            }
        };
        if due {
            if let Some(t) = ticker.as_mut() {
                t.set_pids(pids.clone());
            }
            watching = Some((tokio::time::Instant::now(), pids, picked.clone()));
        }
        if !primed {
            // The baseline the first report is measured from.
            let (back, _) = tick(&mut ticker, deps).await;
            ticker = Some(back);
            primed = true;
        }
        tokio::select! {
            () = tokio::time::sleep_until(round_end) => {}
            _ = &mut ctrl_c => return EXIT_OK,
        }
        let (back, outcome) = tick(&mut ticker, deps).await;
        ticker = Some(back);
        let mut report = match outcome {
            Ok(TickOutcome {
                report: Some(report),
                ..
            }) => report,
            Ok(TickOutcome { report: None, .. }) => {
                done += 1;
                continue;
            }
            Err(e) => {
                // The sampler failed (out of file descriptors): the next round tries again; this
                // one took its interval.
                let _ = note_once(err, &mut last_note, &format!("micoff-host top: {e}"));
                done += 1;
                continue;
            }
        };
        let gone = match &mut watch {
            Watch::Pids(named) => prune_named(named, &report),
            _ => Vec::new(),
        };
        if !gone.is_empty() || !report.gone_pids.is_empty() {
            watching = None; // look again next round
        }
        let streams = deps.audio.streams().await.unwrap_or_default();
        let stamp = report::Shown::now(&mut report, args.all);
        let written = if args.json {
            note_once(
                err,
                &mut last_note,
                &format!("micoff-host top: watching {picked}"),
            )
            .and_then(|()| {
                let line = serde_json::to_string(&Line {
                    shown: &stamp,
                    report: &report,
                    streams: &streams,
                })
                .map_err(std::io::Error::other)?;
                writeln!(out, "{line}")
            })
        } else {
            screen(out, clear).and_then(|()| {
                writeln!(out, "watching {picked}")?;
                if args.full || args.threads.is_some() {
                    let threads = args.threads.unwrap_or(THREADS_DEFAULT);
                    report::write_report(out, &report, &stamp, Some(threads))?;
                    report::write_streams(out, &streams)
                } else {
                    report::write_compact(out, &report, &stamp, &streams, args.lines - 1)
                }
            })
        };
        if let Err(e) = written.and_then(|()| out.flush()) {
            return cannot_write(err, &e);
        }
        shown += 1;
        done += 1;
        for (pid, name) in &gone {
            let _ = writeln!(err, "micoff-host top: process {pid} ({name}) is gone");
        }
        if matches!(&watch, Watch::Pids(named) if named.is_empty()) {
            micoff_exit::report(
                err,
                CMD,
                "every named process is gone: nothing left to watch",
                NOTHING_LEFT,
            );
            return EXIT_NOT_FOUND;
        }
    }
    if shown == 0 {
        micoff_exit::report(
            err,
            CMD,
            "nothing was found to watch",
            "start a browser or the audio server, or give a larger --count",
        );
        return EXIT_NOT_FOUND;
    }
    EXIT_OK
}

/// The subcommand's name in its error lines.
const CMD: &str = "top";

/// What to do once everything named has gone.
const NOTHING_LEFT: &str = "start it again, or run `micoff-host top` alone to wait for any browser";

fn cannot_write(err: &mut dyn Write, e: &std::io::Error) -> i32 {
    micoff_exit::report(
        err,
        CMD,
        format!("cannot write: {e}"),
        "check where the output goes",
    );
    EXIT_ERROR
}

/// One tick of the ticker (a new one when the last tick's task took it down).
async fn tick(
    ticker: &mut Option<Box<dyn CpuTicker>>,
    deps: &Deps,
) -> (Box<dyn CpuTicker>, Result<TickOutcome, HostError>) {
    let t = ticker
        .take()
        .unwrap_or_else(|| Arc::clone(&deps.sampler).cpu_ticker(Some(Vec::new())));
    t.tick().await
}

/// The named pids that exist, with their names.
async fn named_processes(deps: &Deps, pids: &[u32]) -> Result<Vec<(u32, String)>, HostError> {
    let mut named = Vec::new();
    let unique: BTreeSet<u32> = pids.iter().copied().collect();
    for pid in unique {
        match deps.sampler.processes(Some(pid)).await {
            Ok(tree) => {
                let name = tree
                    .processes
                    .first()
                    .map_or_else(|| "?".to_owned(), |p| p.comm.clone());
                named.push((pid, name));
            }
            Err(HostError::NotFound(_)) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(named)
}

/// Drops the named processes the report no longer has (gone during the window, or already
/// missing at its start); returns them.
fn prune_named(named: &mut Vec<(u32, String)>, report: &CpuReport) -> Vec<(u32, String)> {
    let alive = |pid: u32| {
        report.processes.iter().any(|p| p.pid == pid) && !report.gone_pids.contains(&pid)
    };
    let (keep, gone): (Vec<_>, Vec<_>) = named.drain(..).partition(|(pid, _)| alive(*pid));
    *named = keep;
    gone
}

/// This round's pids and a description of them.
async fn resolve(
    deps: &Deps,
    watch: &Watch,
    browsers_seen: &mut Vec<ProcessInfo>,
) -> Result<Targets, HostError> {
    let mut pids: BTreeSet<u32> = BTreeSet::new();
    let mut parts: Vec<String> = Vec::new();
    // The audio server, from the first browser walk (each one carries it); `None` until then.
    let mut server: Option<Vec<ProcessInfo>> = None;
    match watch {
        Watch::Pids(named) => {
            if named.is_empty() {
                return Ok(Targets::Nothing("every named process is gone".into()));
            }
            for (pid, name) in named {
                // The process and its descendants (one gone since is looked for again next round).
                let tree = match deps.sampler.processes(Some(*pid)).await {
                    Ok(tree) => tree,
                    Err(HostError::NotFound(_)) => continue,
                    Err(e) => return Err(e),
                };
                pids.insert(*pid);
                pids.extend(tree.processes.iter().map(|p| p.pid));
                server.get_or_insert(tree.audio_server);
                parts.push(match tree.processes.len() {
                    0 | 1 => format!("{name} (pid {pid})"),
                    n => format!("{name} (pid {pid}, {n} processes)"),
                });
            }
        }
        Watch::Family(_) | Watch::Everything => {
            let family = match watch {
                Watch::Family(f) => Some(*f),
                _ => None,
            };
            let browsers = deps.sampler.browsers(family).await?;
            for b in &browsers {
                // A browser that exits between the listing and the walk is simply not there.
                let tree = match deps.sampler.processes(Some(b.pid)).await {
                    Ok(tree) => tree,
                    Err(HostError::NotFound(_)) => continue,
                    Err(e) => return Err(e),
                };
                pids.extend(tree.processes.iter().map(|p| p.pid));
                server.get_or_insert(tree.audio_server);
                parts.push(format!(
                    "{} (pid {}, {} processes)",
                    b.comm,
                    b.pid,
                    tree.processes.len()
                ));
            }
            if let Watch::Family(f) = watch {
                if parts.is_empty() {
                    let gone: Vec<String> = browsers_seen
                        .iter()
                        .map(|b| format!("{} (pid {})", b.comm, b.pid))
                        .collect();
                    return Ok(Targets::Nothing(if gone.is_empty() {
                        format!("no running {} browser", f.as_str())
                    } else {
                        format!("{} exited", gone.join(", "))
                    }));
                }
            }
            *browsers_seen = browsers;
        }
    }
    let browsers_found = !parts.is_empty();
    let server = match server {
        Some(server) => server,
        None => deps.sampler.processes(None).await?.audio_server,
    };
    if server.is_empty() {
        parts.push("no audio server running".into());
    } else {
        let names: Vec<String> = server
            .iter()
            .map(|p| format!("{} (pid {})", p.comm, p.pid))
            .collect();
        parts.push(format!("the audio server {}", names.join(", ")));
    }
    pids.extend(server.iter().map(|p| p.pid));
    if pids.is_empty() {
        return Ok(Targets::Nothing(
            "no Chromium-family or Firefox browser and no audio server is running".into(),
        ));
    }
    let mut picked = parts.join(", ");
    if matches!(watch, Watch::Everything) && !browsers_found {
        picked.push_str("; no browser running");
    }
    Ok(Targets::Sample {
        pids: pids.into_iter().collect(),
        picked,
    })
}

fn screen(out: &mut dyn Write, clear: bool) -> std::io::Result<()> {
    if clear {
        write!(out, "\x1b[2J\x1b[H")
    } else {
        writeln!(out)
    }
}

/// Writes a note to stderr unless it is the same as the last one (no repeats every interval).
fn note_once(err: &mut dyn Write, last: &mut String, note: &str) -> std::io::Result<()> {
    if last != note {
        last.clear();
        last.push_str(note);
        writeln!(err, "{note}")?;
    }
    Ok(())
}

fn list(pids: &[u32]) -> String {
    pids.iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

fn fail(err: &mut dyn Write, e: &HostError) -> i32 {
    micoff_exit::report(err, CMD, e, crate::todo_for(e));
    crate::exit_code_for(e)
}
