//! The measured client: a minimal libpulse client (asynchronous API, its own standard mainloop on
//! the main thread) that records from a source or plays a tone to a sink at the requested latency.
//!
//! It runs as a CHILD process of the bench (re-executed with the hidden `--child` flag) so that
//! 1. its threads are measured apart from the bench's own sampling, and
//! 2. `PULSE_CLIENTCONFIG` can switch shared memory (and with it srbchannel) off for it alone.
//!
//! It talks to the parent with JSON lines on stdout ([`ChildMessage`]): `ready` once the stream is
//! running and data flows, `done` after the parent closes our stdin (or writes `stop`).
//! The stdin watch is an io event on the same mainloop, so it adds no thread and no wakeups.

use std::borrow::Cow;
use std::cell::{Cell, RefCell};
use std::f64::consts::PI;
use std::io::Write;
use std::rc::Rc;

use libpulse_binding as pulse;
use pulse::callbacks::ListResult;
use pulse::context::{Context, FlagSet as ContextFlags, State as ContextState};
use pulse::def::BufferAttr;
use pulse::mainloop::api::Mainloop as _;
use pulse::mainloop::events::io::FlagSet as IoFlags;
use pulse::mainloop::standard::{IterateResult, Mainloop};
use pulse::sample::{Format, Spec};
use pulse::stream::{FlagSet as StreamFlags, PeekResult, State as StreamState, Stream};
use serde::{Deserialize, Serialize};

use crate::Direction;

/// The sample format of the measured stream: what `parec`/`pacat` use by default, so the
/// `--compare parec` reference moves the same number of bytes.
pub const SAMPLE_RATE: u32 = 44_100;
pub const CHANNELS: u8 = 2;
const FRAME_BYTES: usize = 4;
const TONE_HZ: f64 = 440.0;

/// One line from the child to the parent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ChildMessage {
    Ready(ReadyInfo),
    Done(DoneInfo),
    Error {
        message: String,
        /// The server said "no such entity" (e.g. the `--source` / `--sink` does not exist).
        #[serde(default)]
        not_found: bool,
    },
}

/// Sent once the stream is ready and the first data moved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReadyInfo {
    pub pid: u32,
    /// Device the stream ended up on.
    pub device: Option<String>,
    pub sample_rate: u32,
    pub channels: u8,
    pub buffer: GrantedBuffer,
    /// Stream latency (`pa_stream_get_latency`) right after start.
    pub latency_us: Option<u64>,
    /// Read/write callbacks so far (the `done` count minus this one covers the window).
    pub callbacks: u64,
    /// Other clients and streams at the server when the stream was ready (before the window).
    #[serde(default)]
    pub others: ServerActivity,
}

/// Buffer attributes the server granted, in bytes (`u32::MAX` = server default).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct GrantedBuffer {
    pub maxlength_bytes: u32,
    pub tlength_bytes: u32,
    pub prebuf_bytes: u32,
    pub minreq_bytes: u32,
    pub fragsize_bytes: u32,
}

impl GrantedBuffer {
    /// The granted latency that matters for `direction`: fragsize for recording, tlength for
    /// playback, in microseconds of the stream's sample spec.
    pub fn granted_us(&self, direction: Direction, sample_rate: u32, channels: u8) -> Option<u64> {
        let bytes = match direction {
            Direction::Record => self.fragsize_bytes,
            Direction::Playback => self.tlength_bytes,
        };
        bytes_to_us(bytes, sample_rate, channels)
    }
}

/// Bytes of s16 audio to microseconds; `None` for "server default" (`u32::MAX`) or a bad spec.
pub fn bytes_to_us(bytes: u32, sample_rate: u32, channels: u8) -> Option<u64> {
    let bytes_per_s = u64::from(sample_rate) * u64::from(channels) * 2;
    if bytes == u32::MAX || bytes_per_s == 0 {
        return None;
    }
    Some(u64::from(bytes) * 1_000_000 / bytes_per_s)
}

