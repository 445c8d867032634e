//! The one thread that owns libpulse: a standard `Mainloop` driven by `prepare/poll/dispatch`, one
//! `Context` at a time, and a cache kept current by subscription events. Callbacks never touch the
//! worker: they push [`Internal`] items onto a single-thread queue the loop drains after each
//! dispatch (no re-entrancy); other threads' commands come on a channel, a socket-pair byte wakes
//! the poll. Modules: [`requests`] (what other threads ask), `queue` (what callbacks report), `ops`
//! (libpulse operations), `waiting` (answers owed, with deadlines), `server_info`, `apply` (what
//! the queue brings, applied to the cache). This file: the loop and the connection's life.

mod apply;
mod ops;
mod queue;
pub(crate) mod requests;
mod server_info;
mod waiting;

use std::cell::RefCell;
use std::collections::VecDeque;
use std::io::Read;
use std::os::unix::io::AsRawFd;
use std::os::unix::net::UnixStream;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Instant;

use libpulse_binding as pulse;
use micoff_audio_server as audio_server;
use pulse::context::subscribe::{Facility, Operation as SubOp};
use pulse::context::{Context, State};
use pulse::mainloop::api::Mainloop as _;
use pulse::mainloop::events::io::{FlagSet as IoEventFlagSet, IoEvent};
use pulse::mainloop::standard::Mainloop;
use pulse::time::MicroSeconds;
use tokio::sync::broadcast;

use crate::cache::Cache;
use crate::error::{PulseError, Result};
use crate::types::{DeviceKind, PulseEvent, ServerInfo, Snapshot, StreamKind};
use crate::PulseConfig;
use queue::{Fetched, Internal, Part, Queue, PARTS};
use requests::{ChangeRequest, Command, ViewRequest};
use waiting::{Refresh, Waiting};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ConnState {
    Connecting,
    /// Connected; the first full listing (this refresh id) is on its way.
    Loading(u64),
    Ready,
}

struct Conn {
    id: u64,
    ctx: Context,
    state: ConnState,
    started: Instant,
}

pub(crate) struct Worker {
    // Field order is drop order: the context and the wake event go before the main loop.
    conn: Option<Conn>,
    _wake_event: Option<
        IoEvent<pulse::mainloop::api::MainloopInner<pulse::mainloop::standard::MainloopInternal>>,
    >,
    mainloop: Mainloop,
    config: PulseConfig,
    queue: Queue,
    commands: mpsc::Receiver<Command>,
    events: broadcast::Sender<PulseEvent>,
    connected: Arc<AtomicBool>,
    cache: Cache,
    waiting: Waiting,
    next_id: u64,
    retry_at: Option<Instant>,
    attempt: u32,
    ever_connected: bool,
    /// Set when reconnecting is off and the connection is gone for good.
    stopped: Option<PulseError>,
}

impl Worker {
    pub(crate) fn new(
        config: PulseConfig,
        commands: mpsc::Receiver<Command>,
        wake: Option<UnixStream>,
        events: broadcast::Sender<PulseEvent>,
        connected: Arc<AtomicBool>,
    ) -> Result<Self> {
        if let Some(server) = &config.server {
            if server.contains('\0') {
                return Err(PulseError::Config(
                    "server string contains a NUL byte".into(),
                ));
            }
        }
        if config.app_name.contains('\0') {
            return Err(PulseError::Config("app_name contains a NUL byte".into()));
        }
        let mut mainloop = Mainloop::new()
            .ok_or_else(|| PulseError::Thread("cannot create a pulse main loop".into()))?;
        let wake_event = match wake {
            Some(sock) => {
                sock.set_nonblocking(true)
                    .map_err(|e| PulseError::Thread(format!("wake socket: {e}")))?;
                let fd = sock.as_raw_fd();
                let ev = mainloop.new_io_event(
                    fd,
                    IoEventFlagSet::INPUT,
                    Box::new(move |_, _, _| {
                        // Drain the wake bytes; the loop looks at the command channel next.
                        let mut buf = [0u8; 64];
                        while matches!((&sock).read(&mut buf), Ok(n) if n > 0) {}
                    }),
                );
                Some(ev.ok_or_else(|| PulseError::Thread("cannot watch the wake socket".into()))?)
            }
            None => None,
        };
        Ok(Self {
            conn: None,
            _wake_event: wake_event,
            mainloop,
            config,
            queue: Rc::new(RefCell::new(VecDeque::new())),
            commands,
            events,
            connected,
            cache: Cache::default(),
            waiting: Waiting::default(),
            next_id: 1,
            retry_at: Some(Instant::now()),
            attempt: 0,
            ever_connected: false,
            stopped: None,
        })
    }

