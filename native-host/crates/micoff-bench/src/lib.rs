//! `micoff-host bench record|playback`: what the audio path costs a low-latency client and the
//! server, per thread, with and without srbchannel, against the requested latency
//! (docs/design/srbchannel-bench.md). The host wires a `bench` subcommand to [`run`]; the child is
//! `<current_exe> bench <direction> --child ...`. Module map, top down: [`run`] (the parent) over
//! `window`, `our_client`, [`reference`] (parec / pacat), `started`, `ctx` ([`ChildCommand`]),
//! [`conf`] (client.conf emulation), `progress`, [`notes`], [`plan`], [`chart`], [`report`],
//! [`sample`], [`server`], [`client`] (the measured libpulse client), [`error`]
//! ([`error::BenchError`]), `args` ([`BenchArgs`], [`Direction`]).

mod args;
pub mod chart;
pub mod client;
pub mod conf;
mod ctx;
pub mod error;
pub mod notes;
mod our_client;
pub mod plan;
mod progress;
pub mod reference;
pub mod report;
pub mod run;
pub mod sample;
pub mod server;
mod started;
mod window;

pub use args::{BenchArgs, CompareArg, Direction, SrbchannelArg};
pub use ctx::ChildCommand;

use std::io::Write;

use micoff_exit::{EXIT_ERROR, EXIT_OK};

/// Entry point for `micoff-host bench ...`: re-executes the current executable as
/// `<exe> bench <direction> --child ...` for the measured client. Returns micoff-host's
/// documented exit code: 0 ok, 1 error, 2 usage error, 4 no audio server (or no such device).
pub fn run(args: &BenchArgs, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    match ChildCommand::current_exe(&["bench"]) {
        Ok(child) => run_with(args, &child, out, err),
        Err(e) => {
            micoff_exit::report(
                err,
                "bench",
                format!("cannot find its own executable: {e}"),
                "run micoff-host by its full path",
            );
            EXIT_ERROR
        }
    }
}

/// Like [`run`], with an explicit way to start the child (the standalone `micoff-bench` binary
/// passes no prefix).
pub fn run_with(
    args: &BenchArgs,
    child: &ChildCommand,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    if args.child {
        return run_child(args, out, err);
    }
    match run::run_bench(args, child, out, err) {
        Ok(()) => EXIT_OK,
        Err(e) => {
            micoff_exit::report(err, "bench", &e, e.what_to_do());
            e.exit_code()
        }
    }
}

fn run_child(args: &BenchArgs, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let cfg = client::ClientConfig {
        direction: args.direction,
        latency_ms: args.latency_ms.first().copied().unwrap_or(10),
        device: match args.direction {
            Direction::Record => args.source.clone(),
            Direction::Playback => args.sink.clone(),
        },
        server: args.server.clone(),
        app_name: args
            .app_name
            .clone()
            .unwrap_or_else(|| "micoff-bench".to_string()),
    };
    match client::run_client(&cfg, out) {
        Ok(()) => EXIT_OK,
        Err(e) => {
            let msg = client::ChildMessage::Error {
                message: e.to_string(),
                not_found: matches!(e, client::ClientError::NotFound(_)),
            };
            // The bench reports it (its own error line); this line is for a client the bench
            // could not hear from.
            match serde_json::to_string(&msg)
                .map_err(std::io::Error::other)
                .and_then(|line| writeln!(out, "{line}"))
                .and_then(|()| out.flush())
            {
                Ok(()) => {}
                Err(_) => micoff_exit::report(
                    err,
                    "bench",
                    format!("the measured client: {e}"),
                    "run the bench again",
                ),
            }
            EXIT_ERROR
        }
    }
}
