//! The native messaging server: reads request frames, handles each request on its own task, and
//! writes replies and events through one writer task fed by a channel (so a 2 s `cpu_sample` never
//! holds up a `version`). Generic over the pipe so tests drive it in memory.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{mpsc, Mutex, Semaphore};
use tokio::task::{JoinHandle, JoinSet};

use crate::deps::{Deps, HostError};
use crate::framing::{FrameReader, FrameWriter, TransportError};
use crate::protocol::{
    decode_request, drop_lowest_threads, sort_report, thread_count, AudioStreams, CpuReport,
    ErrorCode, HostEvent, HostToExtension, Request, RequestBody, RequestId, SubscriptionResult,
    Topic, Version, CPU_INTERVAL_MS_DEFAULT, PROTOCOL_VERSION,
};

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

/// Serves one native messaging connection until end of input (`Ok`), a framing error or a broken
/// output pipe (`Err`).
pub async fn run<R, W>(reader: R, writer: W, deps: Deps) -> Result<(), ServerError>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let codec = deps.limits.codec;
    let (tx, rx) = mpsc::channel::<Vec<u8>>(64);
    let writer_task = tokio::spawn(write_loop(FrameWriter::new(writer, codec), rx));
    let ctx = Arc::new(Ctx {
        in_flight: Arc::new(Semaphore::new(deps.limits.max_in_flight)),
        max_bytes: codec.max_outgoing_bytes,
        deps,
        tx,
        subscriptions: Mutex::new(HashMap::new()),
        next_subscription: AtomicU64::new(1),
    });
    let mut frames = FrameReader::new(reader, codec);
    let mut tasks: JoinSet<()> = JoinSet::new();

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
                    break Err(ServerError::Read(e));
                }
            },
            Some(joined) = tasks.join_next(), if !tasks.is_empty() => {
                if let Err(e) = joined {
                    tracing::error!("request task failed: {e}");
                }
            }
            () = ctx.tx.closed() => break Ok(()), // the writer stopped; its error is reported below
        }
    };

    // Subscriptions end with the connection; requests already in flight still get their reply
    // (unless the input was corrupt).
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
    if outcome.is_err() {
        tasks.abort_all();
    }
    while tasks.join_next().await.is_some() {}
    drop(ctx);
    let written = match writer_task.await {
        Ok(result) => result.map_err(ServerError::Write),
        Err(e) => Err(ServerError::Writer(e.to_string())),
    };
    outcome.and(written)
}

async fn write_loop<W: AsyncWrite + Unpin>(
    mut writer: FrameWriter<W>,
    mut rx: mpsc::Receiver<Vec<u8>>,
) -> Result<(), TransportError> {
    while let Some(body) = rx.recv().await {
        if let Err(e) = writer.write_frame(&body).await {
            tracing::error!("cannot write a reply: {e}");
            return Err(e);
        }
    }
    writer.shutdown().await
}

struct Ctx {
    deps: Deps,
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
        let body = encode(&HostToExtension::error(id, code, message), self.max_bytes);
        self.send(body).await;
    }
}

async fn dispatch(ctx: &Arc<Ctx>, tasks: &mut JoinSet<()>, body: &[u8]) {
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
            tasks.spawn(async move {
                let reply = handle(&ctx, request).await;
                ctx.send(reply).await;
                drop(permit);
            });
        }
    }
}

/// Handles one (non-subscription) request; returns the encoded reply.
async fn handle(ctx: &Ctx, request: Request) -> Vec<u8> {
    let id = request.id;
    let deps = &ctx.deps;
    let outcome: Result<Vec<u8>, HostError> = match request.body {
        RequestBody::Version => Ok(encode_result(id, &version(deps), ctx.max_bytes)),
        RequestBody::Processes { browser_pid } => deps
            .sampler
            .processes(browser_pid)
            .await
            .map(|p| encode_result(id, &p, ctx.max_bytes)),
        RequestBody::CpuSample { window_ms, pids } => deps
            .sampler
            .cpu_sample(pids, Duration::from_millis(window_ms))
            .await
            .map(|report| {
                encode_cpu(report, ctx.max_bytes, |report| {
                    serde_json::to_value(report)
                        .map(|result| HostToExtension::Result { id, result })
                })
                .unwrap_or_else(|| too_large(Some(id), ctx.max_bytes))
            }),
        RequestBody::AudioServerInfo => deps
            .audio
            .server_info()
            .await
            .map(|info| encode_result(id, &info, ctx.max_bytes)),
        RequestBody::AudioStreams => deps
            .audio
            .streams()
            .await
            .map(|streams| encode_result(id, &AudioStreams { streams }, ctx.max_bytes)),
        RequestBody::Doctor => match &deps.doctor {
            Some(doctor) => doctor
                .report()
                .await
                .map(|report| encode_result(id, &report, ctx.max_bytes)),
            None => Err(HostError::NotImplemented(
                "this host has no doctor; run `micoff-host doctor`".into(),
            )),
        },
        RequestBody::Subscribe(_) | RequestBody::Unsubscribe { .. } => Err(HostError::Internal(
            "subscription requests are handled on the read loop".into(),
        )),
    };
    outcome.unwrap_or_else(|e| {
        tracing::debug!(id, "request failed: {e}");
        encode(
            &HostToExtension::error(Some(id), e.code(), e.to_string()),
            ctx.max_bytes,
        )
    })
}

