//! The command line: native messaging mode is chosen by the browser's arguments (see `main.rs`);
//! everything else is a subcommand. Output goes through an explicit writer (stdout is the protocol
//! in native messaging mode, so nothing here prints on its own).

pub mod latency;
pub mod report;
pub mod sample;
pub mod top;

use std::io::{IsTerminal, Write};

use clap::{Parser, Subcommand};

pub use micoff_exit::{
    EXIT_CODES_HELP, EXIT_ERROR, EXIT_NOT_FOUND, EXIT_OK, EXIT_PARTIAL, EXIT_USAGE,
};

#[derive(Debug, Parser)]
#[command(
    name = "micoff-host",
    version = crate::VERSION,
    about = "micoff native messaging host and tools: per-thread CPU of the browser's audio path and \
             the audio server.",
    long_about = "micoff native messaging host and tools.\n\nStarted by a browser (first argument \
                  `chrome-extension://<id>/`, or a Firefox manifest path and extension id) it speaks \
                  native messaging on stdin/stdout (native-host/PROTOCOL.md). Otherwise it runs one of \
                  the subcommands below.",
    after_help = EXIT_CODES_HELP
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// One CPU report (per process and thread) over a window.
    #[command(after_help = EXIT_CODES_HELP)]
    Sample(sample::SampleArgs),
    /// Live per-thread CPU of the audio path (browser + audio server), with the server's streams.
    #[command(after_help = EXIT_CODES_HELP)]
    Top(top::TopArgs),
    /// Install (or remove) the native messaging host manifest for the browsers on this machine.
    Install(crate::install::InstallArgs),
    /// Undo everything micoff wrote, from micoff's record.
    ///
    /// Host manifests, Firefox's user.js lines (its prefs put back) and add-on copies, policies,
    /// Chromium's entry and crx copy, capture latency's files, the fixes. A file edited since
    /// micoff wrote it is left and named (exit 3).
    Uninstall(crate::uninstall::UninstallArgs),
    /// Check the machine's audio path (kernel, HDA, governor, audio server) and explain.
    #[command(after_help = EXIT_CODES_HELP)]
    Doctor(micoff_doctor::DoctorArgs),
    /// Apply one of doctor's fixes (`hda`, `governor`, `client-shm`).
    #[command(after_help = EXIT_CODES_HELP)]
    Fix(micoff_doctor::FixArgs),
    /// Measure what the audio path costs a low-latency client and the audio server.
    #[command(after_help = EXIT_CODES_HELP)]
    Bench(micoff_bench::BenchArgs),
    /// Capture latency: what the server grants the browsers, and setting it (`status`, `set`,
    /// `reset`).
    #[command(after_help = EXIT_CODES_HELP)]
    Latency(latency::LatencyArgs),
}

/// Runs a parsed command line; returns the exit code.
pub fn run(cli: Cli, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    match cli.command {
        Command::Sample(args) => match runtime(err) {
            Some(rt) => rt.block_on(sample::run(&args, &real_deps(), out)),
            None => EXIT_ERROR,
        },
        Command::Top(args) => match runtime(err) {
            Some(rt) => {
                let clear = std::io::stdout().is_terminal();
                rt.block_on(top::run(
                    &args,
                    &real_deps(),
                    top::TopOutput { out, err, clear },
                ))
            }
            None => EXIT_ERROR,
        },
        Command::Install(args) => match crate::install::InstallEnv::from_system(args.system) {
            Ok(env) => crate::install::run(&args, &env, out),
            Err(e) => {
                let _ = writeln!(err, "micoff-host install: {e}");
                EXIT_ERROR
            }
        },
        Command::Uninstall(args) => match crate::install::InstallEnv::from_system(args.system) {
            Ok(env) => crate::uninstall::run(&args, &env, &mut micoff_doctor::fix::RealSystem, out),
            Err(e) => {
                let _ = writeln!(err, "micoff-host uninstall: {e}");
                EXIT_ERROR
            }
        },
        Command::Bench(args) => micoff_bench::run(&args, out, err),
        Command::Latency(args) => match runtime(err) {
            Some(rt) => rt.block_on(latency::run(&args, &real_deps(), out, err)),
            None => EXIT_ERROR,
        },
        // The doctor queries the audio server itself (one-shot, micoff-pulse then pactl).
        Command::Doctor(args) => {
            // Which native messaging manifest each browser uses: on this machine only (not a
            // --root dump, whose browsers are not this machine's).
            let extra = match crate::install::InstallEnv::from_system(true) {
                Ok(env) if args.root == std::path::Path::new("/") => {
                    vec![crate::install::lookup::finding(&env)]
                }
                _ => Vec::new(),
            };
            micoff_doctor::run_doctor_with(&args, None, extra, out)
        }
        Command::Fix(args) => micoff_doctor::run_fix(&args, out, err),
    }
}

fn runtime(err: &mut dyn Write) -> Option<tokio::runtime::Runtime> {
    match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => Some(rt),
        Err(e) => {
            let _ = writeln!(err, "micoff-host: cannot start the runtime: {e}");
            None
        }
    }
}

fn real_deps() -> crate::deps::Deps {
    crate::backend::real(crate::deps::Launch::default())
}
