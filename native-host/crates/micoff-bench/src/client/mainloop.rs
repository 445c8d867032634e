//! libpulse plumbing the measured client and the probe share: a context connected on its own
//! standard mainloop, one blocking mainloop turn, and libpulse's errors in words
//! ([`ClientError`]).

use libpulse_binding as pulse;
use pulse::context::{Context, FlagSet as ContextFlags, State as ContextState};
use pulse::mainloop::standard::{IterateResult, Mainloop};

#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("libpulse: {0}")]
    Pulse(String),
    #[error("connection to the audio server failed: {0}")]
    Connect(String),
    #[error("stream failed: {0}")]
    Stream(String),
    #[error("stream failed: {0} (no such device?)")]
    NotFound(String),
    #[error("writing to the parent: {0}")]
    Io(#[from] std::io::Error),
}

/// A context connected to `server` (None: libpulse's default), on its own standard mainloop.
pub(crate) fn connect(
    server: Option<&str>,
    app_name: &str,
) -> Result<(Mainloop, Context), ClientError> {
    let mut mainloop =
        Mainloop::new().ok_or_else(|| ClientError::Pulse("cannot create mainloop".into()))?;
    let mut context = Context::new(&mainloop, app_name)
        .ok_or_else(|| ClientError::Pulse("cannot create context".into()))?;
    context
        .connect(server, ContextFlags::NOAUTOSPAWN, None)
        .map_err(|e| ClientError::Connect(pa_err(e)))?;
    loop {
        iterate(&mut mainloop)?;
        match context.get_state() {
            ContextState::Ready => return Ok((mainloop, context)),
            ContextState::Failed | ContextState::Terminated => {
                return Err(ClientError::Connect(pa_err(context.errno())));
            }
            _ => {}
        }
    }
}

pub(crate) fn iterate(mainloop: &mut Mainloop) -> Result<(), ClientError> {
    match mainloop.iterate(true) {
        IterateResult::Success(_) => Ok(()),
        IterateResult::Quit(_) => Err(ClientError::Pulse("mainloop quit".into())),
        IterateResult::Err(e) => Err(ClientError::Pulse(pa_err(e))),
    }
}

/// "No such entity" (e.g. a `--source` that does not exist). `pa_context_errno` gives the code
/// positive, the binding's own `PAErr`s are negative: compare magnitudes.
pub(crate) fn is_no_entity(e: pulse::error::PAErr) -> bool {
    e.0.abs()
        == pulse::error::PAErr::from(pulse::error::Code::NoEntity)
            .0
            .abs()
}

/// libpulse's error text (`PAErr::to_string` is `Option`).
pub(crate) fn pa_err(e: pulse::error::PAErr) -> String {
    e.to_string().unwrap_or_else(|| format!("error {}", e.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_entity_either_sign() {
        use pulse::error::PAErr;
        assert!(is_no_entity(PAErr(5)));
        assert!(is_no_entity(PAErr(-5)));
        assert!(!is_no_entity(PAErr(6)));
    }
}
