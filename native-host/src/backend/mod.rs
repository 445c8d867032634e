//! The real dependencies: CPU sampling and process naming over /proc (micoff-proc) and the audio
//! server (micoff-pulse).

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;

use crate::deps::{AudioServer, BoxFuture, Deps, HostError, Launch, Limits, Sampler};
use crate::protocol::{
    AudioServerInfo, AudioStream, BrowserFamily, CpuReport, HostEvent, Processes,
};

/// The production dependencies for a connection launched by `launch`.
pub fn real(launch: Launch) -> Deps {
    Deps {
        sampler: Arc::new(ProcSampler),
        audio: Arc::new(PulseServer),
        launch,
        limits: Limits::default(),
    }
}

// TODO(2025-11-22): backed by micoff-proc once its lib.rs exposes its API.
pub struct ProcSampler;

fn pending(what: &str) -> HostError {
    HostError::Internal(format!("{what} is not available in this build yet"))
}

impl Sampler for ProcSampler {
    fn processes(&self, _browser_pid: Option<u32>) -> BoxFuture<Result<Processes, HostError>> {
        Box::pin(async { Err(pending("process walking")) })
    }

    fn cpu_sample(
        &self,
        _pids: Option<Vec<u32>>,
        _window: Duration,
    ) -> BoxFuture<Result<CpuReport, HostError>> {
        Box::pin(async { Err(pending("CPU sampling")) })
    }

    fn browsers(&self, _family: BrowserFamily) -> BoxFuture<Result<Vec<u32>, HostError>> {
        Box::pin(async { Err(pending("browser discovery")) })
    }
}

// TODO(2025-11-22): backed by micoff-pulse's PulseClient.
pub struct PulseServer;

impl AudioServer for PulseServer {
    fn server_info(&self) -> BoxFuture<Result<AudioServerInfo, HostError>> {
        Box::pin(async { Err(HostError::AudioServerUnavailable("not wired yet".into())) })
    }

    fn streams(&self) -> BoxFuture<Result<Vec<AudioStream>, HostError>> {
        Box::pin(async { Err(HostError::AudioServerUnavailable("not wired yet".into())) })
    }

    fn subscribe(&self) -> Result<mpsc::Receiver<HostEvent>, HostError> {
        Err(HostError::AudioServerUnavailable("not wired yet".into()))
    }
}
