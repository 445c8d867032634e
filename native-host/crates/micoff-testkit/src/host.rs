//! A synchronous native messaging client for the real `micoff-host` binary (or a stand-in browser
//! that launches it), framed by the host's own codec: what a browser does, minus the browser.

use std::io::{Read, Write};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

use micoff_native::framing::{FrameCodec, MAX_OUTGOING_BYTES};
use serde_json::{json, Value};

use crate::kill_child;

/// The origin Chromium passes to the host it launches for our extension.
pub fn chrome_origin() -> String {
    format!("chrome-extension://{}/", micoff_native::CHROME_EXTENSION_ID)
}

/// One frame carrying `body`, as the browser writes it.
pub fn encode_frame(body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    FrameCodec::default()
        .encode(body, &mut out)
        .expect("frame body over the limit");
    out
}

/// Reads what the host writes: its replies may be as long as its outgoing limit, far above the
/// limit it puts on requests.
fn reply_codec() -> FrameCodec {
    FrameCodec {
        max_incoming_bytes: MAX_OUTGOING_BYTES,
        ..FrameCodec::default()
    }
}

/// Every frame in `bytes` (all of a host's stdout), as JSON; panics on a truncated frame.
pub fn decode_frames(bytes: &[u8]) -> Vec<Value> {
    let codec = reply_codec();
    let mut buf = bytes.to_vec();
    let mut out = Vec::new();
    while let Some(body) = codec.decode_eof(&mut buf).expect("bad frame") {
        out.push(serde_json::from_slice(&body).expect("frame is not JSON"));
    }
    out
}

/// The child with piped stdin/stdout; frames from its stdout are read on a thread and handed over
/// a channel. Dropping it closes stdin (the host ends on EOF) and kills the child by its PID if it
/// lingers.
pub struct HostClient {
    child: Child,
    stdin: Option<ChildStdin>,
    frames: mpsc::Receiver<Vec<u8>>,
    next_id: u64,
    /// How long [`HostClient::wait`] and the calls built on it wait.
    pub limit: Duration,
}

impl HostClient {
    /// Spawns `cmd` (stderr as configured by the caller; inherited by default).
    pub fn spawn(mut cmd: Command) -> std::io::Result<Self> {
        let mut child = cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).spawn()?;
        let stdin = child.stdin.take();
        let mut stdout = child
            .stdout
            .take()
            .ok_or_else(|| std::io::Error::other("no stdout"))?;
        let (tx, frames) = mpsc::channel();
        std::thread::spawn(move || {
            let codec = reply_codec();
            let mut buf = Vec::new();
            let mut chunk = [0u8; 64 * 1024];
            loop {
                while let Ok(Some(body)) = codec.decode(&mut buf) {
                    if tx.send(body).is_err() {
                        return;
                    }
                }
                match stdout.read(&mut chunk) {
                    Ok(0) | Err(_) => return,
                    Ok(n) => buf.extend_from_slice(&chunk[..n]),
                }
            }
        });
        Ok(Self {
            child,
            stdin,
            frames,
            next_id: 1,
            limit: Duration::from_secs(20),
        })
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Writes one frame carrying `body`.
    pub fn write_frame(&mut self, body: &[u8]) -> std::io::Result<()> {
        self.write_raw(&encode_frame(body))
    }

    /// Writes `bytes` as they are (a frame header alone, a broken frame).
    pub fn write_raw(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        let stdin = self
            .stdin
            .as_mut()
            .ok_or_else(|| std::io::Error::other("stdin already closed"))?;
        stdin.write_all(bytes)?;
        stdin.flush()
    }

    /// Sends `request` with the next id (set in the request); returns the id.
    pub fn try_send(&mut self, mut request: Value) -> std::io::Result<u64> {
        let id = self.next_id;
        self.next_id += 1;
        request["id"] = json!(id);
        self.write_frame(&serde_json::to_vec(&request)?)?;
        Ok(id)
    }

    /// [`HostClient::try_send`], panicking when the pipe is gone.
    pub fn send(&mut self, request: Value) -> u64 {
        self.try_send(request).expect("cannot write to the host")
    }

    /// The next frame's body, as it came.
    pub fn next_body(&self, limit: Duration) -> Result<Vec<u8>, RecvTimeoutError> {
        self.frames.recv_timeout(limit)
    }

    /// The next frame matching `pred` (others are skipped), or a panic naming `what`.
    pub fn wait(&self, what: &str, mut pred: impl FnMut(&Value) -> bool) -> Value {
        let deadline = Instant::now() + self.limit;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.next_body(left) {
                Ok(body) => {
                    let v: Value = serde_json::from_slice(&body).expect("frame is not JSON");
                    if pred(&v) {
                        return v;
                    }
                }
                Err(e) => panic!("no frame for {what} within {:?}: {e}", self.limit),
            }
        }
    }

    /// Sends a request and returns its reply (result or error).
    pub fn call(&mut self, request: Value) -> Value {
        let what = format!("the reply to {request}");
        let id = self.send(request);
        self.wait(&what, |v| v["id"] == json!(id))
    }

    /// The `result` of a request; panics on an error reply.
    pub fn result(&mut self, request: Value) -> Value {
        let reply = self.call(request.clone());
        assert_eq!(reply["type"], "result", "{request} -> {reply}");
        reply["result"].clone()
    }

    /// Repeats `request` until `pred` holds for its result.
    pub fn poll(
        &mut self,
        what: &str,
        request: Value,
        mut pred: impl FnMut(&Value) -> bool,
    ) -> Value {
        let start = Instant::now();
        loop {
            let reply = self.call(request.clone());
            if reply["type"] == "result" && pred(&reply["result"]) {
                return reply["result"].clone();
            }
            assert!(
                start.elapsed() < self.limit,
                "timed out waiting for {what}; last reply {reply}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The next event of `kind` on `subscription` for which `pred` holds.
    pub fn event(
        &self,
        subscription: &Value,
        kind: &str,
        mut pred: impl FnMut(&Value) -> bool,
    ) -> Value {
        self.wait(&format!("a `{kind}` event"), |v| {
            v["type"] == "event"
                && v["subscription"] == *subscription
                && v["event"]["type"] == kind
                && pred(&v["event"])
        })["event"]
            .clone()
    }

    /// Closes stdin (end of the native messaging port).
    pub fn close_stdin(&mut self) {
        drop(self.stdin.take());
    }

    /// Closes stdin and waits up to `limit` for the child to exit.
    pub fn close_and_wait(&mut self, limit: Duration) -> Option<ExitStatus> {
        self.close_stdin();
        let deadline = Instant::now() + limit;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Some(status);
            }
            if Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Closes stdin: the host must end cleanly (exit 0) within the limit.
    pub fn finish(mut self) {
        match self.close_and_wait(self.limit) {
            Some(status) => assert!(status.success(), "host exited with {status}"),
            None => panic!("host did not exit after EOF"),
        }
    }
}

impl Drop for HostClient {
    fn drop(&mut self) {
        if self.close_and_wait(Duration::from_secs(5)).is_none() {
            kill_child(&mut self.child);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_round_trip_through_the_hosts_codec() {
        let mut bytes = encode_frame(br#"{"id":1}"#);
        bytes.extend(encode_frame(br#"{"id":2}"#));
        assert_eq!(
            decode_frames(&bytes),
            vec![json!({"id": 1}), json!({"id": 2})]
        );
    }
}
