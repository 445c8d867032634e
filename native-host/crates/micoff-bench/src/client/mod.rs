//! The measured client: a minimal libpulse client that records from a source or plays a tone at the
//! requested latency, run as a CHILD of the bench (`--child`) so its threads are measured apart and
//! `PULSE_CLIENTCONFIG` can turn shared memory off for it alone. JSON lines on stdout
//! ([`ChildMessage`]): `ready` once data flows, `done` after stdin closes (or `stop`); the stdin
//! watch is an io event on the same mainloop. Module map: `stream_format`, `messages`,
//! `steady_flow`, `mainloop`, `server_look` (the parent's probe), `stream_callbacks`; here, the
//! run.

use std::cell::{Cell, RefCell};
use std::io::Write;
use std::rc::Rc;

use libpulse_binding as pulse;
use pulse::def::BufferAttr;
use pulse::mainloop::api::Mainloop as _;
use pulse::mainloop::events::io::FlagSet as IoFlags;
use pulse::mainloop::standard::Mainloop;
use pulse::sample::{Format, Spec};
use pulse::stream::{FlagSet as StreamFlags, State as StreamState, Stream};

mod mainloop;
mod messages;
mod server_look;
mod steady_flow;
mod stream_callbacks;
mod stream_format;

pub use mainloop::ClientError;
pub use messages::{ChildMessage, DoneInfo, GrantedBuffer, ReadyInfo, ServerActivity, ServerProbe};
pub use server_look::probe_server;
pub use steady_flow::SteadyFlow;
pub use stream_format::{bytes_to_us, ms_to_bytes, CHANNELS, SAMPLE_RATE};

use crate::args::Direction;
use mainloop::{connect, is_no_entity, iterate, pa_err};
use server_look::list_activity;
use stream_callbacks::{install_playback_callback, install_record_callback, Counters};

/// What the child was asked to do.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    pub direction: Direction,
    pub latency_ms: u32,
    pub device: Option<String>,
    pub server: Option<String>,
    pub app_name: String,
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

fn write_line(out: &mut dyn Write, msg: &ChildMessage) -> Result<(), ClientError> {
    let line = serde_json::to_string(msg).map_err(|e| ClientError::Pulse(e.to_string()))?;
    writeln!(out, "{line}")?;
    out.flush()?;
    Ok(())
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
