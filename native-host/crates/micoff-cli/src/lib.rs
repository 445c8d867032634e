//! The command line: native messaging mode is chosen by the browser's arguments (see `main.rs`);
//! everything else is a subcommand. Output goes through an explicit writer (stdout is the protocol
//! in native messaging mode); errors are one line each, in micoff-exit's one style.
//!
//! Module map: [`sample`], [`top`] (with [`report`], their tables, and [`clock`], their time
//! stamp), [`latency`]: the subcommands run here (install, doctor, fix and bench come from their
//! crates); [`usage`]: clap's usage errors in the same style; [`version`]: `--version [--verbose]`.

pub mod clock;
pub mod latency;
pub mod report;
pub mod sample;
pub mod top;
pub mod usage;
pub mod version;

use std::io::{IsTerminal, Write};

use clap::{Parser, Subcommand};

use micoff_native::deps::HostError;

pub use micoff_exit::{
    EXIT_CODES_HELP, EXIT_ERROR, EXIT_NOT_FOUND, EXIT_OK, EXIT_PARTIAL, EXIT_USAGE,
};

#[derive(Debug, Parser)]
#[command(
    name = "micoff-host",
    version = micoff_native::VERSION,
    about = "micoff native messaging host and tools: per-thread CPU of the browser's audio path and \
             the audio server.",
    long_about = long_about(),
    after_help = EXIT_CODES_HELP,
    disable_version_flag = true,
    arg_required_else_help = true,
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    /// Print the version (with --verbose: the commit, libpulse's version and the target too).
    #[arg(short = 'V', long)]
    pub version: bool,
    /// With --version: the commit it was built from, the libpulse it runs with, the target.
    #[arg(long, requires = "version")]
    pub verbose: bool,
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// One CPU report (per process and thread) over a window.
    #[command(after_help = sample::after_help())]
    Sample(sample::SampleArgs),
    /// Live per-thread CPU of the audio path (browser + audio server), with the server's streams.
    #[command(after_help = top::after_help())]
    Top(top::TopArgs),
    /// Install (or remove) the native messaging host manifest for the browsers on this machine.
    Install(micoff_install::InstallArgs),
    /// Undo everything micoff wrote, from micoff's record.
    ///
    /// Host manifests, Firefox's user.js lines (its prefs put back) and add-on copies, policies,
    /// Chromium's entry and crx copy, capture latency's files, the fixes. A file edited since
    /// micoff wrote it is left and named (exit 3).
    Uninstall(micoff_install::uninstall::UninstallArgs),
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

/// `micoff-host --help`'s (and its man page's) description.
fn long_about() -> String {
    format!(
        "micoff native messaging host and tools.\n\nStarted by a browser (first argument \
         `chrome-extension://<id>/`, or a Firefox manifest path and extension id) it speaks native \
         messaging on stdin/stdout (the protocol: {}). Otherwise it runs one of the subcommands \
         below.",
        micoff_native::protocol_doc()
    )
}

/// Runs a parsed command line; returns the exit code.
pub fn run(cli: Cli, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let Some(command) = cli.command else {
        // clap lets no command through only with --version (`arg_required_else_help`).
        return version::print(cli.verbose, out, err);
    };
    match command {
        Command::Sample(args) => match runtime("sample", err) {
            Some(rt) => rt.block_on(sample::run(&args, &real_deps(), out, err)),
            None => EXIT_ERROR,
        },
        Command::Top(args) => match runtime("top", err) {
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
        Command::Install(args) => match micoff_install::InstallEnv::from_system(args.system) {
            Ok(env) => micoff_install::run(&args, &env, out, err),
            Err(e) => {
                micoff_exit::report(err, "install", e, "run it as a user with a home folder");
                EXIT_ERROR
            }
        },
        Command::Uninstall(args) => match micoff_install::InstallEnv::from_system(args.system) {
            Ok(env) => micoff_install::uninstall::run(
                &args,
                &env,
                &mut micoff_doctor::fix::RealSystem,
                out,
                err,
            ),
            Err(e) => {
                micoff_exit::report(err, "uninstall", e, "run it as a user with a home folder");
                EXIT_ERROR
            }
        },
        Command::Bench(args) => micoff_bench::run(&args, out, err),
        Command::Latency(args) => match runtime("latency", err) {
            Some(rt) => rt.block_on(latency::run(&args, &real_deps(), out, err)),
            None => EXIT_ERROR,
        },
        // The doctor queries the audio server itself (one-shot, micoff-pulse then pactl).
        Command::Doctor(args) => {
            // Which native messaging manifest each browser uses: on this machine only (not a
            // --root dump, whose browsers are not this machine's).
            let extra = match micoff_install::InstallEnv::from_system(true) {
                Ok(env) if args.root == std::path::Path::new("/") => {
                    vec![micoff_install::lookup::finding(&env)]
                }
                _ => Vec::new(),
            };
            micoff_doctor::run_doctor_with(&args, None, extra, out, err)
        }
        Command::Fix(args) => micoff_doctor::run_fix(&args, out, err),
    }
}

/// The Chromium extension ids the host answers beside micoff's release id (its caller check).
pub use micoff_install::chromium::external::local_ids_here as local_chrome_ids;

/// What to do about a failure of the host's own sampling or audio server query, for an error line.
pub fn todo_for(e: &HostError) -> &'static str {
    match e {
        HostError::AudioServerUnavailable(_) => {
            "start PulseAudio or PipeWire (pipewire-pulse) for this user and try again"
        }
        HostError::NotFound(_) => "check the process ids (`ps -e`) and try again",
        HostError::Busy(_) => "try again in a moment",
        HostError::NotImplemented(_) | HostError::Internal(_) => {
            "try again; if it keeps failing, report it with this line"
        }
    }
}

