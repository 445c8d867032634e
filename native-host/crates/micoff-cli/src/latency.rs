//! `micoff-host latency status|set|reset|restart-audio-service`: the capture latency the audio
//! server grants the browsers, and micoff's configuration of it (the library is `micoff_native::latency`;
//! the audio server is asked here, through `deps`, and handed to it).

use std::io::Write;

use crate::{EXIT_ERROR, EXIT_NOT_FOUND, EXIT_OK, EXIT_PARTIAL};
use micoff_exit::PID;
use micoff_native::deps::{latency_view, Deps, HostError};
use micoff_native::latency::{self, ms, SetRequest};
use micoff_native::protocol::{
    Browser, LatencySetResult, LatencyStatus, Mechanism, ServerKind, CAPTURE_MS,
};

/// `--json`'s help: `what` as the protocol's `result` JSON.
fn json_help(what: &str, result: &str) -> String {
    format!(
        "{what} as JSON (the protocol's `{result}` result: {})",
        micoff_native::protocol_doc()
    )
}

#[derive(Debug, clap::Args)]
pub struct LatencyArgs {
    #[command(subcommand)]
    pub command: LatencyCommand,
}

#[derive(Debug, clap::Subcommand)]
pub enum LatencyCommand {
    /// Per running browser, its capture streams at the server: asked, granted, what holds them
    /// down; what micoff has configured, whether it is in effect, what needs a restart.
    Status {
        #[arg(long, help = json_help("The status", "latency_status"))]
        json: bool,
    },
    /// Set the browsers' capture latency: a pipewire-pulse rule (capture clients, Chromium's
    /// playback), or on PulseAudio PULSE_LATENCY_MSEC in the browsers' desktop entries (playback
    /// changes too).
    /// Restarts nothing: it says what needs a restart.
    Set {
        #[arg(long, value_name = "N", value_parser = |s: &str| CAPTURE_MS.parse(s),
              help = CAPTURE_MS.help("Capture latency, in milliseconds."))]
        capture_ms: u32,
        /// Only these browsers (repeatable; default all).
        #[arg(long, value_enum)]
        browser: Vec<Browser>,
        /// Force a mechanism instead of the server's (also works without a reachable server).
        #[arg(long, value_enum)]
        mechanism: Option<Mechanism>,
        /// Show what would change; write nothing.
        #[arg(long)]
        dry_run: bool,
        #[arg(long, help = json_help("The result", "latency_set"))]
        json: bool,
    },
    /// End the Chromium-family audio service processes that have no stream open (the browser
    /// starts a new one, which connects with pipewire-pulse's current rules). One with an open
    /// stream is kept (ending it would cut the call).
    RestartAudioService {
        /// Only these browsers (chromium, chrome; default both).
        #[arg(long, value_enum)]
        browser: Vec<Browser>,
        #[arg(long, value_name = "P", value_parser = |s: &str| PID.parse(s),
              help = PID.help("Only the audio service of this browser process (its main pid)."))]
        browser_pid: Option<u32>,
        #[arg(long)]
        dry_run: bool,
        #[arg(long)]
        json: bool,
    },
    /// Remove every latency file micoff wrote (back to the browsers' default, after the restart
    /// it names).
    Reset {
        #[arg(long)]
        dry_run: bool,
        #[arg(long)]
        json: bool,
    },
}

