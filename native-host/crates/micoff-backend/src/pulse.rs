//! [`PulseServer`]: the host's [`AudioServer`] on micoff-pulse. One [`PulseClient`] (one libpulse
//! thread, reconnecting with backoff) per host process, started on first use; the server's
//! process(es) are found through micoff-proc (the process holding the socket).

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use micoff_proc::{env_map, ProcFs};
use micoff_pulse::{PulseClient, PulseConfig, PulseError, PulseEvent, ServerInfo, StreamKind};
use tokio::sync::{broadcast, mpsc};

use micoff_native::deps::{AudioServer, BoxFuture, HostError};
use micoff_native::protocol::{AudioServerInfo, AudioStream, ErrorCode, HostEvent};

/// The audio server as the host sees it.
pub struct PulseServer {
    config: PulseConfig,
    fs: ProcFs,
    env: Arc<HashMap<String, String>>,
    client: Mutex<Option<Arc<PulseClient>>>,
}

impl PulseServer {
    /// The server from `PULSE_SERVER` as micoff-audio-server reads it (else libpulse's default),
    /// /proc for the server's process.
    pub fn from_env() -> Self {
        let server = micoff_audio_server::ServerEnv::from_process().pulse_server;
        Self::new(PulseConfig::new(server, "micoff-host"), ProcFs::system())
    }

    pub fn new(config: PulseConfig, fs: ProcFs) -> Self {
        Self {
            config,
            fs,
            env: Arc::new(env_map()),
            client: Mutex::new(None),
        }
    }

    /// The shared client, started on first use (the sink waker shares it).
    pub(crate) fn client(&self) -> Result<Arc<PulseClient>, HostError> {
        self.client_with_events().map(|(client, _)| client)
    }

    /// The shared client and its events: from the client's start (its first `Connected` and the
    /// `StreamAdded` of the streams already open) when this call starts it, else from now on.
    pub(crate) fn client_with_events(
        &self,
    ) -> Result<(Arc<PulseClient>, broadcast::Receiver<PulseEvent>), HostError> {
        let mut slot = self
            .client
            .lock()
            .map_err(|_| HostError::Internal("the audio client lock is poisoned".into()))?;
        if let Some(client) = slot.as_ref() {
            return Ok((Arc::clone(client), client.subscribe()));
        }
        let (client, events) =
            PulseClient::spawn_subscribed(self.config.clone()).map_err(unavailable)?;
        let client = Arc::new(client);
        *slot = Some(Arc::clone(&client));
        Ok((client, events))
    }

    /// Server, devices and streams at once (for the doctor).
    pub async fn snapshot(&self) -> Result<micoff_pulse::Snapshot, HostError> {
        self.client()?.snapshot().await.map_err(unavailable)
    }

    fn pids_finder(&self) -> PidsFinder {
        PidsFinder {
            fs: self.fs.clone(),
            env: Arc::clone(&self.env),
        }
    }
}

fn unavailable(e: PulseError) -> HostError {
    match e {
        PulseError::Thread(_) | PulseError::Config(_) => HostError::Internal(e.to_string()),
        _ => HostError::AudioServerUnavailable(e.to_string()),
    }
}

/// Finds the server's processes from the socket it is connected on.
#[derive(Clone)]
struct PidsFinder {
    fs: ProcFs,
    env: Arc<HashMap<String, String>>,
}

impl PidsFinder {
    async fn info(&self, server: ServerInfo) -> AudioServerInfo {
        let this = self.clone();
        let socket = server.socket_path.clone();
        let pids = tokio::task::spawn_blocking(move || {
            let mut env = (*this.env).clone();
            if let Some(path) = socket {
                // The socket we are actually connected on beats the environment's guesses.
                env.insert("PULSE_SERVER".into(), format!("unix:{path}"));
            }
            this.fs
                .audio_server_processes(&env)
                .iter()
                .map(|p| p.pid)
                .collect::<Vec<u32>>()
        })
        .await
        .unwrap_or_else(|e| {
            tracing::warn!("finding the audio server's process failed: {e}");
            Vec::new()
        });
        AudioServerInfo::new(server, pids)
    }
}

fn all_streams(streams: micoff_pulse::Streams) -> Vec<AudioStream> {
    let mut all = streams.record;
    all.extend(streams.playback);
    all
}

impl AudioServer for PulseServer {
    fn server_info(&self) -> BoxFuture<Result<AudioServerInfo, HostError>> {
        let client = self.client();
        let finder = self.pids_finder();
        Box::pin(async move {
            let info = client?.server_info().await.map_err(unavailable)?;
            Ok(finder.info(info).await)
        })
    }

