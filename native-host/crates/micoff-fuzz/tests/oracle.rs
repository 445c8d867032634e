//! The framing target's oracle tells a handler that panicked from one that answered an error that
//! merely reads like it: it counts panics, it does not read replies' text.

#![allow(clippy::unwrap_used)] // tests may unwrap (house style)

use std::sync::Arc;
use std::time::Duration;

use micoff_fuzz::framing::{framing, framing_with};
use micoff_native::deps::{BoxFuture, CpuTicker, HostError, Sampler};
use micoff_native::protocol::{BrowserFamily, CpuReport, ProcessInfo, Processes};

/// The handler panic count is the process's: one test at a time in this binary.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// A framing input: no chunk sizes (byte 0 = 0), then each body as one native messaging frame.
fn input(bodies: &[&str]) -> Vec<u8> {
    let mut data = vec![0u8];
    for body in bodies {
        data.extend_from_slice(&u32::try_from(body.len()).unwrap().to_ne_bytes());
        data.extend_from_slice(body.as_bytes());
    }
    data
}

/// Panics in the `processes` handler, as a bug in a real sampler would.
struct PanickingSampler;

impl Sampler for PanickingSampler {
    fn processes(&self, _pid: Option<u32>) -> BoxFuture<Result<Processes, HostError>> {
        Box::pin(async { panic!("planted: the processes handler is broken") })
    }
    fn cpu_sample(
        &self,
        _: Option<Vec<u32>>,
        _: Duration,
    ) -> BoxFuture<Result<CpuReport, HostError>> {
        Box::pin(async { Err(HostError::NotFound("none".into())) })
    }
    fn browsers(&self, _: Option<BrowserFamily>) -> BoxFuture<Result<Vec<ProcessInfo>, HostError>> {
        Box::pin(async { Ok(vec![]) })
    }
    fn cpu_ticker(self: Arc<Self>, _: Option<Vec<u32>>) -> Box<dyn CpuTicker> {
        unreachable!("no cpu subscription in these inputs")
    }
}

#[test]
fn a_planted_handler_panic_fails_the_oracle() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let data = input(&[r#"{"id":1,"type":"processes"}"#]);
    let quiet = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let outcome = std::panic::catch_unwind(|| framing_with(&data, Arc::new(PanickingSampler)));
    std::panic::set_hook(quiet);
    let message = outcome.expect_err("the oracle must fail on a handler that panicked");
    let message = message
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| message.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .unwrap_or_default();
    assert!(message.contains("a request handler panicked"), "{message}");
}

#[test]
fn a_request_type_that_reads_like_a_panic_passes() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    // The unknown-type error echoes the type: its message then contains "handler failed".
    let data = input(&[
        r#"{"id":1,"type":"subfirefohandler failed"}"#,
        r#"{"id":2,"type":"the request handler failed: boom"}"#,
        r#"{"id":3,"type":"version"}"#,
    ]);
    framing(&data);
}
