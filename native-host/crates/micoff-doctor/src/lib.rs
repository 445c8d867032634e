//! micoff-doctor: `micoff-host doctor` (what this machine does below the browser and why it
//! matters for audio CPU and latency) and `micoff-host fix hda|client-shm|governor`.
//!
//! Modules, top down: [`cli`] over [`report`] (which runs [`findings`]) and [`fix`]; findings and
//! fixers read [`facts`], and neither imports the other; the rest lies below all of them.
//! - [`root`]: every read and write goes through an injectable root (`/` or a fixture tree).
//! - [`parse`]: parsers of /proc/asound, /proc/interrupts, limits.conf, client.conf, ... (no I/O).
//! - [`kernel`]: kernel version parsing and the Skylake+ capture-udelay version table.
//! - [`hda`]: the Intel Skylake+ HD-audio PCI id table and `position_fix` values.
//! - [`ours`]: whose a file is (micoff-files' one ownership scheme) and where `fix hda` writes its
//!   own (facts, findings and fixers all need them); [`commands`]: the shell commands the doctor offers;
//!   [`uid`]: this process's user ids.
//! - [`facts`]: reads a root into [`facts::Facts`]; knows nothing of the fixers.
//! - [`audio`]: [`AudioServerFacts`] from micoff-pulse (preferred) or `pactl` output.
//! - [`findings`]: facts -> [`findings::Finding`]s (ok / worth_changing / not_applicable).
//! - [`report`]: the JSON document and the human listing.
//! - [`fix`]: the fixers (their files written, sealed and put back through micoff-files' `ours`),
//!   escalation through pkexec/sudo.
//! - [`cli`]: clap types and the entry points [`run_doctor`] and [`run_fix`].

pub mod audio;
pub mod cli;
pub mod commands;
pub mod facts;
pub mod findings;
pub mod fix;
pub mod hda;
pub mod kernel;
pub mod ours;
pub mod parse;
pub mod report;
pub mod root;
pub mod uid;

pub use audio::{AudioServerFacts, DeviceLatency};
pub use cli::{
    run_doctor, run_doctor_with, run_fix, run_fix_with, ClientShmArgs, DoctorArgs, FixArgs,
    FixCommand, GovernorArgs, HdaArgs, ModeArgs, RootArg,
};
pub use findings::{AudioInput, Finding, NoAudio, Status};
pub use report::Report;
pub use root::Root;