/// Milliseconds of s16 audio to whole frames' bytes (what parec does with `--latency-msec`).
pub fn ms_to_bytes(latency_ms: u32, sample_rate: u32, channels: u8) -> u32 {
    let frames = u64::from(sample_rate) * u64::from(latency_ms) / 1000;
    let bytes = frames * u64::from(channels) * 2;
    u32::try_from(bytes).unwrap_or(u32::MAX)
}

/// Decides when a stream's data flows steadily, from a growing count of its transfers (our
/// callbacks, or parec's writes): two intervals in a row, each of max(200 ms, 3 periods), with at
/// least half the expected transfers. The first data is not enough: after a stream opens, an
/// idle null sink can send a short burst and then stall until its old (up to 2 s) timer fires
/// (module-null-sink keeps its next wake-up time when the requested latency drops).
#[derive(Debug, Clone)]
pub struct SteadyFlow {
    interval: std::time::Duration,
    period: std::time::Duration,
    expected: u64,
    mark: Option<(std::time::Instant, u64)>,
    good: u32,
}

impl SteadyFlow {
    const GOOD_INTERVALS: u32 = 2;

    pub fn new(period_ms: u32) -> Self {
        let period_ms = u64::from(period_ms.max(1));
        let interval_ms = (3 * period_ms).max(200);
        Self {
            interval: std::time::Duration::from_millis(interval_ms),
            period: std::time::Duration::from_millis(period_ms),
            expected: interval_ms / period_ms,
            mark: None,
            good: 0,
        }
    }

    /// The longest a stream that flows at its period takes to be seen as steady: its first
    /// transfer (a period), then the good intervals, each ending at the first transfer after it
    /// (up to a period late).
    pub fn longest_wait(&self) -> std::time::Duration {
        self.period + (self.interval + self.period) * Self::GOOD_INTERVALS
    }

    /// Feed the count at `now`; true once enough whole intervals in a row saw enough transfers.
    pub fn observe(&mut self, now: std::time::Instant, count: u64) -> bool {
        match self.mark {
            None => self.mark = Some((now, count)),
            Some((t, c)) if now.duration_since(t) >= self.interval => {
                if count.saturating_sub(c) * 2 >= self.expected {
                    self.good += 1;
                } else {
                    self.good = 0;
                }
                self.mark = Some((now, count));
            }
            Some(_) => {}
        }
        self.good >= Self::GOOD_INTERVALS
    }
}

/// Sent after the parent asked us to stop.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DoneInfo {
    /// Bytes read (record) or written (playback) since the stream started.
    pub bytes: u64,
    /// Read or write callbacks since the stream started (each one is a wakeup of ours).
    pub callbacks: u64,
    pub overflows: u64,
    pub underflows: u64,
    pub buffer: GrantedBuffer,
    pub latency_us: Option<u64>,
    /// Other clients and streams at the server at the end (listed after the window).
    #[serde(default)]
    pub others: ServerActivity,
}

/// Other clients and streams at the server, as one connection sees them (itself left out). Their
/// work lands in the server columns too: a reader must know they were there.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerActivity {
    /// Names of the other connected clients (an idle client costs the server nothing).
    pub clients: Vec<String>,
    /// Streams of other clients, e.g. `source output "rec" of client "Chromium"`.
    pub client_streams: Vec<String>,
    /// Streams the server's own modules hold (e.g. module-remap-source's on its master): part of
    /// the server's configuration; the idle baseline shows what they cost.
    pub module_streams: Vec<String>,
}

impl ServerActivity {
    /// Adds what `other` saw that is not listed yet (keeps first-seen order).
    pub fn merge(&mut self, other: &ServerActivity) {
        fn add(into: &mut Vec<String>, from: &[String]) {
            for x in from {
                if !into.contains(x) {
                    into.push(x.clone());
                }
            }
        }
        add(&mut self.clients, &other.clients);
        add(&mut self.client_streams, &other.client_streams);
        add(&mut self.module_streams, &other.module_streams);
    }
}

