//! The native messaging server: reads request frames, handles each request on its own task, and
//! writes replies and events through one writer task fed by a channel (so a 2 s `cpu_sample` never
//! holds up a `version`). Generic over the pipe so tests drive it in memory.

mod subscriptions;

use std::any::Any;
use std::collections::HashMap;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{mpsc, Mutex, Semaphore};
use tokio::task::{JoinError, JoinHandle, JoinSet};

use crate::deps::{latency_view, CpuTick, Deps, HostError};
use crate::fit_to_frame::{self, fallback_error};
use crate::framing::{FrameError, FrameReader, FrameWriter, TransportError};
use crate::history::{anchored_clock, HistoryWatch, Update};
use subscriptions::{subscribe, unsubscribe};

use crate::protocol::{
    decode_request, AudioStreams, ErrorCode, HistorySnapshot, HostEvent, HostToExtension,
    PhaseResult, Request, RequestBody, RequestId, SubscriptionResult, Topic, Version,
    CPU_INTERVAL_MS_DEFAULT, PROTOCOL_VERSION,
};

/// A `cpu` event carries at most this much: the busiest threads (what the popup shows) and every
/// process and role total; the rest are counted in `threads_omitted`. A browser with thousands of
/// idle threads would otherwise send most of 1 MiB every second for the extension to parse.
pub const MAX_CPU_EVENT_BYTES: usize = 64 * 1024;

/// Request handlers that panicked in this process. The fuzz oracle reads it: unlike a reply's
/// message, which may echo the request, no input can forge it.
static HANDLER_PANICS: AtomicU64 = AtomicU64::new(0);

/// How many request handlers have panicked in this process so far.
pub fn handler_panics() -> u64 {
    HANDLER_PANICS.load(Ordering::SeqCst)
}

/// Why the server stopped other than a clean end of input.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error("reading requests: {0}")]
    Read(TransportError),
    #[error("writing replies: {0}")]
    Write(TransportError),
    #[error("the writer task failed: {0}")]
    Writer(String),
}

/// What a request still running when the input ends is answered (nobody may read it: the
/// browser closed the port), so that every request read gets exactly one reply.
const CANCELLED: &str = "cancelled: the input ended before this request finished";

