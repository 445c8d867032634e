//! What the worker owes an answer ([`Waiting`]): commands queued until the connection is ready,
//! view requests waiting for a listing to finish, changes (module loads, sink suspends) under way;
//! each with its deadline, so that none waits forever.

use std::collections::HashMap;
use std::time::Instant;

use crate::error::PulseError;
use crate::worker::requests::{ChangeRequest, Command, ViewRequest};

/// A full listing under way (see `Worker::start_refresh`).
pub(crate) struct Refresh {
    pub(crate) parts_left: u8,
    pub(crate) error: Option<String>,
    pub(crate) waiters: Vec<(Instant, ViewRequest)>,
}

#[derive(Default)]
pub(crate) struct Waiting {
    /// Commands that came before the connection was ready.
    pub(crate) queued: Vec<Command>,
    /// Listings under way, by refresh id, with the view requests they answer.
    pub(crate) refreshes: HashMap<u64, Refresh>,
    /// Changes under way (module loads and unloads, sink suspends), by operation id.
    pub(crate) changes: HashMap<u64, (Instant, ChangeRequest)>,
}

impl Waiting {
    /// The earliest deadline of anything waiting.
    pub(crate) fn next_deadline(&self) -> Option<Instant> {
        let queued = self.queued.iter().filter_map(Command::deadline);
        let waiters = self
            .refreshes
            .values()
            .flat_map(|r| r.waiters.iter().map(|(d, _)| *d));
        let ops = self.changes.values().map(|(d, _)| *d);
        queued.chain(waiters).chain(ops).min()
    }

    /// Fails everything whose deadline has passed with a timeout after `timeout_ms`.
    pub(crate) fn expire(&mut self, now: Instant, timeout_ms: u64) {
        let timeout = |what: &'static str| PulseError::Timeout { what, timeout_ms };
        let (expired, keep): (Vec<_>, Vec<_>) = std::mem::take(&mut self.queued)
            .into_iter()
            .partition(|c| c.deadline().is_some_and(|d| d <= now));
        self.queued = keep;
        for cmd in expired {
            let what = cmd.name();
            cmd.fail(timeout(what));
        }
        for r in self.refreshes.values_mut() {
            let (expired, keep): (Vec<_>, Vec<_>) = std::mem::take(&mut r.waiters)
                .into_iter()
                .partition(|(d, _)| *d <= now);
            r.waiters = keep;
            for (_, req) in expired {
                let what = req.name();
                req.fail(timeout(what));
            }
        }
        let late: Vec<u64> = self
            .changes
            .iter()
            .filter(|(_, (d, _))| *d <= now)
            .map(|(id, _)| *id)
            .collect();
        for id in late {
            if let Some((_, req)) = self.changes.remove(&id) {
                let what = req.name();
                req.fail(timeout(what));
            }
        }
    }

    /// Fails everything waiting with `err` (the connection is gone, or the worker stops).
    pub(crate) fn fail_all(&mut self, err: &PulseError) {
        for cmd in std::mem::take(&mut self.queued) {
            cmd.fail(err.clone());
        }
        for (_, r) in self.refreshes.drain() {
            for (_, req) in r.waiters {
                req.fail(err.clone());
            }
        }
        for (_, (_, req)) in self.changes.drain() {
            req.fail(err.clone());
        }
    }
}
