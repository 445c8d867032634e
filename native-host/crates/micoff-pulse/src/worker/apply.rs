//! What the queue brings, applied: subscription events, fetched items and finished changes
//! turned into cache updates, events and answers ([`Worker::process_internal`]).

use super::*;

impl Worker {
    pub(super) fn on_event(&mut self, facility: Facility, op: SubOp, index: u32) {
        let Some(conn_id) = self.conn.as_ref().map(|c| c.id) else {
            return;
        };
        let ready = self
            .conn
            .as_ref()
            .is_some_and(|c| c.state == ConnState::Ready);
        if op == SubOp::Removed {
            if let Some(event) = self.cache.removed(facility, index, ready) {
                self.emit(event);
            }
            return;
        }
        let changed = op == SubOp::Changed;
        let q = self.queue.clone();
        let Some(ctx) = self.ready_ctx() else {
            return;
        };
        ops::fetch(ctx, &q, conn_id, facility, index, changed);
    }

    pub(super) fn on_fetched(&mut self, item: Fetched) {
        let ready = self
            .conn
            .as_ref()
            .is_some_and(|c| c.state == ConnState::Ready);
        match item {
            Fetched::Server(raw) => {
                if self.cache.set_server(raw) && ready {
                    self.emit(PulseEvent::ServerChanged {
                        info: self.server_info(),
                    });
                }
            }
            Fetched::Client(c) => self.cache.put_client(c),
            Fetched::Device(device, changed) => {
                if let Some(event) = self.cache.fetched_device(device, changed, ready) {
                    self.emit(event);
                }
            }
            Fetched::Stream(raw, changed) => {
                if let Some(event) = self.cache.fetched_stream(raw, changed, ready) {
                    self.emit(event);
                }
            }
        }
    }

    pub(super) fn on_change_done(&mut self, op: u64, result: std::result::Result<u32, String>) {
        let Some((_, req)) = self.waiting.changes.remove(&op) else {
            return;
        };
        let _ = match (req, result) {
            (ChangeRequest::Load { reply, .. }, Ok(index)) => reply.send(Ok(index)).is_ok(),
            (
                ChangeRequest::Unload { reply, .. } | ChangeRequest::SuspendSink { reply, .. },
                Ok(_),
            ) => reply.send(Ok(())).is_ok(),
            (req, Err(message)) => {
                let op = req.name();
                req.fail(PulseError::Protocol { op, message });
                true
            }
        };
    }

    pub(super) fn process_internal(&mut self) {
        loop {
            // Take one item at a time: handling it may call into libpulse, which may push more.
            let Some(item) = self.queue.borrow_mut().pop_front() else {
                break;
            };
            let current = self.conn.as_ref().map(|c| c.id);
            match item {
                Internal::State { conn } => self.on_state(conn),
                Internal::Event {
                    conn,
                    facility,
                    op,
                    index,
                } if Some(conn) == current => self.on_event(facility, op, index),
                Internal::Part {
                    conn,
                    refresh,
                    part,
                } if Some(conn) == current => self.on_part(refresh, part),
                Internal::Fetched { conn, item } if Some(conn) == current => self.on_fetched(item),
                Internal::ChangeDone { conn, op, result } if Some(conn) == current => {
                    self.on_change_done(op, result)
                }
                _ => {} // from a connection that is gone
            }
        }
    }
}