/// What a one-shot connection learns about the server (the parent's probe before any window).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerProbe {
    pub server_name: String,
    pub server_version: String,
    pub protocol_version: Option<u32>,
    pub activity: ServerActivity,
}

/// What the child was asked to do.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    pub direction: Direction,
    pub latency_ms: u32,
    pub device: Option<String>,
    pub server: Option<String>,
    pub app_name: String,
}

#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("libpulse: {0}")]
    Pulse(String),
    #[error("connection to the audio server failed: {0}")]
    Connect(String),
    #[error("stream failed: {0}")]
    Stream(String),
    #[error("stream failed: {0} (no such device?)")]
    NotFound(String),
    #[error("writing to the parent: {0}")]
    Io(#[from] std::io::Error),
}

#[derive(Default)]
struct Counters {
    bytes: Cell<u64>,
    callbacks: Cell<u64>,
    overflows: Cell<u64>,
    underflows: Cell<u64>,
}

/// Run the client until stdin closes. Writes [`ChildMessage`] lines to `out`. Errors are also
/// reported as an `error` line by the caller.
pub fn run_client(cfg: &ClientConfig, out: &mut dyn Write) -> Result<(), ClientError> {
    let (mut mainloop, mut context) = connect(cfg.server.as_deref(), &cfg.app_name)?;

    let spec = Spec {
        format: Format::S16NE,
        rate: SAMPLE_RATE,
        channels: CHANNELS,
    };
    let stream = Rc::new(RefCell::new(
        Stream::new(&mut context, &cfg.app_name, &spec, None)
            .ok_or_else(|| ClientError::Stream(pa_err(context.errno())))?,
    ));
    let counters = Rc::new(Counters::default());
    let latency_bytes = ms_to_bytes(cfg.latency_ms, SAMPLE_RATE, CHANNELS);
    let flags = StreamFlags::ADJUST_LATENCY;
    match cfg.direction {
        Direction::Record => {
            let attr = BufferAttr {
                maxlength: u32::MAX,
                tlength: u32::MAX,
                prebuf: u32::MAX,
                minreq: u32::MAX,
                fragsize: latency_bytes,
            };
            install_record_callback(&stream, &counters);
            stream
                .borrow_mut()
                .connect_record(cfg.device.as_deref(), Some(&attr), flags)
                .map_err(|e| ClientError::Stream(pa_err(e)))?;
        }
        Direction::Playback => {
            let attr = BufferAttr {
                maxlength: u32::MAX,
                tlength: latency_bytes,
                prebuf: u32::MAX,
                minreq: u32::MAX,
                fragsize: u32::MAX,
            };
            install_playback_callback(&stream, &counters);
            stream
                .borrow_mut()
                .connect_playback(cfg.device.as_deref(), Some(&attr), flags, None, None)
                .map_err(|e| ClientError::Stream(pa_err(e)))?;
        }
    }
    {
        let c = Rc::clone(&counters);
        stream
            .borrow_mut()
            .set_overflow_callback(Some(Box::new(move || {
                c.overflows.set(c.overflows.get() + 1)
            })));
        let c = Rc::clone(&counters);
        stream
            .borrow_mut()
            .set_underflow_callback(Some(Box::new(move || {
                c.underflows.set(c.underflows.get() + 1);
            })));
    }

    // Wait for the stream to be ready and data to move steadily (an idle null sink can take
    // about 2 s to deliver more than a first fragment, or to consume the first one). A playback
    // stream's first write request comes at once, before the sink has consumed anything: count
    // from the second.
    let min_callbacks = match cfg.direction {
        Direction::Record => 1,
        Direction::Playback => 2,
    };
    let mut flow = SteadyFlow::new(cfg.latency_ms);
    loop {
        iterate(&mut mainloop)?;
        let state = stream.borrow().get_state();
        let callbacks = counters.callbacks.get();
        match state {
            StreamState::Ready
                if callbacks >= min_callbacks
                    && flow.observe(std::time::Instant::now(), callbacks) =>
            {
                break
            }
            StreamState::Failed | StreamState::Terminated => {
                let e = context.errno();
                return Err(if is_no_entity(e) {
                    ClientError::NotFound(pa_err(e))
                } else {
                    ClientError::Stream(pa_err(e))
                });
            }
            _ => {}
        }
    }
    let latency_us = query_latency(&mut mainloop, &stream)?;
    let device = stream.borrow().get_device_name().map(|d| d.into_owned());
    let buffer = granted(&stream);
    // Listed now, before the parent's window starts (it starts after `ready`).
    let others = list_activity(&mut mainloop, &context)?;
    let ready = ReadyInfo {
        pid: std::process::id(),
        device,
        sample_rate: SAMPLE_RATE,
        channels: CHANNELS,
        buffer,
        latency_us,
        callbacks: counters.callbacks.get(),
        others,
    };
    write_line(out, &ChildMessage::Ready(ready))?;

    // Run until the parent closes our stdin or writes a line.
    let stop = Rc::new(Cell::new(false));
    let stop_cb = Rc::clone(&stop);
    let _stdin_event = mainloop.new_io_event(
        libc::STDIN_FILENO,
        IoFlags::INPUT | IoFlags::HANGUP | IoFlags::ERROR,
        Box::new(move |_, fd, _| {
            let mut buf = [0u8; 64];
            // SAFETY: reading into a stack buffer of the given length from our own stdin.
            let _ = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
            // Any input, EOF or error means "stop": the parent has finished its window.
            stop_cb.set(true);
        }),
    );
    while !stop.get() {
        iterate(&mut mainloop)?;
        let state = stream.borrow().get_state();
        if matches!(state, StreamState::Failed | StreamState::Terminated) {
            return Err(ClientError::Stream(pa_err(context.errno())));
        }
    }

    // The parent has taken its closing snapshot: these queries are outside the window.
    let latency_us = query_latency(&mut mainloop, &stream)?;
    let buffer = granted(&stream);
    let others = list_activity(&mut mainloop, &context)?;
    let done = DoneInfo {
        bytes: counters.bytes.get(),
        callbacks: counters.callbacks.get(),
        overflows: counters.overflows.get(),
        underflows: counters.underflows.get(),
        buffer,
        latency_us,
        others,
    };
    let _ = stream.borrow_mut().disconnect();
    context.disconnect();
    write_line(out, &ChildMessage::Done(done))?;
    Ok(())
}