    /// Runs until shutdown (a `Shutdown` command or every sender gone).
    pub(crate) fn run(mut self) {
        while self.turn(&mut || false) {}
        self.shutdown();
    }

    /// Runs until `done` says so; used by the blocking one-shot query on the caller's thread.
    pub(crate) fn run_until(mut self, mut done: impl FnMut() -> bool) {
        while !done() && self.turn(&mut done) {}
        self.shutdown();
    }

    fn shutdown(&mut self) {
        self.drop_conn();
        let err = PulseError::Thread("the pulse client was stopped".into());
        self.fail_everything(&err);
        while let Ok(cmd) = self.commands.try_recv() {
            cmd.fail(err.clone());
        }
    }

    /// One loop turn. Returns false when it is time to stop (`done` is asked right before the
    /// loop would block).
    fn turn(&mut self, done: &mut dyn FnMut() -> bool) -> bool {
        loop {
            match self.commands.try_recv() {
                Ok(Command::Shutdown) | Err(mpsc::TryRecvError::Disconnected) => return false,
                Ok(cmd) => self.handle_command(cmd),
                Err(mpsc::TryRecvError::Empty) => break,
            }
        }
        self.process_internal();

        let now = Instant::now();
        if self.conn.is_none() && self.retry_at.is_some_and(|t| t <= now) {
            self.retry_at = None;
            self.connect();
            self.process_internal();
        }
        if let Some(conn) = &self.conn {
            if conn.state != ConnState::Ready
                && now.duration_since(conn.started) >= self.config.connect_timeout
            {
                let ms = self.config.connect_timeout.as_millis();
                self.connection_lost(format!("connecting timed out after {ms} ms"));
            }
        }
        self.expire(now);
        if done() {
            return false;
        }

        let timeout = self.next_deadline().map(|d| {
            MicroSeconds(
                d.saturating_duration_since(now)
                    .as_micros()
                    .min(i32::MAX as u128) as u64,
            )
        });
        if let Err(e) = self.mainloop.prepare(timeout) {
            tracing::warn!(error = %e, "pulse main loop prepare failed");
            return false;
        }
        if let Err(e) = self.mainloop.poll() {
            // EINTR and the like: try again on the next turn.
            tracing::debug!(error = %e, "pulse main loop poll");
        }
        if let Err(e) = self.mainloop.dispatch() {
            tracing::warn!(error = %e, "pulse main loop dispatch failed");
            return false;
        }
        self.process_internal();
        true
    }

    fn next_deadline(&self) -> Option<Instant> {
        let reconnect = self.retry_at.filter(|_| self.conn.is_none());
        let connect = self
            .conn
            .as_ref()
            .filter(|c| c.state != ConnState::Ready)
            .map(|c| c.started + self.config.connect_timeout);
        [reconnect, connect, self.waiting.next_deadline()]
            .into_iter()
            .flatten()
            .min()
    }

    fn expire(&mut self, now: Instant) {
        let timeout_ms = self.config.request_timeout.as_millis() as u64;
        self.waiting.expire(now, timeout_ms);
    }

    fn emit_all(&self, events: Vec<PulseEvent>) {
        for event in events {
            self.emit(event);
        }
    }

    fn emit(&self, event: PulseEvent) {
        // No subscriber is fine.
        let _ = self.events.send(event);
    }

    fn next_id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    fn server_label(&self) -> String {
        self.config
            .server
            .clone()
            .unwrap_or_else(|| audio_server::describe(&audio_server::ServerEnv::from_process()))
    }

    /// The error for a request that arrives while there is no connection.
    fn unavailable(&self) -> PulseError {
        if let Some(err) = &self.stopped {
            return err.clone();
        }
        if self.ever_connected {
            PulseError::Disconnected {
                reason: "reconnecting to the audio server".into(),
            }
        } else {
            PulseError::NotRunning {
                server: self.server_label(),
                message: "nothing answers there".into(),
            }
        }
    }

    // ---- connection ---------------------------------------------------------------------

    fn connect(&mut self) {
        let id = self.next_id();
        match ops::connect_context(&self.mainloop, &self.config, &self.queue, id) {
            Ok(ctx) => {
                self.conn = Some(Conn {
                    id,
                    ctx,
                    state: ConnState::Connecting,
                    started: Instant::now(),
                })
            }
            Err(message) => self.connect_failed(id, message),
        }
    }

