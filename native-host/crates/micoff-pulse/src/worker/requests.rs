//! What other threads ask the worker ([`Command`]): a view of the server answered from a fresh
//! listing ([`ViewRequest`]), a change to the server ([`ChangeRequest`]: loading or unloading a
//! module, suspending or resuming a sink), or stopping; each carries the channel its answer goes
//! back on.

use std::time::Instant;

use tokio::sync::oneshot;

use crate::error::{PulseError, Result};
use crate::types::{Device, ServerInfo, Snapshot, Streams, INVALID_INDEX};

pub(crate) type Reply<T> = oneshot::Sender<Result<T>>;

/// A question answered from a fresh listing of the server.
pub(crate) enum ViewRequest {
    Server(Reply<ServerInfo>),
    Streams(Reply<Streams>),
    Sources(Reply<Vec<Device>>),
    Sinks(Reply<Vec<Device>>),
    Snapshot(Reply<Snapshot>),
}

impl ViewRequest {
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Self::Server(_) => "server_info",
            Self::Streams(_) => "streams",
            Self::Sources(_) => "sources",
            Self::Sinks(_) => "sinks",
            Self::Snapshot(_) => "snapshot",
        }
    }

    pub(crate) fn fail(self, err: PulseError) {
        // A caller that gave up (dropped its receiver) is not an error.
        let _ = match self {
            Self::Server(tx) => tx.send(Err(err)).is_ok(),
            Self::Streams(tx) => tx.send(Err(err)).is_ok(),
            Self::Sources(tx) => tx.send(Err(err)).is_ok(),
            Self::Sinks(tx) => tx.send(Err(err)).is_ok(),
            Self::Snapshot(tx) => tx.send(Err(err)).is_ok(),
        };
    }
}

/// A change to the server, answered when the server has acknowledged it.
pub(crate) enum ChangeRequest {
    Load {
        name: String,
        args: String,
        reply: Reply<u32>,
    },
    Unload {
        index: u32,
        reply: Reply<()>,
    },
    /// Suspends (`suspend`) or resumes the sink `index`.
    SuspendSink {
        index: u32,
        suspend: bool,
        reply: Reply<()>,
    },
}

impl ChangeRequest {
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Self::Load { .. } => "load_module",
            Self::Unload { .. } => "unload_module",
            Self::SuspendSink { .. } => "suspend_sink",
        }
    }

    /// Why the request must not reach libpulse, if it must not: a NUL in a module's name or
    /// arguments (libpulse-binding panics on it), or `PA_INVALID_INDEX` as the sink to suspend
    /// (libpulse reads it as "every sink").
    pub(crate) fn refusal(&self) -> Option<&'static str> {
        match self {
            Self::Load { name, args, .. } if name.contains('\0') || args.contains('\0') => {
                Some("module name or arguments contain NUL")
            }
            Self::SuspendSink { index, .. } if *index == INVALID_INDEX => {
                Some("no sink index (PA_INVALID_INDEX would suspend every sink)")
            }
            _ => None,
        }
    }

    pub(crate) fn fail(self, err: PulseError) {
        let _ = match self {
            Self::Load { reply, .. } => reply.send(Err(err)).is_ok(),
            Self::Unload { reply, .. } | Self::SuspendSink { reply, .. } => {
                reply.send(Err(err)).is_ok()
            }
        };
    }
}

pub(crate) enum Command {
    View(ViewRequest, Instant),
    Change(ChangeRequest, Instant),
    Shutdown,
}

impl Command {
    pub(crate) fn fail(self, err: PulseError) {
        match self {
            Self::View(r, _) => r.fail(err),
            Self::Change(r, _) => r.fail(err),
            Self::Shutdown => {}
        }
    }

    pub(crate) fn deadline(&self) -> Option<Instant> {
        match self {
            Self::View(_, d) | Self::Change(_, d) => Some(*d),
            Self::Shutdown => None,
        }
    }

    pub(crate) fn name(&self) -> &'static str {
        match self {
            Self::View(r, _) => r.name(),
            Self::Change(r, _) => r.name(),
            Self::Shutdown => "shutdown",
        }
    }
}