/// Serves one native messaging connection until end of input (`Ok`), a framing error or a broken
/// output pipe (`Err`). However it ends, it ends promptly: requests still running get
/// `limits.end_grace` to answer (then they are cancelled, each answered `8 busy`), what is left to
/// write gets as long again, and no frame waits longer than `limits.write_deadline` for a reader.
pub async fn run<R, W>(reader: R, writer: W, deps: Deps) -> Result<(), ServerError>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let codec = deps.limits.codec;
    let end_grace = deps.limits.end_grace;
    let (tx, rx) = mpsc::channel::<Vec<u8>>(64);
    let writer_task = tokio::spawn(write_loop(
        FrameWriter::new(writer, codec),
        rx,
        deps.limits.write_deadline,
    ));
    let ctx = Arc::new(Ctx {
        history: HistoryWatch::start(Arc::clone(&deps.sampler), anchored_clock()),
        in_flight: Arc::new(Semaphore::new(deps.limits.max_in_flight)),
        max_bytes: codec.max_outgoing_bytes,
        deps,
        tx,
        subscriptions: Mutex::new(HashMap::new()),
        next_subscription: AtomicU64::new(1),
    });
    let mut frames = FrameReader::new(reader, codec);
    let mut tasks = RequestTasks::default();

    let outcome = loop {
        tokio::select! {
            frame = frames.next_frame() => match frame {
                Ok(Some(body)) => dispatch(&ctx, &mut tasks, &body).await,
                Ok(None) => {
                    tracing::debug!("end of input");
                    break Ok(());
                }
                Err(e) => {
                    tracing::error!("stopping: {e}");
                    if let TransportError::Frame(FrameError::BadLength { .. }) = &e {
                        // Refused from its header, before any of its body is read: say why.
                        ctx.send_error(None, ErrorCode::TooLarge, e.to_string()).await;
                    }
                    break Err(ServerError::Read(e));
                }
            },
            Some(joined) = tasks.set.join_next_with_id(), if !tasks.set.is_empty() => {
                tasks.joined(&ctx, joined).await;
            }
            () = ctx.tx.closed() => break Ok(()), // the writer stopped; its error is reported below
        }
    };

    // Subscriptions end with the connection; requests already in flight still get their reply if
    // it is quick (a `version`): a 60 s `cpu_sample` does not hold up the exit, whether the input
    // ended cleanly or was corrupt, and nobody may be reading any more.
    let subscriptions: Vec<JoinHandle<()>> = ctx
        .subscriptions
        .lock()
        .await
        .drain()
        .map(|(_, h)| h)
        .collect();
    for handle in subscriptions {
        handle.abort();
        let _ = handle.await;
    }
    let _ = tokio::time::timeout(end_grace, async {
        while let Some(joined) = tasks.set.join_next_with_id().await {
            tasks.joined(&ctx, joined).await;
        }
    })
    .await;
    tasks.set.abort_all();
    while let Some(joined) = tasks.set.join_next_with_id().await {
        tasks.joined(&ctx, joined).await;
    }
    let _ = tokio::time::timeout(end_grace, async {
        for id in tasks.cancelled.drain(..) {
            ctx.send_error(Some(id), ErrorCode::Busy, CANCELLED).await;
        }
    })
    .await;
    drop(ctx);
    // What is left to write gets the grace too: output nobody reads does not keep the host.
    let mut writer_task = writer_task;
    let written = match tokio::time::timeout(end_grace, &mut writer_task).await {
        Ok(Ok(result)) => result.map_err(ServerError::Write),
        Ok(Err(e)) => Err(ServerError::Writer(e.to_string())),
        Err(_) => {
            writer_task.abort();
            Err(ServerError::Write(TransportError::Io(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                "the output was not read after the input ended",
            ))))
        }
    };
    outcome.and(written)
}

/// Answers a caller that is not micoff ([`crate::deps::Launch::check_caller`]): one id-less
/// `forbidden` error frame, then the pipe is closed. Nothing is read from the caller.
pub async fn refuse<W: AsyncWrite + Unpin>(
    writer: W,
    codec: crate::framing::FrameCodec,
    message: &str,
) -> Result<(), ServerError> {
    let mut writer = FrameWriter::new(writer, codec);
    let body = fallback_error(None, ErrorCode::Forbidden, message);
    writer
        .write_frame(&body)
        .await
        .map_err(ServerError::Write)?;
    writer.shutdown().await.map_err(ServerError::Write)
}

/// Writes the frames it is sent, each within `deadline` (a reader that stopped reading fails the
/// write instead of holding it forever; the run loop then ends the connection).
async fn write_loop<W: AsyncWrite + Unpin>(
    mut writer: FrameWriter<W>,
    mut rx: mpsc::Receiver<Vec<u8>>,
    deadline: Duration,
) -> Result<(), TransportError> {
    let timed_out = || {
        TransportError::Io(std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            format!("nobody read the output for {} s", deadline.as_secs_f64()),
        ))
    };
    while let Some(body) = rx.recv().await {
        let written = tokio::time::timeout(deadline, writer.write_frame(&body))
            .await
            .unwrap_or_else(|_| Err(timed_out()));
        if let Err(e) = written {
            tracing::error!("cannot write a reply: {e}");
            return Err(e);
        }
    }
    tokio::time::timeout(deadline, writer.shutdown())
        .await
        .unwrap_or_else(|_| Err(timed_out()))
}

/// The request tasks in flight, with the request each one answers (so a task that panics still
/// gets its error reply).
#[derive(Default)]
struct RequestTasks {
    set: JoinSet<()>,
    ids: HashMap<tokio::task::Id, RequestId>,
    /// Requests cancelled when the input ended, still to be answered.
    cancelled: Vec<RequestId>,
}

