//! `micoff-host top`: a live, pidstat-like table of the audio path's threads, with the audio
//! server's streams under it. `--json` prints one JSON line per interval.

use std::io::Write;

use clap::ValueEnum;

use crate::cli::{report, sample, EXIT_ERROR, EXIT_NOT_FOUND, EXIT_OK, EXIT_USAGE};
use crate::deps::Deps;
use crate::protocol::{AudioStream, BrowserFamily, CpuReport};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum BrowserArg {
    Chromium,
    Firefox,
}

#[derive(Debug, Clone, clap::Args)]
pub struct TopArgs {
    /// Process to watch (repeatable); the audio server is always added.
    #[arg(long = "pid", value_name = "P", conflicts_with = "browser")]
    pub pids: Vec<u32>,
    /// Watch every running browser of this family (its whole process tree).
    #[arg(long, value_enum)]
    pub browser: Option<BrowserArg>,
    /// Seconds per refresh (0.25 to 600).
    #[arg(long, value_name = "S", default_value_t = 1.0)]
    pub interval: f64,
    /// Stop after this many refreshes (default: until Ctrl-C).
    #[arg(long, value_name = "N")]
    pub count: Option<u64>,
    /// Thread rows per process (busiest first).
    #[arg(long, value_name = "N", default_value_t = 8)]
    pub threads: usize,
    /// One JSON line per interval: {"report": CpuReport, "streams": [AudioStream]}.
    #[arg(long)]
    pub json: bool,
}

#[derive(serde::Serialize)]
struct Line<'a> {
    report: &'a CpuReport,
    streams: &'a [AudioStream],
}

pub async fn run(args: &TopArgs, deps: &Deps, out: &mut dyn Write) -> i32 {
    let Some(interval) = sample::window(args.interval).filter(|d| d.as_millis() >= 250) else {
        tracing::error!("--interval must be between 0.25 and 600 seconds");
        return EXIT_USAGE;
    };
    let browsers = match args.browser {
        None => Vec::new(),
        Some(arg) => {
            let family = match arg {
                BrowserArg::Chromium => BrowserFamily::Chromium,
                BrowserArg::Firefox => BrowserFamily::Firefox,
            };
            match deps.sampler.browsers(family).await {
                Ok(list) if !list.is_empty() => list,
                Ok(_) => {
                    tracing::error!("no running {arg:?} found");
                    return EXIT_NOT_FOUND;
                }
                Err(e) => {
                    tracing::error!("{e}");
                    return EXIT_ERROR;
                }
            }
        }
    };
    let mut done = 0u64;
    let ctrl_c = tokio::signal::ctrl_c();
    tokio::pin!(ctrl_c);
    while args.count.is_none_or(|n| done < n) {
        // Re-resolve every round: renderers and streams come and go.
        let pids = match sample::resolve_pids(deps, &args.pids, &browsers, true).await {
            Ok(pids) if !pids.is_empty() => pids,
            Ok(_) => {
                tracing::error!("nothing to watch (no process and no audio server found)");
                return EXIT_NOT_FOUND;
            }
            Err(e) => {
                tracing::error!("{e}");
                return EXIT_ERROR;
            }
        };
        let report = tokio::select! {
            r = deps.sampler.cpu_sample(Some(pids), interval) => r,
            _ = &mut ctrl_c => return EXIT_OK,
        };
        let report = match report {
            Ok(report) => report,
            Err(e) => {
                tracing::warn!("{e}");
                continue;
            }
        };
        let streams = deps.audio.streams().await.unwrap_or_default();
        let written = if args.json {
            serde_json::to_string(&Line {
                report: &report,
                streams: &streams,
            })
            .map_err(std::io::Error::other)
            .and_then(|line| writeln!(out, "{line}"))
        } else {
            writeln!(out, "\x1b[2J\x1b[H").and_then(|()| {
                report::write_report(out, &report, Some(args.threads))?;
                report::write_streams(out, &streams)
            })
        };
        if let Err(e) = written.and_then(|()| out.flush()) {
            tracing::error!("cannot write: {e}");
            return EXIT_ERROR;
        }
        done += 1;
    }
    EXIT_OK
}
