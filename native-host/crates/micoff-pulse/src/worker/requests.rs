//! What other threads ask the worker ([`Command`]): a view of the server answered from a fresh
//! listing ([`ViewRequest`]), loading or unloading a module ([`ModuleRequest`]), or stopping;
//! each carries the channel its answer goes back on.

use std::time::Instant;

use tokio::sync::oneshot;

use crate::error::{PulseError, Result};
use crate::types::{Device, ServerInfo, Snapshot, Streams};

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

pub(crate) enum ModuleRequest {
    Load {
        name: String,
        args: String,
        reply: Reply<u32>,
    },
    Unload {
        index: u32,
        reply: Reply<()>,
    },
}

impl ModuleRequest {
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Self::Load { .. } => "load_module",
            Self::Unload { .. } => "unload_module",
        }
    }

    pub(crate) fn fail(self, err: PulseError) {
        let _ = match self {
            Self::Load { reply, .. } => reply.send(Err(err)).is_ok(),
            Self::Unload { reply, .. } => reply.send(Err(err)).is_ok(),
        };
    }
}

pub(crate) enum Command {
    View(ViewRequest, Instant),
    Module(ModuleRequest, Instant),
    Shutdown,
}

impl Command {
    pub(crate) fn fail(self, err: PulseError) {
        match self {
            Self::View(r, _) => r.fail(err),
            Self::Module(r, _) => r.fail(err),
            Self::Shutdown => {}
        }
    }

    pub(crate) fn deadline(&self) -> Option<Instant> {
        match self {
            Self::View(_, d) | Self::Module(_, d) => Some(*d),
            Self::Shutdown => None,
        }
    }

    pub(crate) fn name(&self) -> &'static str {
        match self {
            Self::View(r, _) => r.name(),
            Self::Module(r, _) => r.name(),
            Self::Shutdown => "shutdown",
        }
    }
}