impl RequestTasks {
    async fn joined(&mut self, ctx: &Ctx, joined: Result<(tokio::task::Id, ()), JoinError>) {
        let e = match joined {
            Ok((task, ())) => {
                self.ids.remove(&task);
                return;
            }
            Err(e) => e,
        };
        let id = self.ids.remove(&e.id());
        if !e.is_panic() {
            // Cancelled: the input ended with it still running. Its one reply says so (sent by
            // the run loop, within the grace: a writer stuck on a full pipe holds nothing up).
            self.cancelled.extend(id);
            return;
        }
        HANDLER_PANICS.fetch_add(1, Ordering::SeqCst);
        let what = panic_message(e.into_panic());
        tracing::error!(id = ?id, "request handler panicked: {what}");
        ctx.send_error(
            id,
            ErrorCode::Internal,
            format!("the request handler failed: {what}"),
        )
        .await;
    }
}

fn panic_message(payload: Box<dyn Any + Send>) -> String {
    match payload.downcast::<String>() {
        Ok(s) => *s,
        Err(payload) => payload
            .downcast_ref::<&str>()
            .map_or_else(|| "panic".to_owned(), |s| (*s).to_owned()),
    }
}

struct Ctx {
    deps: Deps,
    /// The audio path's CPU history of this connection (the `phase` and `history` requests, the
    /// `history` topic).
    history: HistoryWatch,
    tx: mpsc::Sender<Vec<u8>>,
    in_flight: Arc<Semaphore>,
    max_bytes: usize,
    subscriptions: Mutex<HashMap<u64, JoinHandle<()>>>,
    next_subscription: AtomicU64,
}

impl Ctx {
    async fn send(&self, body: Vec<u8>) {
        // A closed channel means the writer stopped; the run loop notices and ends.
        let _ = self.tx.send(body).await;
    }

    async fn send_error(&self, id: Option<RequestId>, code: ErrorCode, message: impl Into<String>) {
        let body =
            fit_to_frame::message(&HostToExtension::error(id, code, message), self.max_bytes);
        self.send(body).await;
    }
}

async fn dispatch(ctx: &Arc<Ctx>, tasks: &mut RequestTasks, body: &[u8]) {
    let request = match decode_request(body) {
        Ok(request) => request,
        Err(e) => {
            tracing::debug!(id = ?e.id, code = e.code.code(), "rejected request: {}", e.message);
            ctx.send_error(e.id, e.code, e.message).await;
            return;
        }
    };
    tracing::debug!(id = request.id, kind = request.body.type_name(), "request");
    match request.body {
        // Subscription bookkeeping stays on the read loop so a `subscribe` result always precedes
        // the subscription's first event and `unsubscribe` is ordered after earlier requests.
        RequestBody::Subscribe(topic) => subscribe(ctx, request.id, topic).await,
        RequestBody::Unsubscribe { subscription } => {
            unsubscribe(ctx, request.id, subscription).await
        }
        // Phase changes apply in the order they were sent; both answer at once.
        RequestBody::Phase { phase } => {
            let saved_cpu_s = ctx.history.set_phase(phase);
            let reply = PhaseResult { saved_cpu_s };
            ctx.send(fit_to_frame::result(request.id, &reply, ctx.max_bytes))
                .await;
        }
        RequestBody::History => {
            let snapshot = ctx.history.snapshot();
            ctx.send(fit_to_frame::result(request.id, &snapshot, ctx.max_bytes))
                .await;
        }
        body => {
            let Ok(permit) = ctx.in_flight.clone().try_acquire_owned() else {
                ctx.send_error(
                    Some(request.id),
                    ErrorCode::Busy,
                    format!(
                        "too many requests in flight (limit {})",
                        ctx.deps.limits.max_in_flight
                    ),
                )
                .await;
                return;
            };
            let ctx = Arc::clone(ctx);
            let request = Request {
                id: request.id,
                body,
            };
            let id = request.id;
            let task = tasks.set.spawn(async move {
                let reply = handle(&ctx, request).await;
                ctx.send(reply).await;
                drop(permit);
            });
            tasks.ids.insert(task.id(), id);
        }
    }
}

