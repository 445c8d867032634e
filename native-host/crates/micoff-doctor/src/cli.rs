//! The command-line surface: clap argument types for `doctor` and `fix`, and the two entry
//! points the host binary calls.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::{Args, Subcommand};
use micoff_exit::{EXIT_ERROR, EXIT_NOT_FOUND, EXIT_OK, EXIT_USAGE};

use crate::audio::{self, AudioServerFacts};
use crate::commands::{shell_word, FIX_CLIENT_SHM, FIX_GOVERNOR, FIX_HDA};
use crate::facts::UserEnv;
use crate::findings::NoAudio;
use crate::fix::{self, Mode, Opts, RealSystem, System};
use crate::report;
use crate::root::Root;

/// `micoff-host doctor`
#[derive(Debug, Clone, Args)]
pub struct DoctorArgs {
    /// Print the report as JSON (stable, snake_case; what the extension shows).
    #[arg(long)]
    pub json: bool,
    /// Read /proc, /sys, /etc and /boot under DIR instead of / (fixtures, other machines' dumps).
    #[arg(long, value_name = "DIR", default_value = "/")]
    pub root: PathBuf,
    /// Do not query the audio server.
    #[arg(long)]
    pub no_audio: bool,
    /// Show why each finding matters and all details, not only for what is worth changing.
    #[arg(long, short)]
    pub verbose: bool,
}

/// `micoff-host fix ...`
#[derive(Debug, Clone, Args)]
pub struct FixArgs {
    #[command(subcommand)]
    pub what: FixCommand,
}

#[derive(Debug, Clone, Subcommand)]
pub enum FixCommand {
    /// position_fix=1 for Intel Skylake-or-later HD-audio on kernels that busy-wait while
    /// recording (/etc/modprobe.d/micoff-hda.conf). Exit 3: written, but another setting overrides it.
    Hda(HdaArgs),
    /// Re-enable PulseAudio client shared memory in ~/.config/pulse/client.conf. Exit 3:
    /// written, but clients still get it off (a client.conf.d file, $PULSE_CLIENTCONFIG).
    ClientShm(ClientShmArgs),
    /// The performance CPU governor on the chosen cores, until reboot.
    Governor(GovernorArgs),
}

/// What to do; a dry run when none is given.
#[derive(Debug, Clone, Args)]
pub struct ModeArgs {
    /// Show what would change and change nothing (the default).
    #[arg(long, conflicts_with_all = ["apply", "revert"])]
    pub dry_run: bool,
    /// Make the change.
    #[arg(long, conflicts_with = "revert")]
    pub apply: bool,
    /// Undo exactly what an earlier --apply did, and nothing else (hda, client-shm: remove the
    /// file it wrote and put back the file that one replaced; governor: put back the recorded
    /// governors).
    #[arg(long)]
    pub revert: bool,
}

impl ModeArgs {
    fn mode(&self) -> Mode {
        if self.apply {
            Mode::Apply
        } else if self.revert {
            Mode::Revert
        } else {
            Mode::DryRun
        }
    }
}

/// `--root` of the fixers.
#[derive(Debug, Clone, Args)]
pub struct RootArg {
    /// Work under DIR instead of / (tests, images).
    #[arg(long, value_name = "DIR", default_value = "/")]
    pub root: PathBuf,
}

impl From<&Path> for RootArg {
    fn from(root: &Path) -> Self {
        Self {
            root: root.to_path_buf(),
        }
    }
}

impl RootArg {
    /// ` --root DIR` for a command line that repeats it; empty for `/`.
    fn shell_arg(&self) -> String {
        if self.root == Path::new("/") {
            String::new()
        } else {
            format!(" --root {}", shell_word(&self.root.display().to_string()))
        }
    }
}

/// `micoff-host fix hda`
#[derive(Debug, Clone, Args)]
pub struct HdaArgs {
    #[command(flatten)]
    pub mode: ModeArgs,
    /// Write the file even where the doctor says it would not help (with a warning); refused
    /// when there is no Intel HD-audio controller on snd_hda_intel at all.
    #[arg(long, conflicts_with = "revert")]
    pub force: bool,
    /// Run through sudo/pkexec without asking. It does not agree to the module reload.
    #[arg(long, short)]
    pub yes: bool,
    /// Reload snd_hda_intel right after writing, without asking, when no stream is open on
    /// the card (otherwise it asks on a terminal, or prints the command).
    #[arg(long, conflicts_with_all = ["revert", "dry_run"])]
    pub reload: bool,
    #[command(flatten)]
    pub root: RootArg,
}

/// `micoff-host fix client-shm` (runs as your user: no sudo involved)
#[derive(Debug, Clone, Args)]
pub struct ClientShmArgs {
    #[command(flatten)]
    pub mode: ModeArgs,
    #[command(flatten)]
    pub root: RootArg,
}

/// `micoff-host fix governor`
#[derive(Debug, Clone, Args)]
pub struct GovernorArgs {
    #[command(flatten)]
    pub mode: ModeArgs,
    /// Cores, e.g. `0-3,6` (default: all). --revert restores every core --apply changed.
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<String>,
    /// Run through sudo/pkexec without asking.
    #[arg(long, short)]
    pub yes: bool,
    #[command(flatten)]
    pub root: RootArg,
}

impl FixCommand {
    fn root_arg(&self) -> &RootArg {
        match self {
            FixCommand::Hda(a) => &a.root,
            FixCommand::ClientShm(a) => &a.root,
            FixCommand::Governor(a) => &a.root,
        }
    }

    pub fn root(&self) -> &Path {
        &self.root_arg().root
    }

