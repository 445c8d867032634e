//! micoff-pulse: the audio server as the native host sees it. libpulse objects live on ONE thread
//! (a standard `Mainloop`); the rest of the host talks to it through channels and gets owned,
//! serde-serializable data back. Use [`PulseClient::spawn`] in the host, [`query_once`] in tools.
//!
//! Modules: [`types`] (owned views, [`PulseEvent`]); [`error`] ([`PulseError`]); [`backoff`] (the
//! reconnect schedule, 100 ms doubling to 5 s); [`convert`] (libpulse structs to owned data);
//! `cache` (clients, devices and streams by index, and the events a listing means: pure); `worker`
//! (the thread: connection, listings, events, reconnects).

pub mod backoff;
mod cache;
pub mod convert;
pub mod error;
pub mod types;
mod worker;

use std::io::Write;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use tokio::sync::{broadcast, oneshot};

pub use backoff::Backoff;
pub use error::{PulseError, Result};
pub use micoff_audio_server::is_pipewire;
pub use types::{
    Device, DeviceKind, Props, PulseEvent, SampleSpec, ServerInfo, Snapshot, Stream, StreamKind,
    Streams, INVALID_INDEX,
};

use worker::requests::{ChangeRequest, Command, Reply, ViewRequest};
use worker::Worker;

/// How to reach the server and how patient to be.
#[derive(Debug, Clone)]
pub struct PulseConfig {
    /// libpulse server string (`unix:/path`, `/path`, `tcp:host`). `None`: libpulse's own choice,
    /// in the order micoff-audio-server documents and resolves (`micoff_audio_server::candidates`).
    pub server: Option<String>,
    /// Our client name as the server shows it.
    pub app_name: String,
    /// Reconnect after the server goes away (with `backoff`). Off for one-shot queries.
    pub reconnect: bool,
    pub backoff: Backoff,
    /// Limit for one connection attempt, up to the first full listing.
    pub connect_timeout: Duration,
    /// Limit for one request (`server_info()`, `streams()`, ...).
    pub request_timeout: Duration,
    /// Capacity of the event broadcast channel (a slow subscriber gets `Lagged`).
    pub event_capacity: usize,
}

impl Default for PulseConfig {
    fn default() -> Self {
        Self {
            server: None,
            app_name: "micoff-host".into(),
            reconnect: true,
            backoff: Backoff::default(),
            connect_timeout: Duration::from_secs(5),
            request_timeout: Duration::from_secs(5),
            event_capacity: 256,
        }
    }
}

impl PulseConfig {
    pub fn new(server: Option<String>, app_name: impl Into<String>) -> Self {
        Self {
            server,
            app_name: app_name.into(),
            ..Self::default()
        }
    }
}

/// Handle to the pulse thread. Cheap to share behind an `Arc`; dropping it stops the thread
/// (pending requests then get an error).
pub struct PulseClient {
    commands: mpsc::Sender<Command>,
    wake: UnixStream,
    events: broadcast::Sender<PulseEvent>,
    connected: Arc<AtomicBool>,
    request_timeout: Duration,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for PulseClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PulseClient")
            .field("connected", &self.is_connected())
            .finish_non_exhaustive()
    }
}

impl PulseClient {
    /// Starts the pulse thread; it connects (and reconnects) on its own. Fails only when the
    /// thread cannot be set up (bad config, no main loop, no thread).
    pub fn spawn(config: PulseConfig) -> Result<Self> {
        Self::spawn_subscribed(config).map(|(client, _)| client)
    }

