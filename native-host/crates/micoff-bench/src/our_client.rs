//! Our measured client as the parent sees it: started as a child process (this executable
//! re-executed with `--child`, its own client.conf per mode), its JSON lines read on a thread of
//! their own, and the wait for its `ready`. The reference client's counterpart is
//! [`crate::reference`].

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc::{self, RecvTimeoutError};

use crate::client::{ChildMessage, ReadyInfo};
use crate::ctx::RunCtx;
use crate::error::BenchError;
use crate::report::Mode;
use crate::started::{ready_timeout, Started};

/// Starts our client for one window of `mode` at `latency_ms`.
pub(crate) fn spawn_ours(ctx: &RunCtx, mode: Mode, latency_ms: u32) -> Result<Started, BenchError> {
    let a = ctx.args;
    let mut cmd = Command::new(&ctx.child.exe);
    cmd.args(&ctx.child.prefix)
        .arg(a.direction.as_str())
        .arg("--child")
        .arg("--latency-ms")
        .arg(latency_ms.to_string())
        .arg("--app-name")
        .arg(app_name(mode));
    if let Some(s) = &a.source {
        cmd.arg("--source").arg(s);
    }
    if let Some(s) = &a.sink {
        cmd.arg("--sink").arg(s);
    }
    if let Some(s) = &a.server {
        cmd.arg("--server").arg(s);
    }
    let conf = if mode == Mode::SrbchannelOff {
        &ctx.confs.off
    } else {
        &ctx.confs.on
    };
    cmd.env("PULSE_CLIENTCONFIG", conf)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    let mut child = cmd.spawn().map_err(|source| BenchError::Spawn {
        exe: ctx.child.exe.display().to_string(),
        source,
    })?;
    let stdin = child.stdin.take();
    let stdout = child.stdout.take();
    let (tx, rx) = mpsc::channel();
    if let Some(stdout) = stdout {
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                match serde_json::from_str::<ChildMessage>(&line) {
                    Ok(m) => {
                        if tx.send(m).is_err() {
                            break;
                        }
                    }
                    Err(_) => tracing::debug!("bench client said: {line}"),
                }
            }
        });
    }
    Ok(Started {
        child,
        stdin,
        messages: Some(rx),
    })
}

/// The application name tells the modes apart in the server's log and `pactl list`.
pub fn app_name(mode: Mode) -> String {
    match mode {
        Mode::SrbchannelOn => "micoff-bench srbchannel-on".into(),
        Mode::SrbchannelOff => "micoff-bench srbchannel-off".into(),
        Mode::Socket => "micoff-bench socket".into(),
        Mode::Reference => "micoff-bench reference".into(),
    }
}

/// Waits for our client's `ready` line (its stream runs and its data flows steadily); its `error`
/// line, its exit or the timeout end the window.
pub(crate) fn wait_ready(started: &Started, latency_ms: u32) -> Result<ReadyInfo, BenchError> {
    let Some(rx) = &started.messages else {
        return Err(BenchError::Client("no message channel".into()));
    };
    match rx.recv_timeout(ready_timeout(latency_ms)) {
        Ok(ChildMessage::Ready(r)) => Ok(r),
        Ok(ChildMessage::Error { message, not_found }) => Err(if not_found {
            BenchError::NotFound(message)
        } else {
            BenchError::Client(message)
        }),
        Ok(ChildMessage::Done(_)) => Err(BenchError::Client("done before ready".into())),
        Err(RecvTimeoutError::Timeout) => Err(BenchError::Timeout(
            "the client's stream to start and deliver data".into(),
        )),
        Err(RecvTimeoutError::Disconnected) => Err(BenchError::Client(
            "exited before its stream was ready".into(),
        )),
    }
}