/// The exit code for a failure of the host's own sampling or audio server query.
pub fn exit_code_for(e: &HostError) -> i32 {
    match e {
        HostError::NotFound(_) | HostError::AudioServerUnavailable(_) => EXIT_NOT_FOUND,
        _ => EXIT_ERROR,
    }
}

fn runtime(cmd: &str, err: &mut dyn Write) -> Option<tokio::runtime::Runtime> {
    match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => Some(rt),
        Err(e) => {
            micoff_exit::report(
                err,
                cmd,
                format!("cannot start the runtime: {e}"),
                "free some memory or threads (ulimit -u) and try again",
            );
            None
        }
    }
}

fn real_deps() -> micoff_native::deps::Deps {
    micoff_backend::real(micoff_native::deps::Launch::default())
}

#[cfg(test)]
mod tests {
    use std::any::TypeId;

    use clap::CommandFactory;

    use super::Cli;

    /// Every help text that cites the protocol's description names where the package installs it
    /// (the package ships it there: scripts/host-package/check-deb.mjs), and the top one does.
    #[test]
    fn every_protocol_citation_names_the_installed_file() {
        fn visit(cmd: &clap::Command, cites: &mut Vec<String>) {
            let mut texts: Vec<String> = [cmd.get_about(), cmd.get_long_about()]
                .into_iter()
                .flatten()
                .map(ToString::to_string)
                .collect();
            for arg in cmd.get_arguments() {
                texts.extend(
                    [arg.get_help(), arg.get_long_help()]
                        .into_iter()
                        .flatten()
                        .map(ToString::to_string),
                );
            }
            cites.extend(texts.into_iter().filter(|t| t.contains("PROTOCOL.md")));
            for sub in cmd.get_subcommands() {
                visit(sub, cites);
            }
        }
        let mut cites = Vec::new();
        visit(&Cli::command(), &mut cites);
        assert!(cites.len() >= 3, "{cites:#?}");
        for c in &cites {
            assert!(c.contains(micoff_native::PROTOCOL_DOC), "{c}");
        }
        let help = Cli::command().render_long_help().to_string();
        assert!(help.contains(micoff_native::PROTOCOL_DOC), "{help}");
    }

    /// Every numeric option of every subcommand says its range and unit in `--help` (from its
    /// `micoff_exit::Range`, the value its check reads).
    #[test]
    fn every_numeric_option_says_its_range() {
        fn visit(cmd: &clap::Command, path: &str, missing: &mut Vec<String>) {
            let numeric = [
                TypeId::of::<u32>(),
                TypeId::of::<u64>(),
                TypeId::of::<usize>(),
                TypeId::of::<i32>(),
                TypeId::of::<i64>(),
                TypeId::of::<f64>(),
            ];
            for arg in cmd.get_arguments().filter(|a| !a.is_hide_set()) {
                let id = arg.get_value_parser().type_id();
                if !numeric.iter().any(|t| id == *t) {
                    continue;
                }
                let help = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
                if !help.contains("Range: ") {
                    missing.push(format!("{path} --{}: {help:?}", arg.get_id()));
                }
            }
            for sub in cmd.get_subcommands() {
                visit(sub, &format!("{path} {}", sub.get_name()), missing);
            }
        }
        let mut missing = Vec::new();
        visit(&Cli::command(), "micoff-host", &mut missing);
        assert!(missing.is_empty(), "{missing:#?}");
        // And they read the range the check uses.
        let top = Cli::command();
        let sample = top
            .find_subcommand("sample")
            .map(|c| c.clone().render_help());
        assert!(sample
            .map(|h| h.to_string())
            .unwrap_or_default()
            .contains(&super::sample::WINDOW_S.describe()));
    }
}
