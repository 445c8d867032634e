//! Arbitrary byte streams as the browser's side of the pipe, through every layer that reads them:
//! the pure frame decoder (`FrameCodec`); the async `FrameReader` fed in fuzzed chunk sizes (it
//! must yield what the codec yields); the whole server (`server::run`) with fake dependencies,
//! where every frame written is a JSON reply or event and every request gets exactly one reply.
//!
//! Input layout: byte 0 = how many chunk-size bytes follow (0..=15); those bytes are the chunk
//! sizes the reader hands out in turn (0 counts as 1); the rest is the stream.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};
use std::time::Duration;

use micoff_native::deps::{
    AudioServer, BoxFuture, CpuTicker, Deps, HostError, Launch, Limits, Sampler, TickOutcome,
};
use micoff_native::framing::{FrameCodec, FrameReader};
use micoff_native::protocol::{
    AudioServerInfo, AudioStream, BrowserFamily, CpuReport, ErrorCode, HostEvent, ProcessInfo,
    Processes,
};
use tokio::io::{AsyncRead, AsyncReadExt, ReadBuf};
use tokio::sync::mpsc;

const MAX_IN: usize = 1 << 16;

fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a tokio runtime")
    })
}

/// Hands `data` out in chunks of the given sizes, then EOF.
struct Chunked {
    data: Vec<u8>,
    pos: usize,
    sizes: Vec<u8>,
    turn: usize,
}

impl AsyncRead for Chunked {
    fn poll_read(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = &mut *self;
        let want = this
            .sizes
            .get(this.turn % this.sizes.len().max(1))
            .map_or(4096, |s| usize::from(*s).max(1));
        this.turn += 1;
        let n = want.min(this.data.len() - this.pos).min(buf.remaining());
        buf.put_slice(&this.data[this.pos..this.pos + n]);
        this.pos += n;
        Poll::Ready(Ok(()))
    }
}

/// Answers at once, without touching the machine.
struct FakeSampler;

impl Sampler for FakeSampler {
    fn processes(&self, browser_pid: Option<u32>) -> BoxFuture<Result<Processes, HostError>> {
        Box::pin(async move {
            match browser_pid {
                Some(pid) => Err(HostError::NotFound(format!("no process {pid}"))),
                None => Ok(Processes {
                    browser: None,
                    processes: vec![],
                    processes_omitted: 0,
                    audio_server: vec![],
                }),
            }
        })
    }
    fn cpu_sample(
        &self,
        pids: Option<Vec<u32>>,
        _window: Duration,
    ) -> BoxFuture<Result<CpuReport, HostError>> {
        Box::pin(async move {
            Err(HostError::NotFound(format!(
                "none of the processes {pids:?} exists"
            )))
        })
    }
    fn browsers(
        &self,
        _family: Option<BrowserFamily>,
    ) -> BoxFuture<Result<Vec<ProcessInfo>, HostError>> {
        Box::pin(async { Ok(vec![]) })
    }
    fn cpu_ticker(self: Arc<Self>, _pids: Option<Vec<u32>>) -> Box<dyn CpuTicker> {
        Box::new(GoneTicker)
    }
}

/// Finds none of its processes: explicit pids end, the default set stays unavailable.
struct GoneTicker;

impl CpuTicker for GoneTicker {
    fn tick(self: Box<Self>) -> BoxFuture<(Box<dyn CpuTicker>, Result<TickOutcome, HostError>)> {
        Box::pin(async move {
            let outcome = Ok(TickOutcome {
                report: None,
                found: 0,
            });
            (self as Box<dyn CpuTicker>, outcome)
        })
    }
    fn set_pids(&mut self, _pids: Vec<u32>) {}
}

struct FakeAudio;

impl AudioServer for FakeAudio {
    fn server_info(&self) -> BoxFuture<Result<AudioServerInfo, HostError>> {
        Box::pin(async { Err(HostError::AudioServerUnavailable("fuzzing".into())) })
    }
    fn streams(&self) -> BoxFuture<Result<Vec<AudioStream>, HostError>> {
        Box::pin(async { Ok(vec![]) })
    }
    fn subscribe(&self) -> Result<mpsc::Receiver<HostEvent>, HostError> {
        Err(HostError::AudioServerUnavailable("fuzzing".into()))
    }
}

fn codec() -> FrameCodec {
    FrameCodec {
        max_incoming_bytes: MAX_IN,
        ..FrameCodec::default()
    }
}