/// A context connected to `server` (None: libpulse's default), on its own standard mainloop.
fn connect(server: Option<&str>, app_name: &str) -> Result<(Mainloop, Context), ClientError> {
    let mut mainloop =
        Mainloop::new().ok_or_else(|| ClientError::Pulse("cannot create mainloop".into()))?;
    let mut context = Context::new(&mainloop, app_name)
        .ok_or_else(|| ClientError::Pulse("cannot create context".into()))?;
    context
        .connect(server, ContextFlags::NOAUTOSPAWN, None)
        .map_err(|e| ClientError::Connect(pa_err(e)))?;
    loop {
        iterate(&mut mainloop)?;
        match context.get_state() {
            ContextState::Ready => return Ok((mainloop, context)),
            ContextState::Failed | ContextState::Terminated => {
                return Err(ClientError::Connect(pa_err(context.errno())));
            }
            _ => {}
        }
    }
}

/// Server name and version (pipewire-pulse says "PulseAudio (on PipeWire x.y.z)").
fn server_info(
    mainloop: &mut Mainloop,
    context: &Context,
) -> Result<(String, String), ClientError> {
    let slot: Rc<RefCell<Option<(String, String)>>> = Rc::new(RefCell::new(None));
    let s = Rc::clone(&slot);
    let op = context.introspect().get_server_info(move |info| {
        let name = info.server_name.as_deref().unwrap_or("").to_string();
        let version = info.server_version.as_deref().unwrap_or("").to_string();
        *s.borrow_mut() = Some((name, version));
    });
    while slot.borrow().is_none() {
        iterate(mainloop)?;
        if op.get_state() == pulse::operation::State::Cancelled {
            return Err(ClientError::Pulse("server info query cancelled".into()));
        }
    }
    let v = slot.borrow_mut().take().unwrap_or_default();
    Ok(v)
}

