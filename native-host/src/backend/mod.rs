//! The real dependencies: CPU sampling and process naming over /proc (micoff-proc, [`proc`]) and
//! the audio server (micoff-pulse, [`pulse`]).

pub mod doctor;
pub mod proc;
pub mod pulse;

use std::sync::Arc;

use crate::deps::{Deps, Launch, Limits};

pub use self::doctor::SystemDoctor;
pub use self::proc::ProcSampler;
pub use self::pulse::PulseServer;

/// The production dependencies for a connection launched by `launch`.
pub fn real(launch: Launch) -> Deps {
    let audio = Arc::new(PulseServer::from_env());
    Deps {
        sampler: Arc::new(ProcSampler::system()),
        audio: Arc::clone(&audio) as Arc<dyn crate::deps::AudioServer>,
        doctor: Some(Arc::new(SystemDoctor::new(audio))),
        launch,
        limits: Limits::default(),
    }
}
