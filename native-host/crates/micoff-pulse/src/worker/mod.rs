//! The one thread that owns libpulse: a standard `Mainloop` driven by `prepare/poll/dispatch`,
//! one `Context` at a time, and a cache of clients, devices and streams kept current by
//! subscription events.
//!
//! libpulse callbacks never touch the worker directly: they push [`Internal`] items onto a queue
//! (an `Rc<RefCell<..>>`, single thread) that the loop drains after each dispatch. That keeps
//! every `Context` call out of callbacks and avoids re-entrancy. Commands from other threads
//! arrive on a std channel; a byte on a socket pair wakes the poll, so an idle client does not
//! wake up at all.

use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::io::Read;
use std::os::unix::io::AsRawFd;
use std::os::unix::net::UnixStream;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Instant;

use libpulse_binding as pulse;
use micoff_audio_server as audio_server;
use pulse::callbacks::ListResult;
use pulse::context::subscribe::{Facility, InterestMaskSet, Operation as SubOp};
use pulse::context::{Context, FlagSet, State};
use pulse::mainloop::api::Mainloop as _;
use pulse::mainloop::events::io::{FlagSet as IoEventFlagSet, IoEvent};
use pulse::mainloop::standard::Mainloop;
use pulse::proplist::Proplist;
use pulse::time::MicroSeconds;
use tokio::sync::{broadcast, oneshot};

use crate::cache::Cache;
use crate::convert::{self, Client, RawServerInfo, RawStream};
use crate::error::{PulseError, Result};
use crate::types::{Device, DeviceKind, PulseEvent, ServerInfo, Snapshot, StreamKind, Streams};
use crate::PulseConfig;

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
    fn name(&self) -> &'static str {
        match self {
            Self::Server(_) => "server_info",
            Self::Streams(_) => "streams",
            Self::Sources(_) => "sources",
            Self::Sinks(_) => "sinks",
            Self::Snapshot(_) => "snapshot",
        }
    }

    fn fail(self, err: PulseError) {
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
    fn name(&self) -> &'static str {
        match self {
            Self::Load { .. } => "load_module",
            Self::Unload { .. } => "unload_module",
        }
    }

    fn fail(self, err: PulseError) {
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
    fn fail(self, err: PulseError) {
        match self {
            Self::View(r, _) => r.fail(err),
            Self::Module(r, _) => r.fail(err),
            Self::Shutdown => {}
        }
    }

    fn deadline(&self) -> Option<Instant> {
        match self {
            Self::View(_, d) | Self::Module(_, d) => Some(*d),
            Self::Shutdown => None,
        }
    }

    fn name(&self) -> &'static str {
        match self {
            Self::View(r, _) => r.name(),
            Self::Module(r, _) => r.name(),
            Self::Shutdown => "shutdown",
        }
    }
}

/// One part of a full listing; `None` when the server failed that list.
enum Part {
    Server(Option<RawServerInfo>),
    Clients(Option<Vec<Client>>),
    Sources(Option<Vec<Device>>),
    Sinks(Option<Vec<Device>>),
    Records(Option<Vec<RawStream>>),
    Playbacks(Option<Vec<RawStream>>),
}
const PARTS: u8 = 6;

/// One object fetched after a subscription event (`changed` = the event was a change, not new).
enum Fetched {
    Server(RawServerInfo),
    Client(Client),
    Device(Device, bool),
    Stream(RawStream, bool),
}

/// What libpulse callbacks report to the loop. `conn` is the connection generation.
enum Internal {
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
    ModuleDone {
        conn: u64,
        op: u64,
        result: std::result::Result<u32, String>,
    },
}

type Queue = Rc<RefCell<VecDeque<Internal>>>;

fn push(q: &Queue, item: Internal) {
    q.borrow_mut().push_back(item);
}

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