    fn streams(&self) -> BoxFuture<Result<Vec<AudioStream>, HostError>> {
        let client = self.client();
        Box::pin(async move { Ok(all_streams(client?.streams().await.map_err(unavailable)?)) })
    }

    fn subscribe(&self) -> Result<mpsc::Receiver<HostEvent>, HostError> {
        let client = self.client()?;
        // Subscribe before listing so nothing between the listing and the first event is lost.
        let events = client.subscribe();
        let (tx, rx) = mpsc::channel(64);
        tokio::spawn(forward(Live(client), events, tx, self.pids_finder()));
        Ok(rx)
    }
}

/// What [`forward`] needs from the audio client: the real [`PulseClient`], a fake in tests.
trait StreamSource: Send + Sync + 'static {
    fn server_info(&self) -> BoxFuture<Result<ServerInfo, PulseError>>;
    fn streams(&self) -> BoxFuture<Result<micoff_pulse::Streams, PulseError>>;
}

/// The shared client as a [`StreamSource`] (a newtype, so that method calls on an
/// `Arc<PulseClient>` elsewhere keep meaning the client's own methods).
struct Live(Arc<PulseClient>);

impl StreamSource for Live {
    fn server_info(&self) -> BoxFuture<Result<ServerInfo, PulseError>> {
        let client = Arc::clone(&self.0);
        Box::pin(async move { PulseClient::server_info(&client).await })
    }

    fn streams(&self) -> BoxFuture<Result<micoff_pulse::Streams, PulseError>> {
        let client = Arc::clone(&self.0);
        Box::pin(async move { PulseClient::streams(&client).await })
    }
}

type StreamKey = (StreamKind, u32);

/// The current state, then PulseEvents as HostEvents, until the subscriber goes away.
///
/// Stream events are not forwarded with their own payload: an event broadcast before the state
/// listing was taken can reach us after it (we subscribe, then list), and its older payload would
/// overwrite the newer one the extension already has. Instead each burst of stream events is a
/// list of touched streams, and the host lists the streams again and sends their current state
/// (`stream_added` / `stream_changed`, or `stream_removed` when gone). A listing is always at
/// least as new as the events that led to it, so the last message for every stream is current.
async fn forward<C: StreamSource>(
    client: C,
    mut events: broadcast::Receiver<PulseEvent>,
    tx: mpsc::Sender<HostEvent>,
    finder: PidsFinder,
) {
    // The streams the subscriber has (it resets its list on `audio_connected`).
    let mut sent: HashSet<StreamKey> = HashSet::new();
    if !send_state(&client, &tx, &finder, &mut sent).await {
        return;
    }
    loop {
        let first = tokio::select! {
            e = events.recv() => e,
            () = tx.closed() => return,
        };
        let mut batch = Vec::new();
        let mut lagged = false;
        let mut closed = false;
        match first {
            Ok(event) => batch.push(event),
            Err(broadcast::error::RecvError::Lagged(n)) => {
                tracing::warn!(missed = n, "audio events lagged; resending the state");
                lagged = true;
            }
            Err(broadcast::error::RecvError::Closed) => closed = true,
        }
        // What is queued already goes into the same burst (one listing for all of it).
        while !lagged && !closed {
            match events.try_recv() {
                Ok(event) => batch.push(event),
                Err(broadcast::error::TryRecvError::Empty) => break,
                Err(broadcast::error::TryRecvError::Lagged(n)) => {
                    tracing::warn!(missed = n, "audio events lagged; resending the state");
                    lagged = true;
                }
                Err(broadcast::error::TryRecvError::Closed) => closed = true,
            }
        }
        if lagged {
            // Missed events: start over from the current state.
            if !send_state(&client, &tx, &finder, &mut sent).await {
                return;
            }
            continue;
        }
        let mut touched: Vec<StreamKey> = Vec::new();
        for event in batch {
            let host_event = match event {
                PulseEvent::StreamAdded { kind, stream }
                | PulseEvent::StreamChanged { kind, stream } => {
                    touch(&mut touched, (kind, stream.index));
                    continue;
                }
                PulseEvent::StreamRemoved { kind, index } => {
                    touch(&mut touched, (kind, index));
                    continue;
                }
                PulseEvent::Connected { info } => {
                    if !flush(&client, &tx, &mut touched, &mut sent).await {
                        return;
                    }
                    sent.clear();
                    HostEvent::AudioConnected {
                        server: finder.info(info).await,
                    }
                }
                PulseEvent::Disconnected { reason } => {
                    // Every stream is gone with the connection (no `stream_removed` for them).
                    touched.clear();
                    sent.clear();
                    HostEvent::AudioDisconnected { reason }
                }
                // Devices and server changes are not part of the protocol's audio topic.
                PulseEvent::DeviceAdded { .. }
                | PulseEvent::DeviceChanged { .. }
                | PulseEvent::DeviceRemoved { .. }
                | PulseEvent::ServerChanged { .. } => continue,
            };
            if tx.send(host_event).await.is_err() {
                return;
            }
        }
        if !flush(&client, &tx, &mut touched, &mut sent).await {
            return;
        }
        if closed {
            let _ = tx.send(client_stopped(None)).await;
            return;
        }
    }
}