/// One stream as listed: (kind, name, owning client index, owning module index).
type StreamRow = (&'static str, String, Option<u32>, Option<u32>);

/// Lists the other clients and streams at the server: everything but this connection's own
/// client and streams. Four list queries, one round trip each.
fn list_activity(
    mainloop: &mut Mainloop,
    context: &Context,
) -> Result<ServerActivity, ClientError> {
    let own = context.get_index();
    let introspect = context.introspect();
    let lists = Rc::new(Lists {
        pending: Cell::new(4),
        ..Lists::default()
    });
    let l = Rc::clone(&lists);
    let _o1 = introspect
        .get_client_info_list(move |r| l.take(r, &l.clients, |i| (i.index, name_of(&i.name))));
    let l = Rc::clone(&lists);
    let _o2 = introspect
        .get_module_info_list(move |r| l.take(r, &l.modules, |i| (i.index, name_of(&i.name))));
    let l = Rc::clone(&lists);
    let _o3 = introspect.get_sink_input_info_list(move |r| {
        l.take(r, &l.streams, |i| {
            ("sink input", name_of(&i.name), i.client, i.owner_module)
        })
    });
    let l = Rc::clone(&lists);
    let _o4 = introspect.get_source_output_info_list(move |r| {
        l.take(r, &l.streams, |i| {
            ("source output", name_of(&i.name), i.client, i.owner_module)
        })
    });
    while lists.pending.get() > 0 {
        iterate(mainloop)?;
    }
    if lists.failed.get() {
        // pipewire-pulse answers all four; an old or restricted server may not. Not fatal: the
        // report then simply lists nothing.
        tracing::debug!("a server list query failed; other clients/streams may be incomplete");
    }
    let clients = lists.clients.borrow();
    let modules = lists.modules.borrow();
    let streams = lists.streams.borrow();
    Ok(describe_activity(own, &clients, &modules, &streams))
}

/// What [`list_activity`]'s four queries collect, and how many of them are still running.
#[derive(Default)]
struct Lists {
    pending: Cell<u32>,
    failed: Cell<bool>,
    clients: RefCell<Vec<(u32, String)>>,
    modules: RefCell<Vec<(u32, String)>>,
    streams: RefCell<Vec<StreamRow>>,
}

impl Lists {
    /// One step of a list callback: an item becomes a row of `rows`; the end of the list (or an
    /// error) counts its query as finished.
    fn take<T, R>(&self, r: ListResult<T>, rows: &RefCell<Vec<R>>, row: impl FnOnce(T) -> R) {
        match r {
            ListResult::Item(i) => rows.borrow_mut().push(row(i)),
            ListResult::End => self.pending.set(self.pending.get().saturating_sub(1)),
            ListResult::Error => {
                self.pending.set(self.pending.get().saturating_sub(1));
                self.failed.set(true);
            }
        }
    }
}

/// A listed client's, module's or stream's name ("?" when it has none).
fn name_of(name: &Option<Cow<'_, str>>) -> String {
    name.as_deref().unwrap_or("?").to_string()
}

/// Pure part of [`list_activity`]: names the other clients and streams (leaving out `own`).
fn describe_activity(
    own: Option<u32>,
    clients: &[(u32, String)],
    modules: &[(u32, String)],
    streams: &[StreamRow],
) -> ServerActivity {
    let client_name = |idx: u32| {
        clients
            .iter()
            .find(|(i, _)| *i == idx)
            .map_or_else(|| format!("#{idx}"), |(_, n)| n.clone())
    };
    let module_name = |idx: u32| {
        modules
            .iter()
            .find(|(i, _)| *i == idx)
            .map_or_else(|| format!("#{idx}"), |(_, n)| n.clone())
    };
    let mut a = ServerActivity::default();
    // Several clients may share a name (pipewire-pulse lists three "pipewire"): listed once.
    let others = clients.iter().filter(|(i, _)| Some(*i) != own);
    a.merge(&ServerActivity {
        clients: others.map(|(_, n)| n.clone()).collect(),
        ..ServerActivity::default()
    });
    for (kind, name, client, module) in streams {
        match (client, module) {
            (Some(c), _) if Some(*c) == own => {}
            (Some(c), _) => a.client_streams.push(format!(
                "{kind} \"{name}\" of client \"{}\"",
                client_name(*c)
            )),
            (None, Some(m)) => a
                .module_streams
                .push(format!("{kind} \"{name}\" of {}", module_name(*m))),
            (None, None) => a.client_streams.push(format!("{kind} \"{name}\"")),
        }
    }
    a
}

/// A one-shot look at the server (the bench's parent does this before anything else): name,
/// version, protocol, and who else is there. Fails when the server cannot be reached.
pub fn probe_server(server: Option<&str>) -> Result<ServerProbe, ClientError> {
    let (mut mainloop, mut context) = connect(server, "micoff-bench probe")?;
    let (server_name, server_version) = server_info(&mut mainloop, &context)?;
    let protocol_version = context.get_server_protocol_version();
    let activity = list_activity(&mut mainloop, &context)?;
    context.disconnect();
    Ok(ServerProbe {
        server_name,
        server_version,
        protocol_version,
        activity,
    })
}

/// "No such entity" (e.g. a `--source` that does not exist). `pa_context_errno` gives the code
/// positive, the binding's own `PAErr`s are negative: compare magnitudes.
fn is_no_entity(e: pulse::error::PAErr) -> bool {
    e.0.abs()
        == pulse::error::PAErr::from(pulse::error::Code::NoEntity)
            .0
            .abs()
}

/// libpulse's error text (`PAErr::to_string` is `Option`).
fn pa_err(e: pulse::error::PAErr) -> String {
    e.to_string().unwrap_or_else(|| format!("error {}", e.0))
}

fn write_line(out: &mut dyn Write, msg: &ChildMessage) -> Result<(), ClientError> {
    let line = serde_json::to_string(msg).map_err(|e| ClientError::Pulse(e.to_string()))?;
    writeln!(out, "{line}")?;
    out.flush()?;
    Ok(())
}

fn iterate(mainloop: &mut Mainloop) -> Result<(), ClientError> {
    match mainloop.iterate(true) {
        IterateResult::Success(_) => Ok(()),
        IterateResult::Quit(_) => Err(ClientError::Pulse("mainloop quit".into())),
        IterateResult::Err(e) => Err(ClientError::Pulse(pa_err(e))),
    }
}

fn granted(stream: &Rc<RefCell<Stream>>) -> GrantedBuffer {
    let mut s = stream.borrow_mut();
    match s.get_buffer_attr() {
        Some(a) => GrantedBuffer {
            maxlength_bytes: a.maxlength,
            tlength_bytes: a.tlength,
            prebuf_bytes: a.prebuf,
            minreq_bytes: a.minreq,
            fragsize_bytes: a.fragsize,
        },
        None => GrantedBuffer {
            maxlength_bytes: u32::MAX,
            tlength_bytes: u32::MAX,
            prebuf_bytes: u32::MAX,
            minreq_bytes: u32::MAX,
            fragsize_bytes: u32::MAX,
        },
    }
}

/// Ask the server for fresh timing info (one round trip), then read the stream latency.
/// Done only at start and stop, so it adds no control traffic inside the measured window.
fn query_latency(
    mainloop: &mut Mainloop,
    stream: &Rc<RefCell<Stream>>,
) -> Result<Option<u64>, ClientError> {
    let finished = Rc::new(Cell::new(false));
    let f = Rc::clone(&finished);
    let op = stream
        .borrow_mut()
        .update_timing_info(Some(Box::new(move |_ok| f.set(true))));
    while !finished.get() {
        iterate(mainloop)?;
        if op.get_state() == pulse::operation::State::Cancelled {
            return Ok(None);
        }
    }
    let latency = stream.borrow().get_latency();
    Ok(match latency {
        Ok(pulse::stream::Latency::Positive(us)) => Some(us.0),
        Ok(pulse::stream::Latency::Negative(_)) => Some(0),
        _ => None,
    })
}

fn install_record_callback(stream: &Rc<RefCell<Stream>>, counters: &Rc<Counters>) {
    // The callback runs inside `iterate`, while no other borrow of the stream is held.
    let weak = Rc::downgrade(stream);
    let c = Rc::clone(counters);
    stream
        .borrow_mut()
        .set_read_callback(Some(Box::new(move |_readable| {
            let Some(stream) = weak.upgrade() else {
                return;
            };
            c.callbacks.set(c.callbacks.get() + 1);
            let Ok(mut s) = stream.try_borrow_mut() else {
                return;
            };
            // Drain everything that is readable; this is what a capture client does per wakeup.
            loop {
                match s.peek() {
                    Ok(PeekResult::Data(data)) => {
                        let n = data.len() as u64;
                        c.bytes.set(c.bytes.get() + n);
                        if s.discard().is_err() {
                            break;
                        }
                    }
                    Ok(PeekResult::Hole(n)) => {
                        c.bytes.set(c.bytes.get() + n as u64);
                        if s.discard().is_err() {
                            break;
                        }
                    }
                    Ok(PeekResult::Empty) | Err(_) => break,
                }
            }
        })));
}

fn install_playback_callback(stream: &Rc<RefCell<Stream>>, counters: &Rc<Counters>) {
    let weak = Rc::downgrade(stream);
    let c = Rc::clone(counters);
    let phase = Cell::new(0.0f64);
    let mut buf: Vec<u8> = Vec::new();
    stream
        .borrow_mut()
        .set_write_callback(Some(Box::new(move |nbytes| {
            let Some(stream) = weak.upgrade() else {
                return;
            };
            c.callbacks.set(c.callbacks.get() + 1);
            let Ok(mut s) = stream.try_borrow_mut() else {
                return;
            };
            let frames = nbytes / FRAME_BYTES;
            if frames == 0 {
                return;
            }
            fill_tone(&mut buf, frames, &phase);
            if s.write_copy(&buf, 0, pulse::stream::SeekMode::Relative)
                .is_ok()
            {
                c.bytes.set(c.bytes.get() + buf.len() as u64);
            }
        })));
}

/// A quiet 440 Hz sine, s16 stereo, continuing from `phase`.
fn fill_tone(buf: &mut Vec<u8>, frames: usize, phase: &Cell<f64>) {
    buf.clear();
    buf.reserve(frames * FRAME_BYTES);
    let step = 2.0 * PI * TONE_HZ / f64::from(SAMPLE_RATE);
    let mut p = phase.get();
    for _ in 0..frames {
        // 0.1 of full scale: a clear level without clipping anything downstream.
        let v = (p.sin() * 0.1 * f64::from(i16::MAX)) as i16;
        let b = v.to_ne_bytes();
        buf.extend_from_slice(&b);
        buf.extend_from_slice(&b);
        p += step;
        if p > 2.0 * PI {
            p -= 2.0 * PI;
        }
    }
    phase.set(p);
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn ms_bytes_round_trip() {
        assert_eq!(ms_to_bytes(10, 44_100, 2), 1764);
        assert_eq!(bytes_to_us(1764, 44_100, 2), Some(10_000));
        assert_eq!(bytes_to_us(u32::MAX, 44_100, 2), None);
        assert_eq!(bytes_to_us(100, 0, 2), None);
    }

    #[test]
    fn granted_picks_fragsize_or_tlength() {
        let b = GrantedBuffer {
            maxlength_bytes: u32::MAX,
            tlength_bytes: 3528,
            prebuf_bytes: 0,
            minreq_bytes: 0,
            fragsize_bytes: 1764,
        };
        assert_eq!(b.granted_us(Direction::Record, 44_100, 2), Some(10_000));
        assert_eq!(b.granted_us(Direction::Playback, 44_100, 2), Some(20_000));
    }

    #[test]
    fn tone_is_continuous_and_sized() {
        let phase = Cell::new(0.0);
        let mut buf = Vec::new();
        fill_tone(&mut buf, 441, &phase);
        assert_eq!(buf.len(), 441 * FRAME_BYTES);
        // 441 frames of 440 Hz at 44.1 kHz = 4.4 periods; phase stays within one period.
        assert!(phase.get() >= 0.0 && phase.get() <= 2.0 * PI);
    }

    #[test]
    fn steady_flow_needs_two_good_intervals_in_a_row() {
        use std::time::{Duration, Instant};
        let t0 = Instant::now();
        let ms = |n| t0 + Duration::from_millis(n);
        // 10 ms periods: intervals of 200 ms, 20 expected, 10 needed.
        let mut f = SteadyFlow::new(10);
        assert!(!f.observe(ms(0), 1));
        assert!(!f.observe(ms(200), 26), "a burst: one good interval");
        assert!(!f.observe(ms(400), 27), "then the stall");
        assert!(!f.observe(ms(1800), 28));
        assert!(!f.observe(ms(2000), 48));
        assert!(f.observe(ms(2200), 67), "two good intervals in a row");
        // 100 ms periods: intervals of 300 ms, 3 expected, 2 needed.
        let mut f = SteadyFlow::new(100);
        assert!(!f.observe(ms(0), 5));
        assert!(!f.observe(ms(300), 7));
        assert!(f.observe(ms(600), 10));
    }

    #[test]
    fn activity_names_other_clients_and_streams_but_not_our_own() {
        let clients = vec![
            (0, "micoff-bench srbchannel-on".to_string()),
            (3, "Chromium".to_string()),
        ];
        let modules = vec![(2, "module-remap-source".to_string())];
        let streams: Vec<StreamRow> = vec![
            ("source output", "rec".into(), Some(0), None),
            ("source output", "WebRTC".into(), Some(3), None),
            ("source output", "Remapped Stream".into(), None, Some(2)),
            ("sink input", "odd".into(), Some(9), None),
        ];
        let a = describe_activity(Some(0), &clients, &modules, &streams);
        assert_eq!(a.clients, vec!["Chromium".to_string()]);
        assert_eq!(
            a.client_streams,
            vec![
                r#"source output "WebRTC" of client "Chromium""#.to_string(),
                r##"sink input "odd" of client "#9""##.to_string(),
            ]
        );
        assert_eq!(
            a.module_streams,
            vec![r#"source output "Remapped Stream" of module-remap-source"#.to_string()]
        );
        let mut all = a.clone();
        all.merge(&a);
        assert_eq!(all, a, "merging the same sighting adds nothing");
    }

    #[test]
    fn no_entity_either_sign() {
        use pulse::error::PAErr;
        assert!(is_no_entity(PAErr(5)));
        assert!(is_no_entity(PAErr(-5)));
        assert!(!is_no_entity(PAErr(6)));
    }

    #[test]
    fn messages_round_trip() {
        let m = ChildMessage::Error {
            message: "x".into(),
            not_found: true,
        };
        let s = serde_json::to_string(&m).unwrap();
        assert_eq!(s, r#"{"type":"error","message":"x","not_found":true}"#);
        assert_eq!(serde_json::from_str::<ChildMessage>(&s).unwrap(), m);
        // An older child's line without the field still reads.
        let old: ChildMessage = serde_json::from_str(r#"{"type":"error","message":"x"}"#).unwrap();
        assert!(matches!(
            old,
            ChildMessage::Error {
                not_found: false,
                ..
            }
        ));
    }
}
