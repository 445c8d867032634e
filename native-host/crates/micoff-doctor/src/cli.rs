//! The command-line surface: clap argument types for `doctor` and `fix`, and the two entry
//! points the host binary calls.

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Subcommand};

use crate::audio::{self, AudioServerFacts};
use crate::facts::UserEnv;
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
    /// position_fix=1 for Intel Skylake+ HD-audio on kernels with the capture udelay
    /// (/etc/modprobe.d/micoff-hda.conf).
    Hda(FixCommon),
    /// Re-enable PulseAudio client shared memory in ~/.config/pulse/client.conf.
    ClientShm(FixCommon),
    /// The performance CPU governor on the chosen cores, until reboot.
    Governor {
        #[command(flatten)]
        common: FixCommon,
        /// Cores, e.g. `0-3,6` (default: all).
        #[arg(long, value_name = "LIST")]
        cpus: Option<String>,
    },
}

#[derive(Debug, Clone, Args)]
pub struct FixCommon {
    /// Show what would change and change nothing (the default).
    #[arg(long, conflicts_with_all = ["apply", "revert"])]
    pub dry_run: bool,
    /// Make the change.
    #[arg(long, conflicts_with = "revert")]
    pub apply: bool,
    /// Remove exactly what an earlier --apply wrote (restoring any backup).
    #[arg(long)]
    pub revert: bool,
    /// Act even where the doctor says it would not help (with a warning).
    #[arg(long)]
    pub force: bool,
    /// Agree to running through sudo/pkexec and to the module reload without asking.
    #[arg(long, short)]
    pub yes: bool,
    /// Work under DIR instead of / (tests, images).
    #[arg(long, value_name = "DIR", default_value = "/")]
    pub root: PathBuf,
}

impl FixCommon {
    fn opts(&self) -> Opts {
        let mode = if self.apply {
            Mode::Apply
        } else if self.revert {
            Mode::Revert
        } else {
            Mode::DryRun
        };
        Opts {
            mode,
            force: self.force,
            yes: self.yes,
        }
    }
}

/// How long the live audio-server query may take.
pub const AUDIO_TIMEOUT: Duration = Duration::from_secs(3);

/// `micoff-host doctor`. `audio`: the audio server's facts when the caller has them (the
/// long-running host's pulse client); `None` queries the server here (micoff-pulse, then
/// `pactl`) when `--root` is `/`. Returns the exit code (0; 1 when the output failed).
pub fn run_doctor(args: &DoctorArgs, audio: Option<AudioServerFacts>, out: &mut dyn Write) -> i32 {
    let root = Root::new(&args.root);
    let env = UserEnv::from_process(&root);
    let audio: Result<AudioServerFacts, String> = match audio {
        Some(a) => Ok(a),
        None if args.no_audio => Err("not queried (--no-audio)".into()),
        None if !root.is_system() => Err("not queried (--root is not /)".into()),
        None => audio::gather(AUDIO_TIMEOUT),
    };
    let report = report::build(&root, &env, audio.as_ref().map_err(String::as_str));
    let res = if args.json {
        report.write_json(out)
    } else {
        report.write_human(out, args.verbose)
    };
    match res {
        Ok(()) => 0,
        Err(e) => {
            tracing::error!("doctor: writing the report failed: {e}");
            1
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
    let common = match &args.what {
        FixCommand::Hda(c) | FixCommand::ClientShm(c) => c,
        FixCommand::Governor { common, .. } => common,
    };
    let root = Root::new(&common.root);
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
    let res = match &args.what {
        FixCommand::Hda(c) => fix::hda::run(root, env, &c.opts(), sys, out, err),
        FixCommand::ClientShm(c) => fix::client_shm::run(root, env, &c.opts(), sys, out, err),
        FixCommand::Governor { common, cpus } => {
            let list = match cpus.as_deref().map(fix::governor::parse_cpu_list) {
                Some(None) => {
                    let _ = writeln!(err, "fix governor: bad --cpus list");
                    return 2;
                }
                Some(Some(l)) => Some(l),
                None => None,
            };
            fix::governor::run(root, list.as_deref(), &common.opts(), sys, out)
        }
    };
    match res {
        Ok(code) => code,
        Err(e) => {
            let _ = writeln!(err, "fix failed: {e}");
            1
        }
    }
}