    fn connect_failed(&mut self, _id: u64, message: String) {
        self.conn = None;
        self.after_loss(message, false);
    }

    fn drop_conn(&mut self) {
        if let Some(mut conn) = self.conn.take() {
            conn.ctx.set_state_callback(None);
            conn.ctx.set_subscribe_callback(None);
            conn.ctx.disconnect();
        }
        self.connected.store(false, Ordering::SeqCst);
    }

    fn connection_lost(&mut self, reason: String) {
        let was_ready = self
            .conn
            .as_ref()
            .is_some_and(|c| c.state == ConnState::Ready);
        self.drop_conn();
        self.after_loss(reason, was_ready);
    }

    fn after_loss(&mut self, reason: String, was_ready: bool) {
        self.cache.clear();
        self.connected.store(false, Ordering::SeqCst);
        let err = if was_ready || self.ever_connected {
            PulseError::Disconnected {
                reason: reason.clone(),
            }
        } else {
            PulseError::NotRunning {
                server: self.server_label(),
                message: reason.clone(),
            }
        };
        if was_ready {
            tracing::info!(%reason, "disconnected from the audio server");
            self.emit(PulseEvent::Disconnected {
                reason: reason.clone(),
            });
        } else {
            tracing::debug!(%reason, "could not connect to the audio server");
        }
        self.fail_everything(&err);
        if self.config.reconnect {
            let delay = self.config.backoff.delay(self.attempt);
            self.attempt = self.attempt.saturating_add(1);
            self.retry_at = Some(Instant::now() + delay);
        } else {
            self.stopped = Some(err);
            self.retry_at = None;
        }
    }

    fn fail_everything(&mut self, err: &PulseError) {
        self.waiting.fail_all(err);
    }

    /// The context, if it is usable right now. libpulse-binding panics when an operation is
    /// started on a context that is not ready, so every operation goes through here.
    fn ready_ctx(&mut self) -> Option<&mut Context> {
        let conn = self.conn.as_mut()?;
        (conn.ctx.get_state() == State::Ready).then_some(&mut conn.ctx)
    }

    fn on_state(&mut self, id: u64) {
        let Some(conn) = self.conn.as_mut().filter(|c| c.id == id) else {
            return;
        };
        match conn.ctx.get_state() {
            State::Ready if conn.state == ConnState::Connecting => {
                ops::subscribe(&mut conn.ctx);
                let refresh = self.next_id();
                if let Some(conn) = self.conn.as_mut() {
                    conn.state = ConnState::Loading(refresh);
                }
                self.start_refresh(refresh, Vec::new());
            }
            State::Failed | State::Terminated => {
                let err = conn.ctx.errno();
                let reason = err
                    .to_string()
                    .unwrap_or_else(|| format!("error {}", err.0));
                self.connection_lost(reason);
            }
            _ => {}
        }
    }

    // ---- commands -----------------------------------------------------------------------

    fn handle_command(&mut self, cmd: Command) {
        let state = self.conn.as_ref().map(|c| c.state);
        match (state, cmd) {
            (_, Command::Shutdown) => {}
            (Some(ConnState::Ready), Command::View(req, deadline)) => {
                let id = self.next_id();
                self.start_refresh(id, vec![(deadline, req)]);
            }
            (Some(ConnState::Ready), Command::Change(req, deadline)) => {
                self.start_change(req, deadline)
            }
            (Some(_), cmd) => self.waiting.queued.push(cmd),
            (None, cmd) if self.stopped.is_none() && !self.ever_connected && self.attempt == 0 => {
                // Before the very first attempt has run: wait for it.
                self.waiting.queued.push(cmd)
            }
            (None, cmd) => cmd.fail(self.unavailable()),
        }
    }

    fn start_change(&mut self, req: ChangeRequest, deadline: Instant) {
        let op = self.next_id();
        let q = self.queue.clone();
        let Some(conn_id) = self.conn.as_ref().map(|c| c.id) else {
            return req.fail(self.unavailable());
        };
        if let Some(why) = req.refusal() {
            return req.fail(PulseError::Config(why.into()));
        }
        let Some(ctx) = self.ready_ctx() else {
            return req.fail(self.unavailable());
        };
        ops::start_change(ctx, &q, conn_id, op, &req);
        self.waiting.changes.insert(op, (deadline, req));
    }

    // ---- listings -----------------------------------------------------------------------