/// The subscription's last event once the audio client stopped for good (`cause`: its error, when
/// one says why).
fn client_stopped(cause: Option<&PulseError>) -> HostEvent {
    let reason = match cause {
        Some(e) => format!("the audio client stopped: {e}"),
        None => "the audio client stopped".to_owned(),
    };
    HostEvent::subscription_ended(ErrorCode::Internal, reason)
}

fn touch(touched: &mut Vec<StreamKey>, key: StreamKey) {
    if !touched.contains(&key) {
        touched.push(key);
    }
}

/// Sends the current state of the `touched` streams (from a fresh listing) and empties the list.
/// `false` when the subscriber is gone or the audio client stopped for good.
async fn flush<C: StreamSource>(
    client: &C,
    tx: &mpsc::Sender<HostEvent>,
    touched: &mut Vec<StreamKey>,
    sent: &mut HashSet<StreamKey>,
) -> bool {
    if touched.is_empty() {
        return true;
    }
    let keys = std::mem::take(touched);
    let now: HashMap<StreamKey, AudioStream> = match client.streams().await {
        Ok(streams) => all_streams(streams)
            .into_iter()
            .map(|s| ((s.kind, s.index), s))
            .collect(),
        Err(e @ PulseError::Thread(_)) => {
            let _ = tx.send(client_stopped(Some(&e))).await;
            return false;
        }
        Err(e) => {
            // Not connected (any more): the `audio_disconnected` that follows says it all.
            tracing::debug!("listing streams after an event failed: {e}");
            return true;
        }
    };
    for key in keys {
        let event = match now.get(&key) {
            Some(stream) if sent.insert(key) => HostEvent::StreamAdded {
                stream: stream.clone(),
            },
            Some(stream) => HostEvent::StreamChanged {
                stream: stream.clone(),
            },
            None if sent.remove(&key) => HostEvent::StreamRemoved {
                kind: key.0,
                index: key.1,
            },
            None => continue, // came and went between two listings
        };
        if tx.send(event).await.is_err() {
            return false;
        }
    }
    true
}