    /// `fix hda`, `fix client-shm`, `fix governor`: the command as its error lines name it.
    pub fn name(&self) -> &'static str {
        match self {
            FixCommand::Hda(_) => "fix hda",
            FixCommand::ClientShm(_) => "fix client-shm",
            FixCommand::Governor(_) => "fix governor",
        }
    }

    /// The options for the fixer, with the command that applies it as asked ("Apply with: ...").
    fn opts(&self) -> Opts {
        let root = self.root_arg().shell_arg();
        let opts = match self {
            FixCommand::Hda(a) => Opts {
                force: a.force,
                yes: a.yes,
                reload: a.reload,
                apply_command: format!("{FIX_HDA}{}{root}", if a.force { " --force" } else { "" }),
                ..Opts::new(a.mode.mode())
            },
            FixCommand::ClientShm(a) => Opts {
                apply_command: format!("{FIX_CLIENT_SHM}{root}"),
                ..Opts::new(a.mode.mode())
            },
            FixCommand::Governor(a) => Opts {
                yes: a.yes,
                apply_command: format!(
                    "{FIX_GOVERNOR}{}{root}",
                    a.cpus
                        .as_deref()
                        .map(|c| format!(" --cpus {}", shell_word(c)))
                        .unwrap_or_default()
                ),
                ..Opts::new(a.mode.mode())
            },
        };
        Opts {
            name: self.name(),
            ..opts
        }
    }
}

/// How long the live audio-server query may take.
pub const AUDIO_TIMEOUT: Duration = Duration::from_secs(3);

/// `micoff-host doctor`. `audio`: the audio server's facts when the caller has them (the
/// long-running host's pulse client); `None` queries the server here (micoff-pulse, then
/// `pactl`) when `--root` is `/`. Returns the exit code: 0; 4 when it asked the audio server
/// and none answered (a failed finding, and its error line on `err`); 1 when the output failed.
pub fn run_doctor(
    args: &DoctorArgs,
    audio: Option<AudioServerFacts>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    run_doctor_with(args, audio, Vec::new(), out, err)
}

/// [`run_doctor`] with `extra` findings from the caller (the host's: which native messaging
/// manifest each browser uses), listed after the doctor's own.
pub fn run_doctor_with(
    args: &DoctorArgs,
    audio: Option<AudioServerFacts>,
    extra: Vec<crate::findings::Finding>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    let root = Root::new(&args.root);
    let env = UserEnv::from_process(&root);
    // (facts, why there are none, whether they were asked for).
    let audio: Result<AudioServerFacts, (String, bool)> = match audio {
        Some(a) => Ok(a),
        None if args.no_audio => Err(("--no-audio".into(), false)),
        None if !root.is_system() => Err(("--root is not /".into(), false)),
        None => audio::gather(AUDIO_TIMEOUT).map_err(|e| (e, true)),
    };
    let input = match &audio {
        Ok(a) => Ok(a),
        Err((why, false)) => Err(NoAudio::NotQueried(why)),
        Err((why, true)) => Err(NoAudio::Unreachable(why)),
    };
    let report = report::build(&root, &env, input).with(extra);
    let res = if args.json {
        report.write_json(out)
    } else {
        report.write_human(out, args.verbose)
    };
    match res {
        Ok(()) if report.failed().next().is_some() => {
            for f in report.failed() {
                micoff_exit::report(
                    err,
                    "doctor",
                    format!("{}: {}", f.title, f.current),
                    "start PulseAudio or PipeWire for your user and run it again (--no-audio skips it)",
                );
            }
            EXIT_NOT_FOUND
        }
        Ok(()) => EXIT_OK,
        Err(e) => {
            micoff_exit::report(
                err,
                "doctor",
                format!("cannot write the report: {e}"),
                "check where the output goes",
            );
            EXIT_ERROR
        }
    }
}

/// `micoff-host fix ...` on the real machine. Returns the exit code.
pub fn run_fix(args: &FixArgs, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    run_fix_with(args, &mut RealSystem, out, err)
}

/// [`run_fix`] with an injectable [`System`] (euid, prompts, commands).
pub fn run_fix_with(
    args: &FixArgs,
    sys: &mut dyn System,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    let root = Root::new(args.what.root());
    let env = UserEnv::from_process(&root);
    run_fix_env(args, &root, &env, sys, out, err)
}

/// [`run_fix_with`] with the user environment given too (tests).
pub fn run_fix_env(
    args: &FixArgs,
    root: &Root,
    env: &UserEnv,
    sys: &mut dyn System,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    let opts = args.what.opts();
    let res = match &args.what {
        FixCommand::Hda(_) => fix::hda::run(root, env, &opts, sys, out, err),
        FixCommand::ClientShm(_) => fix::client_shm::run(root, env, &opts, sys, out, err),
        FixCommand::Governor(a) => {
            let present = fix::governor::present_cpus(root);
            let list = match a
                .cpus
                .as_deref()
                .map(|c| fix::governor::parse_cpu_list(c, &present))
            {
                Some(Err(why)) => {
                    micoff_exit::report(
                        err,
                        args.what.name(),
                        format!("bad --cpus list: {why}"),
                        "give cores like 0-3,6",
                    );
                    return EXIT_USAGE;
                }
                Some(Ok(l)) => Some(l),
                None => None,
            };
            fix::governor::run(root, list.as_deref(), &opts, sys, out, err)
        }
    };
    match res {
        Ok(code) => code,
        Err(e) => {
            micoff_exit::report(
                err,
                args.what.name(),
                e,
                "check the file or folder it names, then try again",
            );
            EXIT_ERROR
        }
    }
}