/// Handles one (non-subscription) request; returns the encoded reply.
async fn handle(ctx: &Ctx, request: Request) -> Vec<u8> {
    let id = request.id;
    let deps = &ctx.deps;
    let max_bytes = ctx.max_bytes;
    let outcome: Result<Vec<u8>, HostError> = match request.body {
        RequestBody::Version => Ok(fit_to_frame::result(id, &version(deps), max_bytes)),
        RequestBody::Processes { browser_pid } => deps
            .sampler
            .processes(browser_pid)
            .await
            .map(|p| fit_to_frame::processes_result(id, p, max_bytes)),
        RequestBody::CpuSample { window_ms, pids } => deps
            .sampler
            .cpu_sample(pids, Duration::from_millis(window_ms))
            .await
            .map(|report| fit_to_frame::cpu_result(id, report, max_bytes)),
        RequestBody::AudioServerInfo => deps
            .audio
            .server_info()
            .await
            .map(|info| fit_to_frame::result(id, &info, max_bytes)),
        RequestBody::AudioStreams => deps
            .audio
            .streams()
            .await
            .map(|streams| fit_to_frame::result(id, &AudioStreams { streams }, max_bytes)),
        RequestBody::Doctor => match &deps.doctor {
            Some(doctor) => doctor
                .report()
                .await
                .map(|report| fit_to_frame::result(id, &report, max_bytes)),
            None => Err(HostError::NotImplemented(
                "this host has no doctor; run `micoff-host doctor`".into(),
            )),
        },
        RequestBody::LatencyStatus => match &deps.latency_paths {
            Ok(paths) => {
                let view = latency_view(deps.audio.as_ref()).await;
                let status = crate::latency::status(paths, &view);
                Ok(fit_to_frame::result(id, &status, max_bytes))
            }
            Err(e) => Err(HostError::Internal(e.clone())),
        },
        RequestBody::LatencySet {
            capture_ms,
            dry_run,
            browsers,
        } => match &deps.latency_paths {
            Ok(paths) => {
                let req = crate::latency::SetRequest {
                    capture_ms,
                    browsers: browsers.unwrap_or_default(),
                    mechanism: None,
                    dry_run,
                };
                let view = latency_view(deps.audio.as_ref()).await;
                crate::latency::set_from_view(paths, &req, &view)
                    .map(|r| fit_to_frame::result(id, &r, max_bytes))
                    .map_err(HostError::from)
            }
            Err(e) => Err(HostError::Internal(e.clone())),
        },
        RequestBody::Power => {
            let roots = deps.power_roots.clone();
            let reading = crate::power::measure(roots, crate::power::POWER_WINDOW).await;
            Ok(fit_to_frame::result(id, &reading, max_bytes))
        }
        RequestBody::Subscribe(_)
        | RequestBody::Unsubscribe { .. }
        | RequestBody::Phase { .. }
        | RequestBody::History => Err(HostError::Internal(
            "subscription, phase and history requests are handled on the read loop".into(),
        )),
    };
    outcome.unwrap_or_else(|e| {
        tracing::debug!(id, "request failed: {e}");
        fit_to_frame::message(
            &HostToExtension::error(Some(id), e.code(), e.to_string()),
            max_bytes,
        )
    })
}

fn version(deps: &Deps) -> Version {
    Version {
        host_version: crate::VERSION.to_owned(),
        protocol_version: PROTOCOL_VERSION,
        pid: std::process::id(),
        origin: deps.launch.origin.clone(),
        extension_id: deps.launch.extension_id.clone(),
        browser_family: deps.launch.browser_family,
        chrome_extension_id: crate::CHROME_EXTENSION_ID.to_owned(),
        firefox_extension_id: crate::FIREFOX_EXTENSION_ID.to_owned(),
    }
}
