//! Subscriptions: `subscribe` starts one task per topic (`cpu`, `history`, `audio`) that sends its
//! events through the connection's writer until `unsubscribe`, an error or the end of input.

use super::*;

pub(super) async fn subscribe(ctx: &Arc<Ctx>, id: RequestId, topic: Topic) {
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
        Topic::Cpu { .. } | Topic::History { .. } => None,
    };
    let subscription = ctx.next_subscription.fetch_add(1, Ordering::Relaxed);
    // The result goes into the channel before the task that produces events exists.
    ctx.send(fit_to_frame::result(
        id,
        &SubscriptionResult { subscription },
        ctx.max_bytes,
    ))
    .await;
    let task_ctx = Arc::clone(ctx);
    let handle = match (topic, audio_events) {
        (Topic::Audio, Some(rx)) => spawn_subscription(
            Arc::clone(ctx),
            subscription,
            audio_loop(task_ctx, subscription, rx),
        ),
        (Topic::Cpu { interval_ms, pids }, _) => {
            let interval = Duration::from_millis(interval_ms.unwrap_or(CPU_INTERVAL_MS_DEFAULT));
            spawn_subscription(
                Arc::clone(ctx),
                subscription,
                cpu_loop(task_ctx, subscription, interval, pids),
            )
        }
        (Topic::History { interval_ms }, _) => {
            let interval = Duration::from_millis(interval_ms.unwrap_or(CPU_INTERVAL_MS_DEFAULT));
            let (first, updates) = ctx.history.listen(interval);
            spawn_subscription(
                Arc::clone(ctx),
                subscription,
                history_loop(task_ctx, subscription, first, updates),
            )
        }
        (Topic::Audio, None) => return,
    };
    tracing::debug!(subscription, "subscribed");
    subscriptions.insert(subscription, handle);
}

/// Runs a subscription's loop on its own task. A loop that panics (a bug) still ends its
/// subscription with a `subscription_ended` event naming the panic, as a panicking request
/// handler still gets its error reply; aborting the task (unsubscribe) drops the loop as before.
fn spawn_subscription<F>(ctx: Arc<Ctx>, subscription: u64, body: F) -> JoinHandle<()>
where
    F: Future<Output = ()> + Send + 'static,
{
    tokio::spawn(async move {
        if let Err(payload) = CatchUnwind(Box::pin(body)).await {
            let what = panic_message(payload);
            tracing::error!(subscription, "subscription panicked: {what}");
            end_subscription(
                &ctx,
                subscription,
                ErrorCode::Internal.code(),
                format!("the subscription failed: {what}"),
            )
            .await;
        }
    })
}

/// A future that turns a panic while polling `F` into `Err(payload)`; `F` is not polled again.
struct CatchUnwind<F>(Pin<Box<F>>);

impl<F: Future> Future for CatchUnwind<F> {
    type Output = Result<F::Output, Box<dyn Any + Send>>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let inner = self.0.as_mut();
        match std::panic::catch_unwind(AssertUnwindSafe(|| inner.poll(cx))) {
            Ok(Poll::Ready(output)) => Poll::Ready(Ok(output)),
            Ok(Poll::Pending) => Poll::Pending,
            Err(payload) => Poll::Ready(Err(payload)),
        }
    }
}

pub(super) async fn unsubscribe(ctx: &Arc<Ctx>, id: RequestId, subscription: u64) {
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
    ctx.send(fit_to_frame::result(
        id,
        &SubscriptionResult { subscription },
        ctx.max_bytes,
    ))
    .await;
}

async fn cpu_loop(ctx: Arc<Ctx>, subscription: u64, interval: Duration, pids: Option<Vec<u32>>) {
    let ticker = Arc::clone(&ctx.deps.sampler).cpu_ticker(pids.clone());
    let mut reports = crate::deps::cpu_reports(ticker, pids, interval);
    // `cpu_unavailable` goes out once per stretch without reports, not every interval.
    let mut unavailable = false;
    while let Some(tick) = reports.recv().await {
        match tick {
            CpuTick::Report(report) => {
                unavailable = false;
                let max_bytes = ctx.max_bytes.min(MAX_CPU_EVENT_BYTES);
                let event = fit_to_frame::cpu_event(subscription, report, max_bytes);
                match event {
                    Some(body) => ctx.send(body).await,
                    None => tracing::warn!(subscription, "cpu event too large even when trimmed"),
                }
            }
            CpuTick::Unavailable(e) => {
                if !unavailable {
                    tracing::debug!(subscription, "no cpu report: {e}");
                    unavailable = true;
                    let event = HostEvent::cpu_unavailable(e.code(), e.to_string());
                    send_event(&ctx, subscription, event).await;
                }
            }
            CpuTick::Ended(e) => {
                end_subscription(&ctx, subscription, e.code().code(), e.to_string()).await;
                return;
            }
        }
    }
    end_subscription(
        &ctx,
        subscription,
        ErrorCode::Internal.code(),
        "the cpu sampler stopped".into(),
    )
    .await;
}

/// A `history` subscription: the whole history first, then each sample with its report.
async fn history_loop(
    ctx: Arc<Ctx>,
    subscription: u64,
    first: HistorySnapshot,
    mut updates: mpsc::Receiver<Update>,
) {
    let event = HostEvent::History {
        history: first,
        report: None,
    };
    send_event(&ctx, subscription, event).await;
    while let Some(Update { history, report }) = updates.recv().await {
        let max_bytes = ctx.max_bytes.min(MAX_CPU_EVENT_BYTES);
        match fit_to_frame::history_event(subscription, &history, Some(report), max_bytes) {
            Some(body) => ctx.send(body).await,
            None => tracing::warn!(subscription, "history event too large even when trimmed"),
        }
    }
    end_subscription(
        &ctx,
        subscription,
        ErrorCode::Internal.code(),
        "the history stopped".into(),
    )
    .await;
}

async fn audio_loop(ctx: Arc<Ctx>, subscription: u64, mut rx: mpsc::Receiver<HostEvent>) {
    while let Some(event) = rx.recv().await {
        if let HostEvent::SubscriptionEnded { code, reason } = event {
            end_subscription(&ctx, subscription, code, reason).await;
            return;
        }
        send_event(&ctx, subscription, event).await;
    }
    end_subscription(
        &ctx,
        subscription,
        ErrorCode::Internal.code(),
        "the audio event source stopped".into(),
    )
    .await;
}

async fn send_event(ctx: &Ctx, subscription: u64, event: HostEvent) {
    let body = fit_to_frame::message(
        &HostToExtension::Event {
            subscription,
            event: Box::new(event),
        },
        ctx.max_bytes,
    );
    ctx.send(body).await;
}

/// The subscription's last event (`code`: an [`ErrorCode`]'s number, as the sources' own
/// `subscription_ended` events carry it); then it is forgotten (`unsubscribe` answers
/// `not_found`).
async fn end_subscription(ctx: &Ctx, subscription: u64, code: u32, reason: String) {
    tracing::warn!(subscription, "subscription ended: {reason}");
    let reason = crate::protocol::bound_message(&reason);
    send_event(
        ctx,
        subscription,
        HostEvent::SubscriptionEnded { code, reason },
    )
    .await;
    // Our own handle: dropping it detaches this (finishing) task.
    ctx.subscriptions.lock().await.remove(&subscription);
}
