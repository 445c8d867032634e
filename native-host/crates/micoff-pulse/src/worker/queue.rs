//! What libpulse callbacks report to the worker's loop ([`Internal`]), and the queue they push it
//! onto. Callbacks never touch the worker itself: the loop drains this queue after each dispatch,
//! which keeps every `Context` call out of callbacks.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

use libpulse_binding as pulse;
use pulse::context::subscribe::{Facility, Operation as SubOp};

use crate::convert::{Client, RawServerInfo, RawStream};
use crate::types::Device;

/// One part of a full listing; `None` when the server failed that list.
pub(crate) enum Part {
    Server(Option<RawServerInfo>),
    Clients(Option<Vec<Client>>),
    Sources(Option<Vec<Device>>),
    Sinks(Option<Vec<Device>>),
    Records(Option<Vec<RawStream>>),
    Playbacks(Option<Vec<RawStream>>),
}
pub(crate) const PARTS: u8 = 6;

impl Part {
    /// The listing this part answers, for the message when the server failed it.
    pub(crate) fn list_name(&self) -> &'static str {
        match self {
            Part::Server(_) => "server info",
            Part::Clients(_) => "client list",
            Part::Sources(_) => "source list",
            Part::Sinks(_) => "sink list",
            Part::Records(_) => "source output list",
            Part::Playbacks(_) => "sink input list",
        }
    }
}

/// One object fetched after a subscription event (`changed` = the event was a change, not new).
pub(crate) enum Fetched {
    Server(RawServerInfo),
    Client(Client),
    Device(Device, bool),
    Stream(RawStream, bool),
}

/// What libpulse callbacks report to the loop. `conn` is the connection generation.
pub(crate) enum Internal {
    State {
        conn: u64,
    },
    Event {
        conn: u64,
        facility: Facility,
        op: SubOp,
        index: u32,
    },
    Part {
        conn: u64,
        refresh: u64,
        part: Part,
    },
    Fetched {
        conn: u64,
        item: Fetched,
    },
    ChangeDone {
        conn: u64,
        op: u64,
        result: std::result::Result<u32, String>,
    },
}

pub(crate) type Queue = Rc<RefCell<VecDeque<Internal>>>;

pub(crate) fn push(q: &Queue, item: Internal) {
    q.borrow_mut().push_back(item);
}