pub async fn run(args: &LatencyArgs, deps: &Deps, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let paths = match &deps.latency_paths {
        Ok(p) => p,
        Err(e) => {
            micoff_exit::report(
                err,
                CMD,
                e,
                "set HOME (or XDG_CONFIG_HOME and XDG_DATA_HOME) to your folders",
            );
            return EXIT_ERROR;
        }
    };
    let (req, json) = match &args.command {
        LatencyCommand::Status { json } => {
            let view = latency_view(deps.audio.as_ref()).await;
            let st = latency::status(paths, &view);
            let written = if *json {
                serde_json::to_string_pretty(&st)
                    .map_err(std::io::Error::other)
                    .and_then(|s| writeln!(out, "{s}"))
            } else {
                write_status(out, &st)
            };
            let unreachable = st.server.kind == ServerKind::Unknown && st.server.version.is_none();
            return match (written.is_ok(), unreachable) {
                (false, _) => EXIT_ERROR,
                // Files are still reported, but nothing granted can be shown.
                (true, true) => EXIT_NOT_FOUND,
                (true, false) => EXIT_OK,
            };
        }
        LatencyCommand::RestartAudioService {
            browser,
            browser_pid,
            dry_run,
            json,
        } => {
            let restarted = async {
                let info = deps.audio.server_info().await?;
                let streams = deps.audio.streams().await?;
                latency::restart_audio_services(&info, &streams, browser, *browser_pid, *dry_run)
                    .map_err(HostError::from)
            };
            return match restarted.await {
                Ok(r) => {
                    let written = if *json {
                        serde_json::to_string_pretty(&r)
                            .map_err(std::io::Error::other)
                            .and_then(|s| writeln!(out, "{s}"))
                    } else {
                        writeln!(out, "{}", r.message)
                    };
                    match (written.is_ok(), r.kept.is_empty(), r.ended.is_empty()) {
                        (false, _, _) => EXIT_ERROR,
                        (true, false, _) => EXIT_PARTIAL,
                        (true, true, true) => EXIT_NOT_FOUND,
                        (true, true, false) => EXIT_OK,
                    }
                }
                Err(e) => fail(err, &e),
            };
        }
        LatencyCommand::Set {
            capture_ms,
            browser,
            mechanism,
            dry_run,
            json,
        } => (
            SetRequest {
                capture_ms: Some(*capture_ms),
                browsers: browser.clone(),
                mechanism: *mechanism,
                dry_run: *dry_run,
            },
            *json,
        ),
        LatencyCommand::Reset { dry_run, json } => (
            SetRequest {
                capture_ms: None,
                browsers: Vec::new(),
                mechanism: None,
                dry_run: *dry_run,
            },
            *json,
        ),
    };
    let view = latency_view(deps.audio.as_ref()).await;
    match latency::set_from_view(paths, &req, &view).map_err(HostError::from) {
        Ok(r) => {
            let written = if json {
                serde_json::to_string_pretty(&r)
                    .map_err(std::io::Error::other)
                    .and_then(|s| writeln!(out, "{s}"))
            } else {
                write_set(out, &r).and_then(|()| match (req.dry_run, r.mechanism) {
                    (true, Some(m)) => write!(out, "{}", latency::planned_diff(paths, &req, m)),
                    // No server to choose the mechanism: the diffs of both plans.
                    (true, None) if req.capture_ms.is_some() => {
                        [Mechanism::PipewirePulseRule, Mechanism::LaunchEnvironment]
                            .into_iter()
                            .try_for_each(|m| {
                                writeln!(out, "{}:", m.name())?;
                                write!(out, "{}", latency::planned_diff(paths, &req, m))
                            })
                    }
                    _ => Ok(()),
                })
            };
            if written.is_err() {
                EXIT_ERROR
            } else if r.skipped_files.is_empty() {
                EXIT_OK
            } else {
                EXIT_PARTIAL
            }
        }
        Err(e) => fail(err, &e),
    }
}

/// The subcommand's name in its error lines.
const CMD: &str = "latency";

fn fail(err: &mut dyn Write, e: &HostError) -> i32 {
    let todo = match e {
        HostError::Internal(_) => "check the files it names, then try again",
        _ => crate::todo_for(e),
    };
    micoff_exit::report(err, CMD, e, todo);
    match e {
        HostError::AudioServerUnavailable(_) => EXIT_NOT_FOUND,
        _ => EXIT_ERROR,
    }
}

fn write_status(out: &mut dyn Write, st: &LatencyStatus) -> std::io::Result<()> {
    let kind = match st.server.kind {
        ServerKind::Pulseaudio => "PulseAudio",
        ServerKind::PipewirePulse => "pipewire-pulse (PipeWire)",
        ServerKind::Unknown => "unknown",
    };
    writeln!(
        out,
        "audio server: {kind} {} (micoff would use: {})",
        st.server.version.as_deref().unwrap_or("?"),
        st.server.mechanism.name()
    )?;
    match &st.configured {
        None => writeln!(out, "configured: nothing (browser default)")?,
        Some(c) => writeln!(
            out,
            "configured: capture {} ms for {} via {} ({}); in effect: {}",
            c.capture_ms,
            c.browsers
                .iter()
                .map(|b| b.name())
                .collect::<Vec<_>>()
                .join(", "),
            c.mechanism.name(),
            c.files.join(", "),
            match c.in_effect {
                Some(true) => "yes",
                Some(false) => "no",
                None => "unknown (no capture stream open)",
            }
        )?,
    }
    if st.streams.is_empty() {
        writeln!(out, "capture streams: none open")?;
    }
    for s in &st.streams {
        writeln!(
            out,
            "stream #{} {} \"{}\" pid {} on {}: capture {} (buffer {}, fragment {}), asked {}, \
             source configured {}{}",
            s.index,
            s.browser.name(),
            s.client_name.as_deref().unwrap_or("?"),
            s.application_process_id
                .map_or_else(|| "?".into(), |p| p.to_string()),
            s.source_name.as_deref().unwrap_or("?"),
            ms(s.capture_latency_us),
            ms(s.granted_latency_us),
            s.granted_fragment_us.map_or_else(|| "not shown".into(), ms),
            s.requested_latency_us.map_or_else(|| "unknown".into(), ms),
            s.source_configured_latency_us
                .map_or_else(|| "?".into(), ms),
            s.rule_min_frag
                .as_deref()
                .map(|f| format!(", rule pulse.min.frag {f}"))
                .unwrap_or_default(),
        )?;
        for h in &s.held_down_by {
            writeln!(out, "  held down by {}", h.describe())?;
        }
    }
    if !st.needs_restart.is_empty() {
        writeln!(out, "needs a restart: {}", st.needs_restart.join(", "))?;
    }
    for n in &st.notes {
        writeln!(out, "note: {n}")?;
    }
    Ok(())
}

fn write_set(out: &mut dyn Write, r: &LatencySetResult) -> std::io::Result<()> {
    writeln!(out, "{}", r.message)?;
    if !r.needs_restart.is_empty() {
        writeln!(out, "needs a restart: {}", r.needs_restart.join(", "))?;
    }
    Ok(())
}
