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

use std::cell::{Cell, RefCell};
use std::f64::consts::PI;
use std::io::Write;
use std::rc::Rc;

use libpulse_binding as pulse;
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
    Error { message: String },
}

/// Sent once the stream is ready and the first data moved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReadyInfo {
    pub pid: u32,
    pub server_name: String,
    pub server_version: String,
    pub server_protocol_version: Option<u32>,
    /// Device the stream ended up on.
    pub device: Option<String>,
    pub sample_rate: u32,
    pub channels: u8,
    pub buffer: GrantedBuffer,
    /// Stream latency (`pa_stream_get_latency`) right after start.
    pub latency_us: Option<u64>,
    /// Read/write callbacks so far (the `done` count minus this one covers the window).
    pub callbacks: u64,
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
    let mut mainloop =
        Mainloop::new().ok_or_else(|| ClientError::Pulse("cannot create mainloop".into()))?;
    let mut context = Context::new(&mainloop, &cfg.app_name)
        .ok_or_else(|| ClientError::Pulse("cannot create context".into()))?;
    context
        .connect(cfg.server.as_deref(), ContextFlags::NOAUTOSPAWN, None)
        .map_err(|e| ClientError::Connect(pa_err(e)))?;

    // Wait for the context.
    loop {
        iterate(&mut mainloop)?;
        match context.get_state() {
            ContextState::Ready => break,
            ContextState::Failed | ContextState::Terminated => {
                return Err(ClientError::Connect(pa_err(context.errno())));
            }
            _ => {}
        }
    }

    // Server name and version (pipewire-pulse says "PulseAudio (on PipeWire x.y.z)").
    let server: Rc<RefCell<Option<(String, String)>>> = Rc::new(RefCell::new(None));
    {
        let slot = Rc::clone(&server);
        let op = context.introspect().get_server_info(move |info| {
            let name = info.server_name.as_deref().unwrap_or("").to_string();
            let version = info.server_version.as_deref().unwrap_or("").to_string();
            *slot.borrow_mut() = Some((name, version));
        });
        while server.borrow().is_none() {
            iterate(&mut mainloop)?;
            if op.get_state() == pulse::operation::State::Cancelled {
                return Err(ClientError::Pulse("server info query cancelled".into()));
            }
        }
    }
    let (server_name, server_version) = server.borrow_mut().take().unwrap_or_default();

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

    // Wait for the stream to be ready and data to move (an idle null sink can take about 2 s to
    // deliver the first fragment, or to consume the first one). A playback stream's first write
    // request comes at once, before the sink has consumed anything: wait for the second.
    let min_callbacks = match cfg.direction {
        Direction::Record => 1,
        Direction::Playback => 2,
    };
    loop {
        iterate(&mut mainloop)?;
        let state = stream.borrow().get_state();
        match state {
            StreamState::Ready if counters.callbacks.get() >= min_callbacks => break,
            StreamState::Failed | StreamState::Terminated => {
                return Err(ClientError::Stream(pa_err(context.errno())));
            }
            _ => {}
        }
    }
    let latency_us = query_latency(&mut mainloop, &stream)?;
    let device = stream.borrow().get_device_name().map(|d| d.into_owned());
    let buffer = granted(&stream);
    let ready = ReadyInfo {
        pid: std::process::id(),
        server_name,
        server_version,
        server_protocol_version: context.get_server_protocol_version(),
        device,
        sample_rate: SAMPLE_RATE,
        channels: CHANNELS,
        buffer,
        latency_us,
        callbacks: counters.callbacks.get(),
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

    let latency_us = query_latency(&mut mainloop, &stream)?;
    let buffer = granted(&stream);
    let done = DoneInfo {
        bytes: counters.bytes.get(),
        callbacks: counters.callbacks.get(),
        overflows: counters.overflows.get(),
        underflows: counters.underflows.get(),
        buffer,
        latency_us,
    };
    let _ = stream.borrow_mut().disconnect();
    context.disconnect();
    write_line(out, &ChildMessage::Done(done))?;
    Ok(())
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
    fn messages_round_trip() {
        let m = ChildMessage::Error {
            message: "x".into(),
        };
        let s = serde_json::to_string(&m).unwrap();
        assert_eq!(s, r#"{"type":"error","message":"x"}"#);
        assert_eq!(serde_json::from_str::<ChildMessage>(&s).unwrap(), m);
    }
}
