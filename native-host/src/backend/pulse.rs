//! [`PulseServer`]: the host's [`AudioServer`] on micoff-pulse. One [`PulseClient`] (one libpulse
//! thread, reconnecting with backoff) per host process, started on first use; the server's
//! process(es) are found through micoff-proc (the process holding the socket).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use micoff_proc::{env_map, ProcFs};
use micoff_pulse::{PulseClient, PulseConfig, PulseError, PulseEvent, ServerInfo};
use tokio::sync::{broadcast, mpsc};

use crate::deps::{AudioServer, BoxFuture, HostError};
use crate::protocol::{AudioServerInfo, AudioStream, HostEvent};

/// The audio server as the host sees it.
pub struct PulseServer {
    config: PulseConfig,
    fs: ProcFs,
    env: Arc<HashMap<String, String>>,
    client: Mutex<Option<Arc<PulseClient>>>,
}

impl PulseServer {
    /// The server from `PULSE_SERVER` (else libpulse's default), /proc for the server's process.
    pub fn from_env() -> Self {
        let server = std::env::var("PULSE_SERVER")
            .ok()
            .filter(|s| !s.trim().is_empty());
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

    /// The shared client, started on first use.
    fn client(&self) -> Result<Arc<PulseClient>, HostError> {
        let mut slot = self
            .client
            .lock()
            .map_err(|_| HostError::Internal("the audio client lock is poisoned".into()))?;
        if let Some(client) = slot.as_ref() {
            return Ok(Arc::clone(client));
        }
        let client = Arc::new(PulseClient::spawn(self.config.clone()).map_err(unavailable)?);
        *slot = Some(Arc::clone(&client));
        Ok(client)
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
        // Subscribe before listing so nothing between the listing and the first event is lost
        // (an event for a stream already listed is an upsert for the extension).
        let events = client.subscribe();
        let (tx, rx) = mpsc::channel(64);
        tokio::spawn(forward(client, events, tx, self.pids_finder()));
        Ok(rx)
    }
}

/// The current state, then PulseEvents as HostEvents, until the subscriber goes away.
async fn forward(
    client: Arc<PulseClient>,
    mut events: broadcast::Receiver<PulseEvent>,
    tx: mpsc::Sender<HostEvent>,
    finder: PidsFinder,
) {
    if !send_state(&client, &tx, &finder).await {
        return;
    }
    loop {
        let event = tokio::select! {
            e = events.recv() => e,
            () = tx.closed() => return,
        };
        let event = match event {
            Ok(event) => event,
            Err(broadcast::error::RecvError::Lagged(n)) => {
                // Missed events: start over from the current state (the extension resets its list
                // on `audio_connected`).
                tracing::warn!(missed = n, "audio events lagged; resending the state");
                if !send_state(&client, &tx, &finder).await {
                    return;
                }
                continue;
            }
            Err(broadcast::error::RecvError::Closed) => return,
        };
        let host_event = match event {
            PulseEvent::Connected { info } => HostEvent::AudioConnected {
                server: finder.info(info).await,
            },
            PulseEvent::Disconnected { reason } => HostEvent::AudioDisconnected { reason },
            PulseEvent::StreamAdded { stream, .. } => HostEvent::StreamAdded { stream },
            PulseEvent::StreamChanged { stream, .. } => HostEvent::StreamChanged { stream },
            PulseEvent::StreamRemoved { kind, index } => HostEvent::StreamRemoved { kind, index },
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
}

/// `audio_connected` + a `stream_added` per stream, or `audio_disconnected`. `false` when the
/// subscriber is gone.
async fn send_state(
    client: &PulseClient,
    tx: &mpsc::Sender<HostEvent>,
    finder: &PidsFinder,
) -> bool {
    let state = async {
        let info = client.server_info().await?;
        let streams = client.streams().await?;
        Ok::<_, PulseError>((info, streams))
    };
    let events = match state.await {
        Ok((info, streams)) => {
            let mut events = vec![HostEvent::AudioConnected {
                server: finder.info(info).await,
            }];
            events.extend(
                all_streams(streams)
                    .into_iter()
                    .map(|stream| HostEvent::StreamAdded { stream }),
            );
            events
        }
        Err(e) => vec![HostEvent::AudioDisconnected {
            reason: e.to_string(),
        }],
    };
    for event in events {
        if tx.send(event).await.is_err() {
            return false;
        }
    }
    true
}