struct Refresh {
    parts_left: u8,
    error: Option<String>,
    waiters: Vec<(Instant, ViewRequest)>,
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
    queued: Vec<Command>,
    refreshes: HashMap<u64, Refresh>,
    module_ops: HashMap<u64, (Instant, ModuleRequest)>,
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
            queued: Vec::new(),
            refreshes: HashMap::new(),
            module_ops: HashMap::new(),
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
        let mut next: Option<Instant> = None;
        let mut consider = |t: Instant| next = Some(next.map_or(t, |n| n.min(t)));
        if self.conn.is_none() {
            if let Some(t) = self.retry_at {
                consider(t);
            }
        }
        if let Some(conn) = &self.conn {
            if conn.state != ConnState::Ready {
                consider(conn.started + self.config.connect_timeout);
            }
        }
        self.queued
            .iter()
            .filter_map(Command::deadline)
            .for_each(&mut consider);
        for r in self.refreshes.values() {
            r.waiters.iter().for_each(|(d, _)| consider(*d));
        }
        self.module_ops.values().for_each(|(d, _)| consider(*d));
        next
    }

    fn expire(&mut self, now: Instant) {
        let timeout_ms = self.config.request_timeout.as_millis() as u64;
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
            .module_ops
            .iter()
            .filter(|(_, (d, _))| *d <= now)
            .map(|(id, _)| *id)
            .collect();
        for id in late {
            if let Some((_, req)) = self.module_ops.remove(&id) {
                let what = req.name();
                req.fail(timeout(what));
            }
        }
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
                message: "not connected (retrying)".into(),
            }
        }
    }

    // ---- connection ---------------------------------------------------------------------

    fn connect(&mut self) {
        let id = self.next_id();
        let mut props = match Proplist::new() {
            Some(p) => p,
            None => return self.connect_failed(id, "cannot allocate a proplist".into()),
        };
        let _ = props.set_str(
            pulse::proplist::properties::APPLICATION_NAME,
            &self.config.app_name,
        );
        let Some(mut ctx) =
            Context::new_with_proplist(&self.mainloop, &self.config.app_name, &props)
        else {
            return self.connect_failed(id, "cannot create a pulse context".into());
        };
        let q = self.queue.clone();
        ctx.set_state_callback(Some(Box::new(move || {
            push(&q, Internal::State { conn: id })
        })));
        let q = self.queue.clone();
        ctx.set_subscribe_callback(Some(Box::new(move |facility, op, index| {
            if let (Some(facility), Some(op)) = (facility, op) {
                push(
                    &q,
                    Internal::Event {
                        conn: id,
                        facility,
                        op,
                        index,
                    },
                );
            }
        })));
        tracing::debug!(server = ?self.config.server, "connecting to the audio server");
        // NOAUTOSPAWN: a diagnostics tool must never start an audio server by itself.
        if let Err(e) = ctx.connect(self.config.server.as_deref(), FlagSet::NOAUTOSPAWN, None) {
            let msg = e.to_string().unwrap_or_else(|| format!("error {}", e.0));
            return self.connect_failed(id, msg);
        }
        self.conn = Some(Conn {
            id,
            ctx,
            state: ConnState::Connecting,
            started: Instant::now(),
        });
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
        for cmd in std::mem::take(&mut self.queued) {
            cmd.fail(err.clone());
        }
        for (_, r) in self.refreshes.drain() {
            for (_, req) in r.waiters {
                req.fail(err.clone());
            }
        }
        for (_, (_, req)) in self.module_ops.drain() {
            req.fail(err.clone());
        }
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
                let mask = InterestMaskSet::SOURCE_OUTPUT
                    | InterestMaskSet::SINK_INPUT
                    | InterestMaskSet::SOURCE
                    | InterestMaskSet::SINK
                    | InterestMaskSet::SERVER
                    | InterestMaskSet::CLIENT;
                conn.ctx.subscribe(mask, |ok| {
                    if !ok {
                        tracing::warn!("subscribing to audio server events failed");
                    }
                });
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
            (Some(ConnState::Ready), Command::Module(req, deadline)) => {
                self.start_module_op(req, deadline)
            }
            (Some(_), cmd) => self.queued.push(cmd),
            (None, cmd) if self.stopped.is_none() && !self.ever_connected && self.attempt == 0 => {
                // Before the very first attempt has run: wait for it.
                self.queued.push(cmd)
            }
            (None, cmd) => cmd.fail(self.unavailable()),
        }
    }

    fn start_module_op(&mut self, req: ModuleRequest, deadline: Instant) {
        let op = self.next_id();
        let q = self.queue.clone();
        let Some(conn_id) = self.conn.as_ref().map(|c| c.id) else {
            return req.fail(self.unavailable());
        };
        match &req {
            ModuleRequest::Load { name, args, .. } => {
                if name.contains('\0') || args.contains('\0') {
                    return req.fail(PulseError::Config(
                        "module name or arguments contain NUL".into(),
                    ));
                }
                let (name, args) = (name.clone(), args.clone());
                let Some(ctx) = self.ready_ctx() else {
                    return req.fail(self.unavailable());
                };
                let what = format!("loading {name} failed");
                ctx.introspect().load_module(&name, &args, move |index| {
                    let result = if index == u32::MAX {
                        Err(what.clone())
                    } else {
                        Ok(index)
                    };
                    push(
                        &q,
                        Internal::ModuleDone {
                            conn: conn_id,
                            op,
                            result,
                        },
                    );
                });
            }
            ModuleRequest::Unload { index, .. } => {
                let index = *index;
                let Some(ctx) = self.ready_ctx() else {
                    return req.fail(self.unavailable());
                };
                ctx.introspect().unload_module(index, move |ok| {
                    let result = if ok {
                        Ok(index)
                    } else {
                        Err(format!("unloading module {index} failed"))
                    };
                    push(
                        &q,
                        Internal::ModuleDone {
                            conn: conn_id,
                            op,
                            result,
                        },
                    );
                });
            }
        }
        self.module_ops.insert(op, (deadline, req));
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
        let intro = ctx.introspect();

        macro_rules! list {
            ($method:ident, $convert:path, $part:ident) => {{
                let q = q.clone();
                let mut acc = Vec::new();
                intro.$method(move |r| match r {
                    ListResult::Item(info) => acc.push($convert(info)),
                    ListResult::End => push(
                        &q,
                        Internal::Part {
                            conn: conn_id,
                            refresh,
                            part: Part::$part(Some(std::mem::take(&mut acc))),
                        },
                    ),
                    ListResult::Error => push(
                        &q,
                        Internal::Part {
                            conn: conn_id,
                            refresh,
                            part: Part::$part(None),
                        },
                    ),
                });
            }};
        }
        // Clients and devices first, so streams find them in the cache.
        list!(get_client_info_list, convert::client_of, Clients);
        list!(get_source_info_list, convert::source_device, Sources);
        list!(get_sink_info_list, convert::sink_device, Sinks);
        list!(get_source_output_info_list, convert::record_stream, Records);
        list!(
            get_sink_input_info_list,
            convert::playback_stream,
            Playbacks
        );
        let q2 = q.clone();
        intro.get_server_info(move |info| {
            push(
                &q2,
                Internal::Part {
                    conn: conn_id,
                    refresh,
                    part: Part::Server(Some(convert::server_of(info))),
                },
            )
        });
        self.refreshes.insert(
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
        let mut failed: Option<&'static str> = None;
        match part {
            Part::Server(Some(s)) => {
                self.cache.set_server(s);
            }
            Part::Clients(Some(list)) => self.cache.set_clients(list),
            Part::Sources(Some(list)) => {
                let events = self.cache.apply_devices(DeviceKind::Source, list, ready);
                self.emit_all(events);
            }
            Part::Sinks(Some(list)) => {
                let events = self.cache.apply_devices(DeviceKind::Sink, list, ready);
                self.emit_all(events);
            }
            Part::Records(Some(list)) => {
                let events = self.cache.apply_streams(StreamKind::Record, list, ready);
                self.emit_all(events);
            }
            Part::Playbacks(Some(list)) => {
                let events = self.cache.apply_streams(StreamKind::Playback, list, ready);
                self.emit_all(events);
            }
            Part::Server(None) => failed = Some("server info"),
            Part::Clients(None) => failed = Some("client list"),
            Part::Sources(None) => failed = Some("source list"),
            Part::Sinks(None) => failed = Some("sink list"),
            Part::Records(None) => failed = Some("source output list"),
            Part::Playbacks(None) => failed = Some("sink input list"),
        }
        let Some(r) = self.refreshes.get_mut(&refresh) else {
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
        let Some(done) = self.refreshes.remove(&refresh) else {
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
        for cmd in std::mem::take(&mut self.queued) {
            self.handle_command(cmd);
        }
    }

    fn server_info(&self) -> ServerInfo {
        let raw = self.cache.server();
        let (server_string, server_proto, is_local) = match &self.conn {
            Some(c) => (
                c.ctx.get_server(),
                c.ctx.get_server_protocol_version(),
                c.ctx.is_local(),
            ),
            None => (None, None, None),
        };
        let client_proto = self
            .conn
            .as_ref()
            .map_or(0, |c| c.ctx.get_protocol_version());
        let is_pipewire = audio_server::is_pipewire(&raw.server_name)
            || audio_server::is_pipewire(&raw.server_version);
        ServerInfo {
            socket_path: server_string
                .as_deref()
                .and_then(audio_server::socket_of)
                .map(|p| p.display().to_string()),
            server_string,
            pipewire_version: audio_server::pipewire_version(&raw.server_name)
                .or_else(|| audio_server::pipewire_version(&raw.server_version)),
            is_pipewire,
            server_name: raw.server_name,
            server_version: raw.server_version,
            host_name: Some(raw.host_name).filter(|h| !h.is_empty()),
            user_name: Some(raw.user_name).filter(|u| !u.is_empty()),
            default_sink_name: raw.default_sink_name,
            default_source_name: raw.default_source_name,
            sample_format: raw.sample_spec.format,
            sample_rate_hz: raw.sample_spec.rate_hz,
            channels: raw.sample_spec.channels,
            server_protocol_version: server_proto,
            client_protocol_version: client_proto,
            is_local,
        }
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

    // ---- subscription events -----------------------------------------------------------

    fn on_event(&mut self, facility: Facility, op: SubOp, index: u32) {
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
        let intro = ctx.introspect();
        macro_rules! fetch {
            ($method:ident, $wrap:expr) => {{
                intro.$method(index, move |r| {
                    // Error = it went away meanwhile; its Removed event follows.
                    if let ListResult::Item(info) = r {
                        push(
                            &q,
                            Internal::Fetched {
                                conn: conn_id,
                                item: $wrap(info),
                            },
                        );
                    }
                });
            }};
        }
        match facility {
            Facility::SourceOutput => fetch!(get_source_output_info, |i| Fetched::Stream(
                convert::record_stream(i),
                changed
            )),
            Facility::SinkInput => fetch!(get_sink_input_info, |i| Fetched::Stream(
                convert::playback_stream(i),
                changed
            )),
            Facility::Source => fetch!(get_source_info_by_index, |i| Fetched::Device(
                convert::source_device(i),
                changed
            )),
            Facility::Sink => fetch!(get_sink_info_by_index, |i| Fetched::Device(
                convert::sink_device(i),
                changed
            )),
            Facility::Client => fetch!(get_client_info, |i| Fetched::Client(convert::client_of(i))),
            Facility::Server => {
                intro.get_server_info(move |info| {
                    push(
                        &q,
                        Internal::Fetched {
                            conn: conn_id,
                            item: Fetched::Server(convert::server_of(info)),
                        },
                    )
                });
            }
            _ => {}
        }
    }

    fn on_fetched(&mut self, item: Fetched) {
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

    fn on_module_done(&mut self, op: u64, result: std::result::Result<u32, String>) {
        let Some((_, req)) = self.module_ops.remove(&op) else {
            return;
        };
        let _ = match (req, result) {
            (ModuleRequest::Load { reply, .. }, Ok(index)) => reply.send(Ok(index)).is_ok(),
            (ModuleRequest::Unload { reply, .. }, Ok(_)) => reply.send(Ok(())).is_ok(),
            (req, Err(message)) => {
                let op = req.name();
                req.fail(PulseError::Protocol { op, message });
                true
            }
        };
    }

    fn process_internal(&mut self) {
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
                Internal::ModuleDone { conn, op, result } if Some(conn) == current => {
                    self.on_module_done(op, result)
                }
                _ => {} // from a connection that is gone
            }
        }
    }
}
