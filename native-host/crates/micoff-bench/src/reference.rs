//! parec / pacat, the outside reference: "what an ordinary client gets" at the same latency,
//! with the user's own client.conf. Started and stopped like our client, but it has no message
//! channel: it counts as ready once its data flows steadily, and what the server granted it comes
//! from a separate `-v` run.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::args::Direction;
use crate::client::{self, CHANNELS, SAMPLE_RATE};
use crate::ctx::RunCtx;
use crate::error::BenchError;
use crate::sample;
use crate::started::{ready_timeout, Started, READY_TIMEOUT};

/// parec (record) / pacat (playback) at `latency_ms`, the way the reference runs, without its
/// stdio.
fn reference_command(ctx: &RunCtx, latency_ms: u32) -> (Command, &'static str) {
    let a = ctx.args;
    let (exe, device) = match a.direction {
        Direction::Record => ("parec", a.source.as_ref()),
        Direction::Playback => ("pacat", a.sink.as_ref()),
    };
    let mut cmd = Command::new(exe);
    cmd.arg(format!("--latency-msec={latency_ms}"))
        .arg("--raw")
        .arg("--format=s16ne")
        .arg(format!("--rate={SAMPLE_RATE}"))
        .arg(format!("--channels={CHANNELS}"))
        .arg("--client-name=micoff-bench reference");
    if a.direction == Direction::Playback {
        cmd.arg("--playback");
    }
    if let Some(d) = device {
        cmd.arg(format!("--device={d}"));
    }
    if let Some(s) = &a.server {
        cmd.arg(format!("--server={s}"));
    }
    // The reference keeps the user's own client.conf: it is "what an ordinary client gets".
    (cmd, exe)
}

/// What pacat/parec would play from: silence from /dev/zero (the same bytes per second as our
/// tone) for pacat, nothing for parec.
fn reference_stdin(direction: Direction) -> Result<Stdio, BenchError> {
    Ok(match direction {
        Direction::Playback => {
            Stdio::from(File::open("/dev/zero").map_err(|source| BenchError::File {
                path: "/dev/zero".into(),
                source,
            })?)
        }
        Direction::Record => Stdio::null(),
    })
}

pub(crate) fn spawn_reference(ctx: &RunCtx, latency_ms: u32) -> Result<Started, BenchError> {
    let (mut cmd, exe) = reference_command(ctx, latency_ms);
    let child = cmd
        .stdin(reference_stdin(ctx.args.direction)?)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|source| BenchError::Spawn {
            exe: exe.into(),
            source,
        })?;
    Ok(Started {
        child,
        stdin: None,
        messages: None,
    })
}

/// The fragsize (record) or tlength (playback) in bytes from parec/pacat's `-v` line
/// `Buffer metrics: maxlength=4194304, fragsize=1764`.
pub fn parse_buffer_metrics(line: &str, direction: Direction) -> Option<u32> {
    let rest = line.trim().strip_prefix("Buffer metrics:")?;
    let key = match direction {
        Direction::Record => "fragsize",
        Direction::Playback => "tlength",
    };
    rest.split(',').find_map(|kv| {
        let (k, v) = kv.trim().split_once('=')?;
        (k == key).then(|| v.trim().parse().ok()).flatten()
    })
}

/// What the server grants the reference: an identical parec/pacat run with `-v`, stopped as soon
/// as it prints its buffer metrics. Not the measured process itself: `-v` also asks the server
/// for timing every 50 ms, which would add work to the measured window.
pub(crate) fn reference_granted_us(ctx: &RunCtx, latency_ms: u32) -> Option<u64> {
    let (mut cmd, _) = reference_command(ctx, latency_ms);
    let mut child = cmd
        .arg("-v")
        .stdin(reference_stdin(ctx.args.direction).ok()?)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .ok()?;
    let stderr = child.stderr.take()?;
    let (tx, rx) = mpsc::channel();
    let direction = ctx.args.direction;
    std::thread::spawn(move || {
        // pacat ends status lines with \r, not \n: split on both.
        let mut reader = BufReader::new(stderr);
        let mut buf = Vec::new();
        while reader.read_until(b'\n', &mut buf).is_ok_and(|n| n > 0) {
            for line in String::from_utf8_lossy(&buf).split('\r') {
                if let Some(bytes) = parse_buffer_metrics(line, direction) {
                    let _ = tx.send(bytes);
                    return;
                }
            }
            buf.clear();
        }
    });
    let bytes = rx.recv_timeout(READY_TIMEOUT).ok();
    // Our own child, by its pid; then reaped.
    let _ = child.kill();
    let _ = child.wait();
    bytes.and_then(|b| client::bytes_to_us(b, SAMPLE_RATE, CHANNELS))
}

/// Wait until parec/pacat moves data steadily: its stdout writes (parec) or stdin reads (pacat)
/// grow at about the stream's rate (see [`client::SteadyFlow`]).
pub(crate) fn wait_reference_flowing(
    ctx: &RunCtx,
    started: &mut Started,
    pid: u32,
    latency_ms: u32,
) -> Result<(), BenchError> {
    let deadline = Instant::now() + ready_timeout(latency_ms);
    let write = ctx.args.direction == Direction::Record;
    let mut flow = client::SteadyFlow::new(latency_ms);
    loop {
        if let Ok(Some(status)) = started.child.try_wait() {
            return Err(BenchError::Client(format!(
                "the reference client exited: {status}"
            )));
        }
        if let Some(v) = sample::io_syscalls(ctx.procfs, pid, write) {
            if flow.observe(Instant::now(), v) {
                return Ok(());
            }
        }
        if Instant::now() > deadline {
            return Err(BenchError::Timeout(
                "the reference client's data to flow".into(),
            ));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn buffer_metrics_of_parec_and_pacat() {
        let rec = "Buffer metrics: maxlength=4194304, fragsize=1764";
        assert_eq!(parse_buffer_metrics(rec, Direction::Record), Some(1764));
        assert_eq!(parse_buffer_metrics(rec, Direction::Playback), None);
        let play = "Buffer metrics: maxlength=4194304, tlength=3528, prebuf=3532, minreq=1764\n";
        assert_eq!(parse_buffer_metrics(play, Direction::Playback), Some(3528));
        assert_eq!(
            parse_buffer_metrics("Time: 0.1 sec", Direction::Record),
            None
        );
    }
}