/// The pure decoder's view: the frames, and whether the stream ended cleanly.
fn decode_all(stream: &[u8]) -> (Vec<Vec<u8>>, bool) {
    let codec = codec();
    let mut buf = stream.to_vec();
    let mut frames = Vec::new();
    let mut taken = 0usize;
    loop {
        match codec.decode(&mut buf) {
            Ok(Some(body)) => {
                taken += 4 + body.len();
                assert!(taken <= stream.len());
                frames.push(body);
            }
            Ok(None) => {
                return match codec.decode_eof(&mut buf) {
                    Ok(None) => (frames, true),
                    Ok(Some(_)) => unreachable!("decode_eof found a frame decode missed"),
                    Err(_) => (frames, false),
                };
            }
            Err(_) => return (frames, false),
        }
    }
}

/// The target. Signature: number of frames (capped), clean end, replies vs. errors seen.
pub fn framing(data: &[u8]) -> u64 {
    framing_with(data, Arc::new(FakeSampler))
}

/// [`framing`] with the given sampler behind the server (a test plants a panicking one). A handler
/// panicked when the server's own count says so ([`micoff_native::server::handler_panics`]), never
/// by a reply's text: an error message echoes the request, which the input chooses.
pub fn framing_with(data: &[u8], sampler: Arc<dyn Sampler>) -> u64 {
    let Some((&n, rest)) = data.split_first() else {
        return 0;
    };
    let n = usize::from(n % 16).min(rest.len());
    let (sizes, stream) = rest.split_at(n);
    let (frames, clean) = decode_all(stream);
    for body in &frames {
        if let Err(e) = micoff_native::protocol::decode_request(body) {
            assert!(ErrorCode::from_code(e.code.code()).is_some());
        }
    }
    let chunked = || Chunked {
        data: stream.to_vec(),
        pos: 0,
        sizes: sizes.to_vec(),
        turn: 0,
    };

    runtime().block_on(async {
        // The async reader yields what the codec yields, however the bytes are split.
        let mut reader = FrameReader::new(chunked(), codec());
        let mut read = Vec::new();
        let read_clean = loop {
            match reader.next_frame().await {
                Ok(Some(body)) => read.push(body),
                Ok(None) => break true,
                Err(_) => break false,
            }
        };
        assert_eq!(read, frames);
        assert_eq!(read_clean, clean);

        // The whole server over the same stream.
        let deps = Deps {
            sampler,
            audio: Arc::new(FakeAudio),
            doctor: None,
            // A home that does not exist: a fuzzed `latency_set` reset finds nothing of the
            // user's to remove (a set is refused: the fake audio server is unreachable).
            latency_paths: micoff_native::latency::Paths::from_env(&HashMap::from([(
                "HOME".to_owned(),
                "/nonexistent/micoff-fuzz-home".to_owned(),
            )])),
            power_roots: micoff_native::power::Roots::system(),
            launch: Launch::default(),
            limits: Limits {
                codec: codec(),
                ..Limits::default()
            },
        };
        let (server_out, mut client_in) = tokio::io::duplex(1 << 16);
        let collect = tokio::spawn(async move {
            let mut out = Vec::new();
            let _ = client_in.read_to_end(&mut out).await;
            out
        });
        let panics_before = micoff_native::server::handler_panics();
        let served = micoff_native::server::run(chunked(), server_out, deps).await;
        let panicked = micoff_native::server::handler_panics() - panics_before;
        assert_eq!(panicked, 0, "a request handler panicked ({panicked} times)");
        assert_eq!(served.is_ok(), clean);
        let mut out = collect.await.expect("the collector");
        let (mut results, mut errors) = (0usize, 0usize);
        let out_codec = FrameCodec {
            max_incoming_bytes: micoff_native::framing::MAX_OUTGOING_BYTES,
            ..FrameCodec::default()
        };
        while let Some(body) = out_codec
            .decode(&mut out)
            .expect("host frames are well formed")
        {
            let v: serde_json::Value = serde_json::from_slice(&body).expect("replies are JSON");
            match v["type"].as_str() {
                Some("result") => results += 1,
                Some("error") => {
                    errors += 1;
                    let code = v["error"]["code"].as_u64().expect("an error code");
                    let known = u32::try_from(code).ok().and_then(ErrorCode::from_code);
                    assert!(known.is_some(), "{v}");
                }
                Some("event") => {}
                _ => panic!("not a reply: {v}"),
            }
        }
        assert!(out.is_empty(), "a partial frame on stdout");
        let replies = results + errors;
        if clean {
            assert_eq!(replies, frames.len(), "one reply per request");
        } else {
            // A frame whose header is over the limit (or broken) gets one error of its own before
            // the host stops reading: at most one reply more than the frames before it.
            assert!(
                replies <= frames.len() + 1,
                "{replies} replies to {} frames",
                frames.len()
            );
        }
        (frames.len().min(8) as u64) << 1
            | u64::from(clean)
            | (results.min(8) as u64) << 8
            | (errors.min(8) as u64) << 16
    })
}