    /// Like [`spawn`](Self::spawn), plus a receiver that exists before the thread starts, so
    /// it sees the very first `Connected` and the `StreamAdded` of streams already open.
    pub fn spawn_subscribed(
        config: PulseConfig,
    ) -> Result<(Self, broadcast::Receiver<PulseEvent>)> {
        let (tx, rx) = mpsc::channel();
        let (wake, wake_rx) =
            UnixStream::pair().map_err(|e| PulseError::Thread(format!("wake socket: {e}")))?;
        wake.set_nonblocking(true)
            .map_err(|e| PulseError::Thread(format!("wake socket: {e}")))?;
        let (events, first_rx) = broadcast::channel(config.event_capacity.max(1));
        let connected = Arc::new(AtomicBool::new(false));
        let request_timeout = config.request_timeout;
        // The worker (and everything libpulse) is built on its own thread; only its setup
        // result crosses back.
        let (ready_tx, ready_rx) = mpsc::channel::<Result<()>>();
        let (ev, conn) = (events.clone(), connected.clone());
        let thread = std::thread::Builder::new()
            .name("micoff-pulse".into())
            .spawn(
                move || match Worker::new(config, rx, Some(wake_rx), ev, conn) {
                    Ok(worker) => {
                        let _ = ready_tx.send(Ok(()));
                        worker.run();
                    }
                    Err(e) => {
                        let _ = ready_tx.send(Err(e));
                    }
                },
            )
            .map_err(|e| PulseError::Thread(format!("spawn: {e}")))?;
        match ready_rx.recv() {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                let _ = thread.join();
                return Err(e);
            }
            Err(_) => {
                let _ = thread.join();
                return Err(PulseError::Thread(
                    "the pulse thread died while starting".into(),
                ));
            }
        }
        let client = Self {
            commands: tx,
            wake,
            events,
            connected,
            request_timeout,
            thread: Some(thread),
        };
        Ok((client, first_rx))
    }

    /// Events from now on. Subscribe first, then ask `streams()`, to miss nothing (or use
    /// [`spawn_subscribed`](Self::spawn_subscribed) to also get the first `Connected`).
    pub fn subscribe(&self) -> broadcast::Receiver<PulseEvent> {
        self.events.subscribe()
    }

    /// Whether the connection is up and the first listing is done.
    pub fn is_connected(&self) -> bool {
        self.connected.load(Ordering::SeqCst)
    }

    pub async fn server_info(&self) -> Result<ServerInfo> {
        self.view(ViewRequest::Server).await
    }

    /// Record streams (source outputs) and playback streams (sink inputs), freshly listed.
    pub async fn streams(&self) -> Result<Streams> {
        self.view(ViewRequest::Streams).await
    }

    pub async fn sources(&self) -> Result<Vec<Device>> {
        self.view(ViewRequest::Sources).await
    }

    pub async fn sinks(&self) -> Result<Vec<Device>> {
        self.view(ViewRequest::Sinks).await
    }

    pub async fn snapshot(&self) -> Result<Snapshot> {
        self.view(ViewRequest::Snapshot).await
    }

    /// Loads a server module (`module-null-sink`, `sink_name=x`); returns its index.
    pub async fn load_module(&self, name: &str, args: &str) -> Result<u32> {
        let (reply, rx) = oneshot::channel();
        let req = ChangeRequest::Load {
            name: name.to_owned(),
            args: args.to_owned(),
            reply,
        };
        self.send(Command::Change(req, self.deadline()))?;
        Self::wait(rx).await
    }

    pub async fn unload_module(&self, index: u32) -> Result<()> {
        let (reply, rx) = oneshot::channel();
        let req = ChangeRequest::Unload { index, reply };
        self.send(Command::Change(req, self.deadline()))?;
        Self::wait(rx).await
    }

    /// Suspends (`suspend`) or resumes the sink `index`; its monitor source follows. A sink
    /// suspended by a client stays suspended until someone resumes it, even after that client is
    /// gone.
    pub async fn suspend_sink(&self, index: u32, suspend: bool) -> Result<()> {
        let (reply, rx) = oneshot::channel();
        let req = ChangeRequest::SuspendSink {
            index,
            suspend,
            reply,
        };
        self.send(Command::Change(req, self.deadline()))?;
        Self::wait(rx).await
    }

    fn deadline(&self) -> Instant {
        Instant::now() + self.request_timeout
    }

    async fn view<T>(&self, make: impl FnOnce(Reply<T>) -> ViewRequest) -> Result<T> {
        let (reply, rx) = oneshot::channel();
        self.send(Command::View(make(reply), self.deadline()))?;
        Self::wait(rx).await
    }

    fn send(&self, cmd: Command) -> Result<()> {
        self.commands
            .send(cmd)
            .map_err(|_| PulseError::Thread("the pulse thread has stopped".into()))?;
        // A full socket buffer already means "wake up"; nothing else can go wrong here.
        let _ = (&self.wake).write(&[1]);
        Ok(())
    }

    async fn wait<T>(rx: oneshot::Receiver<Result<T>>) -> Result<T> {
        rx.await
            .map_err(|_| PulseError::Thread("the pulse thread dropped the request".into()))?
    }
}

impl Drop for PulseClient {
    fn drop(&mut self) {
        let _ = self.commands.send(Command::Shutdown);
        let _ = (&self.wake).write(&[1]);
        if let Some(thread) = self.thread.take() {
            if thread.join().is_err() {
                tracing::warn!("the pulse thread panicked");
            }
        }
    }
}

/// The version of the libpulse this process runs with (`pa_get_library_version()`: the library
/// loaded at run time, which may differ from the one the host was built against).
pub fn library_version() -> String {
    libpulse_binding::version::get_library_version()
        .to_string_lossy()
        .into_owned()
}

/// Blocking one-shot: connect, list everything, disconnect. For CLI tools (`doctor`, `top`).
/// Runs libpulse on the calling thread (inside tokio, call it from `spawn_blocking`).
pub fn query_once(server: Option<&str>, timeout: Duration) -> Result<Snapshot> {
    let config = PulseConfig {
        server: server.map(str::to_owned),
        app_name: "micoff-host".into(),
        reconnect: false,
        connect_timeout: timeout,
        request_timeout: timeout,
        ..PulseConfig::default()
    };
    let (tx, rx) = mpsc::channel();
    let (events, _) = broadcast::channel(1);
    let worker = Worker::new(config, rx, None, events, Arc::new(AtomicBool::new(false)))?;
    let (reply, mut answer) = oneshot::channel();
    tx.send(Command::View(
        ViewRequest::Snapshot(reply),
        Instant::now() + timeout,
    ))
    .map_err(|_| PulseError::Thread("command channel closed".into()))?;
    let mut result = None;
    worker.run_until(|| {
        if let Ok(r) = answer.try_recv() {
            result = Some(r);
        }
        result.is_some()
    });
    drop(tx);
    result.unwrap_or_else(|| {
        Err(PulseError::Thread(
            "the query ended without an answer".into(),
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn send_sync<T: Send + Sync>(_: &T) {}

    #[test]
    fn client_and_its_futures_can_cross_threads() {
        // Compile-time: the host keeps the client in an Arc and awaits from any task.
        fn check(c: &PulseClient) {
            send_sync(c);
            let f = c.streams();
            fn send<T: Send>(_: &T) {}
            send(&f);
        }
        let _ = check;
    }
}
