//! The sink waker: first words on a virtual microphone built over an idle null sink's monitor. The
//! null sink renders up to 2 s ahead, and a new recorder on its monitor waits until the sink next
//! wakes: 0-2 s of first words lost. In native messaging mode this task watches the server's events
//! and, when a browser's capture stream appears on such a chain and the sink is far ahead, suspends
//! and resumes the sink (docs/design/release-on-mute.md, "First words: the idle null sink"). Module
//! map: [`decide`] (the pure rule over a listing); [`ledger`] (what a suspend that may stand
//! leaves for the next host); `task` (the event loop on the shared micoff-pulse client); this
//! file: [`SinkWaker`], the handle that starts it.

pub mod decide;
pub mod ledger;
mod task;
#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;

use std::sync::Arc;

use micoff_pulse::{PulseClient, PulseError, PulseEvent, Snapshot};
use tokio::sync::broadcast;

use micoff_native::deps::BoxFuture;

pub use self::decide::{decide, Leave, Verdict, Wake};

/// The running waker; dropping it stops the task.
pub struct SinkWaker {
    task: tokio::task::JoinHandle<()>,
}

impl SinkWaker {
    /// Starts the waker on `client` and its `events` (it does nothing until they report a new
    /// record stream; events from the client's start include the streams already open). Must be
    /// called within a tokio runtime.
    pub fn start(client: Arc<PulseClient>, events: broadcast::Receiver<PulseEvent>) -> Self {
        let runtime_dir = std::env::var_os("XDG_RUNTIME_DIR")
            .map(std::path::PathBuf::from)
            .filter(|d| d.is_absolute());
        let ledger = ledger::Ledger::new(runtime_dir);
        let task = tokio::spawn(task::run(Live(client), events, ledger));
        Self { task }
    }
}

impl Drop for SinkWaker {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The shared client as the task's [`task::SinkControl`].
struct Live(Arc<PulseClient>);

impl task::SinkControl for Live {
    fn snapshot(&self) -> BoxFuture<Result<Snapshot, PulseError>> {
        let client = Arc::clone(&self.0);
        Box::pin(async move { client.snapshot().await })
    }

    fn suspend_sink(&self, index: u32, suspend: bool) -> BoxFuture<Result<(), PulseError>> {
        let client = Arc::clone(&self.0);
        Box::pin(async move { client.suspend_sink(index, suspend).await })
    }
}
