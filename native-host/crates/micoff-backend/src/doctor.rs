//! [`SystemDoctor`]: the `doctor` request on micoff-doctor, reading `/` and asking the host's own
//! audio client (no second connection) for the server's facts.

use std::sync::Arc;

use micoff_doctor::audio::Unanswered;
use micoff_doctor::{audio, report, Root};

use crate::PulseServer;
use micoff_native::deps::{BoxFuture, Doctor, HostError};

pub struct SystemDoctor {
    audio: Arc<PulseServer>,
}

impl SystemDoctor {
    pub fn new(audio: Arc<PulseServer>) -> Self {
        Self { audio }
    }
}

impl Doctor for SystemDoctor {
    fn report(&self) -> BoxFuture<Result<serde_json::Value, HostError>> {
        let audio = Arc::clone(&self.audio);
        Box::pin(async move {
            let facts = audio
                .snapshot()
                .await
                .map(|s| audio::from_snapshot(&s))
                .map_err(|e| e.to_string());
            tokio::task::spawn_blocking(move || {
                let root = Root::new("/");
                let env = micoff_doctor::facts::UserEnv::from_process(&root);
                let facts = facts.map_err(Unanswered::from_reason);
                let audio = facts.as_ref().map_err(micoff_doctor::NoAudio::from);
                let report = report::build(&root, &env, audio);
                serde_json::to_value(&report)
                    .map_err(|e| HostError::Internal(format!("encoding the doctor report: {e}")))
            })
            .await
            .map_err(|e| HostError::Internal(format!("doctor task failed: {e}")))?
        })
    }
}