fn version(deps: &Deps) -> Version {
    Version {
        host_version: env!("CARGO_PKG_VERSION").to_owned(),
        protocol_version: PROTOCOL_VERSION,
        pid: std::process::id(),
        origin: deps.launch.origin.clone(),
        extension_id: deps.launch.extension_id.clone(),
        browser_family: deps.launch.browser_family,
        chrome_extension_id: crate::CHROME_EXTENSION_ID.to_owned(),
        firefox_extension_id: crate::FIREFOX_EXTENSION_ID.to_owned(),
    }
}

async fn subscribe(ctx: &Arc<Ctx>, id: RequestId, topic: Topic) {
    let mut subscriptions = ctx.subscriptions.lock().await;
    subscriptions.retain(|_, handle| !handle.is_finished());
    if subscriptions.len() >= ctx.deps.limits.max_subscriptions {
        drop(subscriptions);
        ctx.send_error(
            Some(id),
            ErrorCode::Busy,
            format!(
                "too many subscriptions (limit {})",
                ctx.deps.limits.max_subscriptions
            ),
        )
        .await;
        return;
    }
    let audio_events = match &topic {
        Topic::Audio => match ctx.deps.audio.subscribe() {
            Ok(rx) => Some(rx),
            Err(e) => {
                drop(subscriptions);
                ctx.send_error(Some(id), e.code(), e.to_string()).await;
                return;
            }
        },
        Topic::Cpu { .. } => None,
    };
    let subscription = ctx.next_subscription.fetch_add(1, Ordering::Relaxed);
    // The result goes into the channel before the task that produces events exists.
    ctx.send(encode_result(
        id,
        &SubscriptionResult { subscription },
        ctx.max_bytes,
    ))
    .await;
    let task_ctx = Arc::clone(ctx);
    let handle = match (topic, audio_events) {
        (Topic::Audio, Some(rx)) => tokio::spawn(audio_loop(task_ctx, subscription, rx)),
        (Topic::Cpu { interval_ms, pids }, _) => {
            let interval = Duration::from_millis(interval_ms.unwrap_or(CPU_INTERVAL_MS_DEFAULT));
            tokio::spawn(cpu_loop(task_ctx, subscription, interval, pids))
        }
        (Topic::Audio, None) => return,
    };
    tracing::debug!(subscription, "subscribed");
    subscriptions.insert(subscription, handle);
}

async fn unsubscribe(ctx: &Arc<Ctx>, id: RequestId, subscription: u64) {
    let handle = ctx.subscriptions.lock().await.remove(&subscription);
    let Some(handle) = handle else {
        ctx.send_error(
            Some(id),
            ErrorCode::NotFound,
            format!("no subscription {subscription}"),
        )
        .await;
        return;
    };
    handle.abort();
    let _ = handle.await;
    // Every event of this subscription is queued by now, so the reply comes after the last one.
    ctx.send(encode_result(
        id,
        &SubscriptionResult { subscription },
        ctx.max_bytes,
    ))
    .await;
}

async fn cpu_loop(ctx: Arc<Ctx>, subscription: u64, interval: Duration, pids: Option<Vec<u32>>) {
    let mut reports = Arc::clone(&ctx.deps.sampler).cpu_reports(pids, interval);
    while let Some(report) = reports.recv().await {
        match report {
            Ok(report) => {
                let event = encode_cpu(report, ctx.max_bytes, |report| {
                    Ok(HostToExtension::Event {
                        subscription,
                        event: Box::new(HostEvent::Cpu {
                            report: report.clone(),
                        }),
                    })
                });
                match event {
                    Some(body) => ctx.send(body).await,
                    None => tracing::warn!(subscription, "cpu event too large even when trimmed"),
                }
            }
            // Keep the subscription (processes come and go).
            Err(e) => tracing::warn!(subscription, "cpu sample failed: {e}"),
        }
    }
    tracing::warn!(subscription, "the cpu report source ended");
}

async fn audio_loop(ctx: Arc<Ctx>, subscription: u64, mut rx: mpsc::Receiver<HostEvent>) {
    while let Some(event) = rx.recv().await {
        let body = encode(
            &HostToExtension::Event {
                subscription,
                event: Box::new(event),
            },
            ctx.max_bytes,
        );
        ctx.send(body).await;
    }
    tracing::warn!(subscription, "the audio event source ended");
}

