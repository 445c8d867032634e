//! [`RunCtx`]: what every window of a run shares (the arguments, how to start the child
//! ([`ChildCommand`]), the client.conf files, /proc, the server). Made once by [`crate::run`],
//! read by the windows and by [`crate::reference`].

use std::path::PathBuf;

use micoff_proc::ProcFs;

use crate::args::BenchArgs;
use crate::conf::ClientConfs;

/// How to start the child client: an executable and the arguments before `<direction>`.
#[derive(Debug, Clone)]
pub struct ChildCommand {
    pub exe: PathBuf,
    pub prefix: Vec<String>,
}

impl ChildCommand {
    /// This process's executable with `prefix` (["bench"] inside micoff-host).
    pub fn current_exe(prefix: &[&str]) -> std::io::Result<Self> {
        Ok(Self {
            exe: std::env::current_exe()?,
            prefix: prefix.iter().map(|s| s.to_string()).collect(),
        })
    }
}

/// What every window of a run shares.
pub(crate) struct RunCtx<'a> {
    pub(crate) args: &'a BenchArgs,
    pub(crate) child: &'a ChildCommand,
    pub(crate) confs: &'a ClientConfs,
    pub(crate) procfs: &'a ProcFs,
    pub(crate) server_pid: Option<u32>,
    pub(crate) pipewire: bool,
}