/// `audio_connected` + a `stream_added` per stream, or `audio_disconnected`. `false` when the
/// subscriber is gone or the audio client stopped for good.
async fn send_state<C: StreamSource>(
    client: &C,
    tx: &mpsc::Sender<HostEvent>,
    finder: &PidsFinder,
    sent: &mut HashSet<StreamKey>,
) -> bool {
    let state = async {
        let info = client.server_info().await?;
        let streams = client.streams().await?;
        Ok::<_, PulseError>((info, streams))
    };
    sent.clear();
    let (events, stopped) = match state.await {
        Ok((info, streams)) => {
            let mut events = vec![HostEvent::AudioConnected {
                server: finder.info(info).await,
            }];
            for stream in all_streams(streams) {
                sent.insert((stream.kind, stream.index));
                events.push(HostEvent::StreamAdded { stream });
            }
            (events, false)
        }
        Err(e @ PulseError::Thread(_)) => (vec![client_stopped(Some(&e))], true),
        Err(e) => (
            vec![HostEvent::AudioDisconnected {
                reason: e.to_string(),
            }],
            false,
        ),
    };
    for event in events {
        if tx.send(event).await.is_err() {
            return false;
        }
    }
    !stopped
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// A server whose current streams the test sets.
    #[derive(Clone, Default)]
    struct FakeSource {
        record: Arc<Mutex<Vec<AudioStream>>>,
        listings: Arc<std::sync::atomic::AtomicUsize>,
    }

    impl StreamSource for FakeSource {
        fn server_info(&self) -> BoxFuture<Result<ServerInfo, PulseError>> {
            Box::pin(async {
                Ok(serde_json::from_value(serde_json::json!({
                    "server_string": "/tmp/x/native", "socket_path": "/tmp/x/native",
                    "server_name": "pulseaudio", "server_version": "16.1", "is_pipewire": false,
                    "pipewire_version": null, "host_name": "box", "user_name": "me",
                    "default_sink_name": null, "default_source_name": null,
                    "sample_format": "s16le", "sample_rate_hz": 44100, "channels": 2,
                    "server_protocol_version": 35, "client_protocol_version": 35, "is_local": true
                }))
                .unwrap())
            })
        }

        fn streams(&self) -> BoxFuture<Result<micoff_pulse::Streams, PulseError>> {
            self.listings
                .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let record = self.record.lock().unwrap().clone();
            Box::pin(async move {
                Ok(micoff_pulse::Streams {
                    record,
                    playback: vec![],
                })
            })
        }
    }

    fn stream(index: u32, corked: bool) -> AudioStream {
        serde_json::from_value(serde_json::json!({
            "kind": "record", "index": index, "name": "RecordStream", "media_name": "RecordStream",
            "client_index": 3, "client_name": "Chromium", "application_name": "Chromium",
            "application_process_id": 120, "application_process_binary": "chromium",
            "device_index": 1, "device_name": "mic", "device_description": "Mic",
            "device_bus": "pci", "device_class": "sound", "device_props": {},
            "device_configured_latency_us": 10000, "media_role": null, "sample_format": "s16le",
            "sample_rate_hz": 48000, "channels": 1, "buffer_latency_us": 0,
            "device_latency_us": 2000, "fragment_size_bytes": null, "fragment_latency_us": null,
            "requested_latency_us": null, "corked": corked, "muted": false,
            "driver": "protocol-native.c", "resample_method": null, "owner_module": null,
            "props": {}
        }))
        .unwrap()
    }

    fn finder(dir: &std::path::Path) -> PidsFinder {
        PidsFinder {
            fs: ProcFs::new(dir),
            env: Arc::new(HashMap::new()),
        }
    }

    async fn next(rx: &mut mpsc::Receiver<HostEvent>) -> HostEvent {
        tokio::time::timeout(std::time::Duration::from_secs(5), rx.recv())
            .await
            .unwrap()
            .unwrap()
    }

    #[tokio::test]
    async fn a_stale_event_never_overwrites_newer_stream_data() {
        let proc_dir = tempfile::tempdir().unwrap();
        let source = FakeSource::default();
        // The server's truth: stream 7 is uncorked (newer than the event below).
        *source.record.lock().unwrap() = vec![stream(7, false)];
        let (events_tx, events) = broadcast::channel(16);
        // An event from before the listing, with the older payload (corked), already queued.
        events_tx
            .send(PulseEvent::StreamChanged {
                kind: StreamKind::Record,
                stream: stream(7, true),
            })
            .unwrap();
        let (tx, mut rx) = mpsc::channel(16);
        let task = tokio::spawn(forward(source.clone(), events, tx, finder(proc_dir.path())));

        assert!(matches!(
            next(&mut rx).await,
            HostEvent::AudioConnected { .. }
        ));
        let HostEvent::StreamAdded { stream: s } = next(&mut rx).await else {
            panic!("stream_added first")
        };
        assert!(!s.corked);
        // The stale event leads to a re-listing: the current data, not the event's.
        let HostEvent::StreamChanged { stream: s } = next(&mut rx).await else {
            panic!("then stream_changed")
        };
        assert_eq!((s.index, s.corked), (7, false));

        // A burst: 7 goes away, 8 comes and goes, 9 comes: one listing, three facts.
        let before = source.listings.load(std::sync::atomic::Ordering::SeqCst);
        *source.record.lock().unwrap() = vec![stream(9, true)];
        for event in [
            PulseEvent::StreamRemoved {
                kind: StreamKind::Record,
                index: 7,
            },
            PulseEvent::StreamAdded {
                kind: StreamKind::Record,
                stream: stream(8, false),
            },
            PulseEvent::StreamRemoved {
                kind: StreamKind::Record,
                index: 8,
            },
            PulseEvent::StreamAdded {
                kind: StreamKind::Record,
                stream: stream(9, false),
            },
        ] {
            events_tx.send(event).unwrap();
        }
        assert_eq!(
            next(&mut rx).await,
            HostEvent::StreamRemoved {
                kind: StreamKind::Record,
                index: 7
            }
        );
        let HostEvent::StreamAdded { stream: s } = next(&mut rx).await else {
            panic!("stream 9 added")
        };
        assert_eq!((s.index, s.corked), (9, true));
        assert_eq!(
            source.listings.load(std::sync::atomic::Ordering::SeqCst),
            before + 1
        );

        // The client stops: the subscription ends with a reason.
        drop(events_tx);
        let HostEvent::SubscriptionEnded { code, .. } = next(&mut rx).await else {
            panic!("subscription_ended")
        };
        assert_eq!(code, ErrorCode::Internal.code());
        task.await.unwrap();
    }
}