// ------------------------------------------------------------------------------------------------
// Encoding with the 1 MiB limit

fn encode_result<T: Serialize>(id: RequestId, payload: &T, max_bytes: usize) -> Vec<u8> {
    match serde_json::to_value(payload) {
        Ok(result) => encode(&HostToExtension::Result { id, result }, max_bytes),
        Err(e) => encode(
            &HostToExtension::error(Some(id), ErrorCode::Internal, format!("cannot encode: {e}")),
            max_bytes,
        ),
    }
}

/// Serializes a message; one that would not fit becomes a `too_large` error (results) or is
/// replaced by an id-less `too_large` error (events).
pub fn encode(message: &HostToExtension, max_bytes: usize) -> Vec<u8> {
    match serde_json::to_vec(message) {
        Ok(body) if body.len() <= max_bytes => body,
        Ok(body) => {
            let id = match message {
                HostToExtension::Result { id, .. } => Some(*id),
                HostToExtension::Error { id, .. } => *id,
                HostToExtension::Event { .. } => None,
            };
            tracing::warn!(bytes = body.len(), "reply too large");
            too_large(id, max_bytes)
        }
        Err(e) => {
            tracing::error!("cannot encode a reply: {e}");
            fallback_error(None, ErrorCode::Internal, "cannot encode the reply")
        }
    }
}

fn too_large(id: Option<RequestId>, max_bytes: usize) -> Vec<u8> {
    fallback_error(
        id,
        ErrorCode::TooLarge,
        &format!("the reply would exceed {max_bytes} bytes"),
    )
}

fn fallback_error(id: Option<RequestId>, code: ErrorCode, message: &str) -> Vec<u8> {
    serde_json::to_vec(&HostToExtension::error(id, code, message)).unwrap_or_else(|_| {
        format!(
            r#"{{"id":null,"type":"error","error":{{"code":{},"message":"internal"}}}}"#,
            ErrorCode::Internal.code()
        )
        .into_bytes()
    })
}

/// Encodes a CPU report, dropping its lowest-CPU threads until it fits. `None` when even the
/// thread-less report does not fit.
pub fn encode_cpu(
    mut report: CpuReport,
    max_bytes: usize,
    wrap: impl Fn(&CpuReport) -> Result<HostToExtension, serde_json::Error>,
) -> Option<Vec<u8>> {
    sanitize(&mut report);
    sort_report(&mut report);
    loop {
        let body = wrap(&report).and_then(|m| serde_json::to_vec(&m)).ok()?;
        if body.len() <= max_bytes {
            return Some(body);
        }
        let threads = thread_count(&report);
        if threads == 0 {
            return None;
        }
        // Drop the excess share of the threads per round (threads dominate the size); converges
        // in a few rounds and never drops more than needed by much.
        let excess = (body.len() - max_bytes) as f64 / body.len() as f64;
        let n = ((threads as f64 * excess).ceil() as usize).clamp(1, threads);
        drop_lowest_threads(&mut report, n);
    }
}

/// serde_json writes NaN/inf as `null`, which the extension's guards reject; never send them.
fn sanitize(report: &mut CpuReport) {
    fn fix(v: &mut f64) {
        if !v.is_finite() {
            *v = 0.0;
        }
    }
    fn fix_opt(v: &mut Option<f64>) {
        if v.is_some_and(|x| !x.is_finite()) {
            *v = None;
        }
    }
    fix(&mut report.window_ms);
    fix(&mut report.total_cpu_pct);
    for r in &mut report.roles {
        for v in [&mut r.cpu_pct, &mut r.user_pct, &mut r.system_pct] {
            fix(v);
        }
        for v in [
            &mut r.wakeups_per_s,
            &mut r.read_syscalls_per_s,
            &mut r.write_syscalls_per_s,
        ] {
            fix_opt(v);
        }
    }
    for p in &mut report.processes {
        for v in [&mut p.cpu_pct, &mut p.user_pct, &mut p.system_pct] {
            fix(v);
        }
        for v in [
            &mut p.run_time_pct,
            &mut p.wakeups_per_s,
            &mut p.voluntary_ctxt_per_s,
            &mut p.involuntary_ctxt_per_s,
            &mut p.read_syscalls_per_s,
            &mut p.write_syscalls_per_s,
        ] {
            fix_opt(v);
        }
        for t in &mut p.threads {
            for v in [&mut t.cpu_pct, &mut t.user_pct, &mut t.system_pct] {
                fix(v);
            }
            for v in [
                &mut t.run_time_pct,
                &mut t.wakeups_per_s,
                &mut t.voluntary_ctxt_per_s,
                &mut t.involuntary_ctxt_per_s,
                &mut t.read_syscalls_per_s,
                &mut t.write_syscalls_per_s,
            ] {
                fix_opt(v);
            }
        }
    }
}
