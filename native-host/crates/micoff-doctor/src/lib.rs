//! micoff-doctor: `micoff-host doctor` (what this machine does below the browser and why it matters
//! for audio CPU and latency) and `micoff-host fix hda|client-shm|governor`.
//!
//! Modules, top down: [`cli`] over [`report`] (which runs [`findings`]) and [`fix`]; findings and
//! fixers read [`facts`] and neither imports the other. Below all: [`root`] (the injectable root),
//! [`parse`] (no I/O), [`kernel`] (versions, the udelay table), [`hda`] (Skylake+ ids), [`ours`]
//! (whose a file is), [`commands`], [`uid`], [`audio`] ([`AudioServerFacts`] from micoff-pulse or
//! `pactl`).

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
