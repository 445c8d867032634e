//! The real dependencies: CPU sampling and process naming over /proc (micoff-proc, [`proc`]) and
//! the audio server (micoff-pulse, [`pulse`]); and, in native messaging mode only, the host's own
//! background work on that audio client: the [`sink_waker`].

pub mod doctor;
pub mod proc;
pub mod pulse;
pub mod sink_waker;

use std::sync::Arc;

use micoff_native::deps::{Deps, Launch, Limits};

pub use self::doctor::SystemDoctor;
pub use self::proc::ProcSampler;
pub use self::pulse::PulseServer;
pub use self::sink_waker::SinkWaker;

/// The production dependencies for a connection launched by `launch`.
pub fn real(launch: Launch) -> Deps {
    with_audio(Arc::new(PulseServer::from_env()), launch)
}

/// Native messaging mode: [`real`] plus the [`SinkWaker`] on the same audio client (one libpulse
/// connection for both). Call it within the runtime; the waker stops when dropped. `None` (logged)
/// when the audio client cannot even start; the host works on without it.
pub fn native(launch: Launch) -> (Deps, Option<SinkWaker>) {
    let audio = Arc::new(PulseServer::from_env());
    // The waker's events from the client's start: a browser capture already open when this host
    // starts (the one a host that died left, say) is seen like a new one.
    let waker = match audio.client_with_events() {
        Ok((client, events)) => Some(SinkWaker::start(client, events)),
        Err(e) => {
            tracing::warn!("the sink waker does not run: {e}");
            None
        }
    };
    (with_audio(audio, launch), waker)
}

fn with_audio(audio: Arc<PulseServer>, launch: Launch) -> Deps {
    Deps {
        sampler: Arc::new(ProcSampler::system().with_fd_budget(fd_budget())),
        audio: Arc::clone(&audio) as Arc<dyn micoff_native::deps::AudioServer>,
        doctor: Some(Arc::new(SystemDoctor::new(audio))),
        latency_paths: micoff_native::latency::Paths::from_process_env(),
        power_roots: micoff_native::power::Roots::system(),
        launch,
        limits: Limits::default(),
    }
}

/// Fds never handed to the samplers' budget: stdio, the runtime, the audio client's sockets, and
/// the files read by path (one at a time per request or subscription in flight).
const FD_RESERVE_MIN: u64 = 128;
/// A budget above this buys nothing (a few fds per thread that keeps running).
const FD_BUDGET_MAX: u64 = 65_536;

/// The host's one budget of kept-open fds, from `RLIMIT_NOFILE`: the soft limit is raised to the
/// hard one first (the default soft limit is 1024 where the hard one is often far higher), then a
/// quarter of it (at least [`FD_RESERVE_MIN`]) is kept out for everything else.
pub fn fd_budget() -> Arc<micoff_proc::FdBudget> {
    let limit = raise_nofile_limit();
    let reserve = (limit / 4).max(FD_RESERVE_MIN);
    let budget = limit.saturating_sub(reserve).min(FD_BUDGET_MAX);
    tracing::debug!(limit, budget, "open-file budget");
    micoff_proc::FdBudget::new(usize::try_from(budget).unwrap_or(0))
}

/// Raises the soft `RLIMIT_NOFILE` to the hard limit; returns the soft limit now in force.
fn raise_nofile_limit() -> u64 {
    let mut rl = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit only read/write the struct passed.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut rl) } != 0 {
        return 1024;
    }
    if rl.rlim_cur < rl.rlim_max {
        let raised = libc::rlimit {
            rlim_cur: rl.rlim_max,
            rlim_max: rl.rlim_max,
        };
        // SAFETY: as above.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
            rl.rlim_cur = rl.rlim_max;
        }
    }
    if rl.rlim_cur == libc::RLIM_INFINITY {
        return FD_BUDGET_MAX * 2;
    }
    rl.rlim_cur
}