    /// Starts a full listing. Parts are applied to the cache as they arrive (each reply is a
    /// consistent point in the server's event order); waiters are answered after the last.
    fn start_refresh(&mut self, refresh: u64, waiters: Vec<(Instant, ViewRequest)>) {
        let Some(conn_id) = self.conn.as_ref().map(|c| c.id) else {
            let err = self.unavailable();
            waiters.into_iter().for_each(|(_, w)| w.fail(err.clone()));
            return;
        };
        let q = self.queue.clone();
        let Some(ctx) = self.ready_ctx() else {
            self.connection_lost("connection is not ready".into());
            waiters.into_iter().for_each(|(_, w)| {
                w.fail(PulseError::Disconnected {
                    reason: "connection is not ready".into(),
                })
            });
            return;
        };
        ops::start_listing(ctx, &q, conn_id, refresh);
        self.waiting.refreshes.insert(
            refresh,
            Refresh {
                parts_left: PARTS,
                error: None,
                waiters,
            },
        );
    }

    fn on_part(&mut self, refresh: u64, part: Part) {
        let ready = self
            .conn
            .as_ref()
            .is_some_and(|c| c.state == ConnState::Ready);
        let list_name = part.list_name();
        // The events each part means; `None` when the server failed that list.
        let events = match part {
            Part::Server(s) => s.map(|s| {
                self.cache.set_server(s);
                Vec::new()
            }),
            Part::Clients(list) => list.map(|list| {
                self.cache.set_clients(list);
                Vec::new()
            }),
            Part::Sources(list) => {
                list.map(|list| self.cache.apply_devices(DeviceKind::Source, list, ready))
            }
            Part::Sinks(list) => {
                list.map(|list| self.cache.apply_devices(DeviceKind::Sink, list, ready))
            }
            Part::Records(list) => {
                list.map(|list| self.cache.apply_streams(StreamKind::Record, list, ready))
            }
            Part::Playbacks(list) => {
                list.map(|list| self.cache.apply_streams(StreamKind::Playback, list, ready))
            }
        };
        let failed = match events {
            Some(events) => {
                self.emit_all(events);
                None
            }
            None => Some(list_name),
        };
        let Some(r) = self.waiting.refreshes.get_mut(&refresh) else {
            return;
        };
        if let Some(what) = failed {
            tracing::warn!(what, "audio server failed a listing");
            r.error
                .get_or_insert_with(|| format!("the server failed the {what}"));
        }
        r.parts_left = r.parts_left.saturating_sub(1);
        if r.parts_left > 0 {
            return;
        }
        let Some(done) = self.waiting.refreshes.remove(&refresh) else {
            return;
        };
        if self.conn.as_ref().map(|c| c.state) == Some(ConnState::Loading(refresh)) {
            self.became_ready();
        }
        for (_, req) in done.waiters {
            match &done.error {
                Some(message) => req.fail(PulseError::Protocol {
                    op: "list",
                    message: message.clone(),
                }),
                None => self.answer(req),
            }
        }
    }

    fn became_ready(&mut self) {
        if let Some(conn) = self.conn.as_mut() {
            conn.state = ConnState::Ready;
        }
        self.ever_connected = true;
        self.attempt = 0;
        self.stopped = None;
        self.connected.store(true, Ordering::SeqCst);
        let info = self.server_info();
        tracing::info!(server = %info.server_name, version = %info.server_version, "connected to the audio server");
        self.emit(PulseEvent::Connected { info });
        self.emit_all(self.cache.ready_events());
        for cmd in std::mem::take(&mut self.waiting.queued) {
            self.handle_command(cmd);
        }
    }

    fn server_info(&self) -> ServerInfo {
        server_info::server_info(self.cache.server(), self.conn.as_ref().map(|c| &c.ctx))
    }

    fn answer(&self, req: ViewRequest) {
        let _ = match req {
            ViewRequest::Server(tx) => tx.send(Ok(self.server_info())).is_ok(),
            ViewRequest::Streams(tx) => tx.send(Ok(self.cache.streams())).is_ok(),
            ViewRequest::Sources(tx) => tx.send(Ok(self.cache.sources())).is_ok(),
            ViewRequest::Sinks(tx) => tx.send(Ok(self.cache.sinks())).is_ok(),
            ViewRequest::Snapshot(tx) => tx
                .send(Ok(Snapshot {
                    server: self.server_info(),
                    sources: self.cache.sources(),
                    sinks: self.cache.sinks(),
                    streams: self.cache.streams(),
                }))
                .is_ok(),
        };
    }
}
