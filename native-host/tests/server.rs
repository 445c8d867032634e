//! The server run loop in memory (tokio duplex) with a fake sampler and audio server.

#![allow(clippy::unwrap_used)] // tests may unwrap (house style)

use std::sync::Arc;
use std::time::Duration;

use std::collections::VecDeque;

use micoff_native::deps::{
    AudioServer, BoxFuture, CpuTicker, Deps, HostError, Launch, Limits, Sampler, TickOutcome,
};
use micoff_native::framing::{FrameCodec, FrameReader, FrameWriter};
use micoff_native::protocol::*;
use serde_json::{json, Value};
use tokio::io::{DuplexStream, ReadHalf, WriteHalf};
use tokio::sync::{mpsc, Mutex, Notify};

fn report(window_ms: u64, threads: usize) -> CpuReport {
    let threads: Vec<ThreadRates> = (0..threads)
        .map(|i| ThreadRates {
            tid: 1000 + i as u32,
            comm: format!("thread-with-a-long-name-{i:06}"),
            rates: Rates {
                cpu_pct: i as f64,
                user_pct: 0.0,
                system_pct: 0.0,
                run_time_ns: Some(1),
                run_time_pct: Some(0.0),
                wakeups_per_s: Some(0.0),
                voluntary_ctxt_per_s: Some(0.0),
                involuntary_ctxt_per_s: Some(0.0),
                read_syscalls_per_s: None,
                write_syscalls_per_s: None,
            },
            window_ms: None,
        })
        .collect();
    CpuReport {
        window_ms: window_ms as f64,
        total_cpu_pct: 1.0,
        threads_omitted: 0,
        gone_pids: vec![],
        roles: vec![],
        processes: vec![ProcessRates {
            pid: 100,
            ppid: 1,
            comm: "chromium".into(),
            role: Role::Renderer,
            rates: Rates {
                cpu_pct: 1.0,
                user_pct: 1.0,
                system_pct: 0.0,
                run_time_ns: Some(1),
                run_time_pct: Some(0.0),
                wakeups_per_s: Some(10.0),
                voluntary_ctxt_per_s: Some(10.0),
                involuntary_ctxt_per_s: Some(0.0),
                read_syscalls_per_s: None,
                write_syscalls_per_s: None,
            },
            thread_count: threads.len(),
            threads,
        }],
    }
}

#[derive(Default)]
struct FakeSampler {
    /// When set, cpu_sample waits for a notification (a "long" window).
    gate: Option<Arc<Notify>>,
    threads: usize,
    /// When set, a `cpu` subscription's ticker gives exactly these outcomes, then its loop dies.
    ticks: Option<Vec<Result<TickOutcome, HostError>>>,
    /// The `cpu` subscription's ticker finds none of its processes.
    gone: bool,
    /// When set, cpu_sample fails with this.
    fail: Option<HostError>,
}

impl Sampler for FakeSampler {
    fn processes(&self, browser_pid: Option<u32>) -> BoxFuture<Result<Processes, HostError>> {
        Box::pin(async move {
            match browser_pid {
                Some(99) => Err(HostError::NotFound("pid 99".into())),
                Some(13) => panic!("unlucky pid 13"),
                // A browser with thousands of processes and long command lines.
                Some(7000) => Ok(Processes {
                    browser: None,
                    processes: (0..7000)
                        .map(|i| ProcessInfo {
                            pid: 10_000 + i,
                            ppid: 1,
                            comm: "chromium".into(),
                            role: Role::Renderer,
                            family: Some(BrowserFamily::Chromium),
                            cmdline: "x".repeat(CMDLINE_SUMMARY_CHARS),
                        })
                        .collect(),
                    audio_server: vec![],
                    processes_omitted: 0,
                }),
                _ => Ok(Processes {
                    browser: None,
                    processes: vec![],
                    audio_server: vec![],
                    processes_omitted: 0,
                }),
            }
        })
    }
    fn cpu_sample(
        &self,
        _pids: Option<Vec<u32>>,
        window: Duration,
    ) -> BoxFuture<Result<CpuReport, HostError>> {
        let gate = self.gate.clone();
        let threads = self.threads;
        let fail = self.fail.clone();
        Box::pin(async move {
            if let Some(e) = fail {
                return Err(e);
            }
            match gate {
                Some(gate) => gate.notified().await,
                None => tokio::time::sleep(window.min(Duration::from_millis(300))).await,
            }
            Ok(report(window.as_millis() as u64, threads))
        })
    }
    fn browsers(
        &self,
        _family: Option<BrowserFamily>,
    ) -> BoxFuture<Result<Vec<ProcessInfo>, HostError>> {
        Box::pin(async { Ok(vec![]) })
    }
    fn cpu_ticker(self: Arc<Self>, pids: Option<Vec<u32>>) -> Box<dyn CpuTicker> {
        if pids.as_deref() == Some(&[13]) {
            panic!("unlucky pids [13]"); // a bug inside the subscription's own loop
        }
        Box::new(FakeTicker {
            script: self.ticks.clone().map(VecDeque::from),
            threads: self.threads,
            gone: self.gone,
            ticks: 0,
            last: tokio::time::Instant::now(),
        })
    }
}

/// The fake's ticker: the script's outcomes in order (and a panic once it is over, a loop that
/// dies), or else a report per tick after a baseline (none found when `gone`).
struct FakeTicker {
    script: Option<VecDeque<Result<TickOutcome, HostError>>>,
    threads: usize,
    gone: bool,
    ticks: u64,
    last: tokio::time::Instant,
}

impl CpuTicker for FakeTicker {
    fn tick(
        mut self: Box<Self>,
    ) -> BoxFuture<(Box<dyn CpuTicker>, Result<TickOutcome, HostError>)> {
        Box::pin(async move {
            self.ticks += 1;
            let window_ms = self.last.elapsed().as_millis() as u64;
            self.last = tokio::time::Instant::now();
            let outcome = match &mut self.script {
                Some(script) => script.pop_front().expect("the script is over"),
                None if self.gone => Ok(TickOutcome {
                    report: None,
                    found: 0,
                }),
                None => Ok(TickOutcome {
                    report: (self.ticks > 1).then(|| report(window_ms, self.threads)),
                    found: 1,
                }),
            };
            (self as Box<dyn CpuTicker>, outcome)
        })
    }
    fn set_pids(&mut self, _pids: Vec<u32>) {}
}

struct FakeAudio {
    events: Mutex<Option<mpsc::Receiver<HostEvent>>>,
}

impl AudioServer for FakeAudio {
    fn server_info(&self) -> BoxFuture<Result<AudioServerInfo, HostError>> {
        Box::pin(async {
            Err(HostError::AudioServerUnavailable(
                "no server in tests".into(),
            ))
        })
    }
    fn streams(&self) -> BoxFuture<Result<Vec<AudioStream>, HostError>> {
        Box::pin(async { Ok(vec![]) })
    }
    fn subscribe(&self) -> Result<mpsc::Receiver<HostEvent>, HostError> {
        self.events
            .try_lock()
            .ok()
            .and_then(|mut e| e.take())
            .ok_or_else(|| HostError::AudioServerUnavailable("already taken".into()))
    }
}

struct Client {
    reader: FrameReader<ReadHalf<DuplexStream>>,
    writer: FrameWriter<WriteHalf<DuplexStream>>,
    server: tokio::task::JoinHandle<Result<(), micoff_native::server::ServerError>>,
}

impl Client {
    async fn send(&mut self, v: Value) {
        self.writer
            .write_frame(v.to_string().as_bytes())
            .await
            .unwrap();
    }
    async fn send_raw(&mut self, body: &[u8]) {
        self.writer.write_frame(body).await.unwrap();
    }
    async fn recv(&mut self) -> Value {
        let body = tokio::time::timeout(Duration::from_secs(10), self.reader.next_frame())
            .await
            .expect("reply within 10 s")
            .unwrap()
            .expect("a frame");
        serde_json::from_slice(&body).unwrap()
    }
}

/// Capture latency's folders for these tests: under a home that does not exist, so a status finds
/// no file of micoff's and nothing here reads or changes the user's own.
fn latency_paths() -> Result<micoff_native::latency::Paths, String> {
    micoff_native::latency::Paths::from_env(&std::collections::HashMap::from([(
        "HOME".to_owned(),
        "/nonexistent/micoff-test-home".to_owned(),
    )]))
}

/// The server's dependencies, all fakes: `sampler`, and an audio server that sends `events`.
fn fake_deps(
    sampler: FakeSampler,
    events: Option<mpsc::Receiver<HostEvent>>,
    launch: Launch,
    limits: Limits,
) -> Deps {
    Deps {
        sampler: Arc::new(sampler),
        audio: Arc::new(FakeAudio {
            events: Mutex::new(events),
        }),
        doctor: None,
        latency_paths: latency_paths(),
        power_roots: micoff_native::power::Roots::system(),
        launch,
        limits,
    }
}

fn start_with(
    sampler: FakeSampler,
    events: Option<mpsc::Receiver<HostEvent>>,
    limits: Limits,
) -> Client {
    let (client, server) = tokio::io::duplex(1 << 16);
    let (server_read, server_write) = tokio::io::split(server);
    let (client_read, client_write) = tokio::io::split(client);
    let deps = fake_deps(
        sampler,
        events,
        Launch::from_args(&["chrome-extension://ipgdconbmedmelnlpalblnicflhpfkim/".to_owned()])
            .unwrap(),
        limits,
    );
    let server = tokio::spawn(micoff_native::server::run(server_read, server_write, deps));
    Client {
        // The browser's side reads host frames (up to 1 MiB).
        reader: FrameReader::new(
            client_read,
            FrameCodec {
                max_incoming_bytes: micoff_native::framing::MAX_OUTGOING_BYTES,
                ..FrameCodec::default()
            },
        ),
        writer: FrameWriter::new(client_write, FrameCodec::default()),
        server,
    }
}

fn start() -> Client {
    start_with(FakeSampler::default(), None, Limits::default())
}

#[tokio::test]
async fn version_reports_the_launching_extension() {
    let mut c = start();
    c.send(json!({"id": 1, "type": "version"})).await;
    let r = c.recv().await;
    assert_eq!(r["id"], 1);
    assert_eq!(r["type"], "result");
    assert_eq!(r["result"]["protocol_version"], 1);
    assert_eq!(
        r["result"]["extension_id"],
        "ipgdconbmedmelnlpalblnicflhpfkim"
    );
    assert_eq!(r["result"]["browser_family"], "chromium");
    assert_eq!(r["result"]["pid"], std::process::id());
}

#[tokio::test]
async fn bad_requests_get_error_replies_and_the_server_keeps_going() {
    let mut c = start();
    c.send_raw(b"{nope").await;
    assert_eq!(c.recv().await["error"]["code"], 1);
    c.send_raw(&[0xff, 0xfe]).await;
    assert_eq!(c.recv().await["error"]["code"], 1);
    c.send_raw(b"").await;
    let r = c.recv().await;
    assert_eq!(
        (r["id"].clone(), r["error"]["code"].clone()),
        (Value::Null, json!(1))
    );
    c.send(json!({"id": 2, "type": "frobnicate"})).await;
    let r = c.recv().await;
    assert_eq!(
        (r["id"].clone(), r["error"]["code"].clone()),
        (json!(2), json!(3))
    );
    c.send(json!({"id": 3, "type": "cpu_sample", "window_ms": "x"}))
        .await;
    let r = c.recv().await;
    assert_eq!(
        (r["id"].clone(), r["error"]["code"].clone()),
        (json!(3), json!(2))
    );
    c.send(json!({"id": 4, "type": "processes", "browser_pid": 99}))
        .await;
    assert_eq!(c.recv().await["error"]["code"], 6);
    c.send(json!({"id": 5, "type": "audio_server_info"})).await;
    assert_eq!(c.recv().await["error"]["code"], 5);
    c.send(json!({"id": 6, "type": "doctor"})).await;
    assert_eq!(c.recv().await["error"]["code"], 9);
    c.send(json!({"id": 7, "type": "audio_streams"})).await;
    assert_eq!(c.recv().await["result"], json!({"streams": []}));
}

#[tokio::test]
async fn a_long_cpu_sample_does_not_block_other_requests() {
    let gate = Arc::new(Notify::new());
    let mut c = start_with(
        FakeSampler {
            gate: Some(gate.clone()),
            threads: 1,
            ..FakeSampler::default()
        },
        None,
        Limits::default(),
    );
    c.send(json!({"id": 1, "type": "cpu_sample", "window_ms": 2000}))
        .await;
    c.send(json!({"id": 2, "type": "version"})).await;
    assert_eq!(c.recv().await["id"], 2);
    gate.notify_one();
    let r = c.recv().await;
    assert_eq!(r["id"], 1);
    assert_eq!(r["result"]["window_ms"].as_f64(), Some(2000.0));
}

#[tokio::test]
async fn too_many_requests_in_flight_is_busy() {
    let gate = Arc::new(Notify::new());
    let limits = Limits {
        max_in_flight: 1,
        ..Limits::default()
    };
    let mut c = start_with(
        FakeSampler {
            gate: Some(gate.clone()),
            threads: 0,
            ..FakeSampler::default()
        },
        None,
        limits,
    );
    c.send(json!({"id": 1, "type": "cpu_sample", "window_ms": 100}))
        .await;
    c.send(json!({"id": 2, "type": "cpu_sample", "window_ms": 100}))
        .await;
    let r = c.recv().await;
    assert_eq!(
        (r["id"].clone(), r["error"]["code"].clone()),
        (json!(2), json!(8))
    );
    gate.notify_one();
    assert_eq!(c.recv().await["id"], 1);
}

#[tokio::test]
async fn oversized_cpu_reports_are_trimmed_and_other_results_refused() {
    let limits = Limits {
        codec: FrameCodec {
            max_outgoing_bytes: 4096,
            ..FrameCodec::default()
        },
        ..Limits::default()
    };
    let mut c = start_with(
        FakeSampler {
            gate: None,
            threads: 500,
            ..FakeSampler::default()
        },
        None,
        limits,
    );
    c.send(json!({"id": 1, "type": "cpu_sample", "window_ms": 100}))
        .await;
    let r = c.recv().await;
    let result = &r["result"];
    let kept = result["processes"][0]["threads"].as_array().unwrap().len() as u64;
    assert!(kept > 0 && kept < 500);
    assert_eq!(kept + result["threads_omitted"].as_u64().unwrap(), 500);
    // The busiest thread survives.
    assert_eq!(
        result["processes"][0]["threads"][0]["cpu_pct"].as_f64(),
        Some(499.0)
    );
}

#[tokio::test]
async fn subscribe_and_unsubscribe() {
    let (tx, rx) = mpsc::channel(8);
    let mut c = start_with(FakeSampler::default(), Some(rx), Limits::default());
    c.send(json!({"id": 1, "type": "subscribe", "topic": "audio"}))
        .await;
    let r = c.recv().await;
    let sub = r["result"]["subscription"].as_u64().unwrap();
    tx.send(HostEvent::AudioDisconnected {
        reason: "gone".into(),
    })
    .await
    .unwrap();
    let e = c.recv().await;
    assert_eq!(
        e,
        json!({"type": "event", "subscription": sub, "event": {"type": "audio_disconnected", "reason": "gone"}})
    );

    c.send(json!({"id": 2, "type": "subscribe", "topic": "cpu", "interval_ms": 250}))
        .await;
    let r = c.recv().await;
    let cpu_sub = r["result"]["subscription"].as_u64().unwrap();
    assert_ne!(cpu_sub, sub);
    let e = c.recv().await;
    assert_eq!(
        (e["subscription"].as_u64(), e["event"]["type"].as_str()),
        (Some(cpu_sub), Some("cpu"))
    );
    // The report covers one interval (the window since the previous tick).
    let window_ms = e["event"]["report"]["window_ms"].as_f64().unwrap();
    assert!((200.0..1000.0).contains(&window_ms), "{window_ms}");

    c.send(json!({"id": 3, "type": "unsubscribe", "subscription": cpu_sub}))
        .await;
    // Events queued before the reply may still arrive; after the reply none does.
    loop {
        let r = c.recv().await;
        if r["type"] == "result" {
            assert_eq!(
                r,
                json!({"id": 3, "type": "result", "result": {"subscription": cpu_sub}})
            );
            break;
        }
        assert_eq!(r["subscription"].as_u64(), Some(cpu_sub));
    }
    c.send(json!({"id": 4, "type": "unsubscribe", "subscription": cpu_sub}))
        .await;
    assert_eq!(c.recv().await["error"]["code"], 6);
    c.send(json!({"id": 5, "type": "version"})).await;
    assert_eq!(c.recv().await["id"], 5);
}

#[tokio::test]
async fn subscription_limit_is_busy() {
    let limits = Limits {
        max_subscriptions: 1,
        ..Limits::default()
    };
    let mut c = start_with(FakeSampler::default(), None, limits);
    c.send(json!({"id": 1, "type": "subscribe", "topic": "cpu", "interval_ms": 60000}))
        .await;
    assert!(c.recv().await["result"]["subscription"].is_u64());
    c.send(json!({"id": 2, "type": "subscribe", "topic": "cpu", "interval_ms": 60000}))
        .await;
    assert_eq!(c.recv().await["error"]["code"], 8);
}

#[tokio::test]
async fn eof_ends_cleanly_after_answering_what_was_asked() {
    let mut c = start();
    c.send(json!({"id": 1, "type": "subscribe", "topic": "cpu", "interval_ms": 60000}))
        .await;
    c.send(json!({"id": 2, "type": "version"})).await;
    c.writer.shutdown().await.unwrap();
    let mut ids = vec![c.recv().await["id"].clone(), c.recv().await["id"].clone()];
    ids.sort_by_key(|v| v.as_u64());
    assert_eq!(ids, vec![json!(1), json!(2)]);
    assert!(c.reader.next_frame().await.unwrap().is_none());
    assert!(c.server.await.unwrap().is_ok());
}

/// After a clean end of input a long request (a 60 s `cpu_sample`) no longer holds the host: it
/// gets the grace, then is cancelled and answered `8 busy`, and the server ends at once. Before,
/// it waited for every running request (57 s for a 60 s sample).
#[tokio::test]
async fn end_of_input_cancels_a_long_request_and_ends_promptly() {
    let sampler = FakeSampler {
        gate: Some(Arc::new(Notify::new())), // never notified: a window that never ends
        ..FakeSampler::default()
    };
    let mut c = start_with(sampler, None, Limits::default());
    c.send(json!({"id": 1, "type": "cpu_sample", "window_ms": 60000}))
        .await;
    c.send(json!({"id": 2, "type": "version"})).await;
    c.writer.shutdown().await.unwrap();
    let ended = tokio::time::timeout(Duration::from_secs(5), &mut c.server)
        .await
        .expect("the server ends within 5 s of the end of input");
    assert!(ended.unwrap().is_ok());
    let mut replies = [c.recv().await, c.recv().await];
    replies.sort_by_key(|r| r["id"].as_u64());
    assert_eq!(replies[0]["error"]["code"], 8, "{}", replies[0]);
    assert!(
        replies[0]["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("cancelled"),
        "{}",
        replies[0]
    );
    assert_eq!(replies[1]["type"], "result", "the quick one still answered");
    assert!(c.reader.next_frame().await.unwrap().is_none());
}

/// Nobody reads the host's output (a full pipe): a write waits at most `write_deadline`, then the
/// host ends, with the input still open or after it ended. Before, it waited forever.
#[tokio::test]
async fn output_nobody_reads_does_not_hold_the_host() {
    for close_input in [false, true] {
        let limits = Limits {
            write_deadline: Duration::from_millis(300),
            ..Limits::default()
        };
        // A pipe of 1 KiB that the client never reads.
        let (client, server) = tokio::io::duplex(1024);
        let (server_read, server_write) = tokio::io::split(server);
        let (_client_read, client_write) = tokio::io::split(client);
        let deps = fake_deps(FakeSampler::default(), None, Launch::default(), limits);
        let server = tokio::spawn(micoff_native::server::run(server_read, server_write, deps));
        let mut writer = FrameWriter::new(client_write, FrameCodec::default());
        // Far more than the pipe holds: 7000-process replies.
        for id in 0..3 {
            let request = json!({"id": id, "type": "processes", "browser_pid": 7000});
            writer
                .write_frame(request.to_string().as_bytes())
                .await
                .unwrap();
        }
        if close_input {
            writer.shutdown().await.unwrap();
        }
        let ended = tokio::time::timeout(Duration::from_secs(5), server)
            .await
            .unwrap_or_else(|_| panic!("still running 5 s on (input closed: {close_input})"));
        let e = ended.unwrap().unwrap_err();
        assert!(
            matches!(e, micoff_native::server::ServerError::Write(_)),
            "{e}"
        );
        drop(writer);
    }
}

#[tokio::test]
async fn a_bad_length_ends_the_server_with_an_error() {
    let (client, server) = tokio::io::duplex(1 << 16);
    let (server_read, server_write) = tokio::io::split(server);
    let (_client_read, mut client_write) = tokio::io::split(client);
    let deps = fake_deps(
        FakeSampler::default(),
        None,
        Launch::default(),
        Limits::default(),
    );
    let server = tokio::spawn(micoff_native::server::run(server_read, server_write, deps));
    use tokio::io::AsyncWriteExt;
    client_write
        .write_all(&u32::MAX.to_ne_bytes())
        .await
        .unwrap();
    let result = tokio::time::timeout(Duration::from_secs(10), server)
        .await
        .unwrap()
        .unwrap();
    assert!(result.is_err());
}

#[tokio::test]
async fn a_panicking_handler_still_gets_an_error_reply() {
    let mut c = start();
    c.send(json!({"id": 41, "type": "processes", "browser_pid": 13}))
        .await;
    let r = c.recv().await;
    assert_eq!(
        (
            r["id"].clone(),
            r["type"].clone(),
            r["error"]["code"].clone()
        ),
        (json!(41), json!("error"), json!(7)),
        "{r}"
    );
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("unlucky pid 13"),
        "{r}"
    );
    // The connection goes on, and the in-flight slot was given back.
    c.send(json!({"id": 42, "type": "version"})).await;
    assert_eq!(c.recv().await["id"], 42);
}

#[tokio::test]
async fn cpu_unavailable_once_then_reports_then_subscription_ended() {
    let gone = || Err(HostError::NotFound("no browser and no audio server".into()));
    let found = |report: Option<CpuReport>, found| Ok(TickOutcome { report, found });
    let sampler = FakeSampler {
        ticks: Some(vec![
            gone(),
            gone(),
            gone(),
            found(Some(report(1000, 1)), 1),
            gone(),
            found(None, 0),
        ]),
        ..FakeSampler::default()
    };
    let mut c = start_with(sampler, None, Limits::default());
    c.send(json!({"id": 1, "type": "subscribe", "topic": "cpu", "pids": [5], "interval_ms": 250}))
        .await;
    let sub = c.recv().await["result"]["subscription"].as_u64().unwrap();
    let mut kinds = Vec::new();
    loop {
        let e = c.recv().await;
        assert_eq!(e["subscription"].as_u64(), Some(sub), "{e}");
        let kind = e["event"]["type"].as_str().unwrap().to_owned();
        if kind == "cpu_unavailable" {
            assert_eq!(e["event"]["code"], 6, "{e}");
            assert!(e["event"]["reason"].is_string(), "{e}");
        }
        if kind == "subscription_ended" {
            assert_eq!(
                e["event"],
                json!({"type": "subscription_ended", "code": 6,
                       "reason": "not found: none of the processes [5] exists any more"})
            );
            break;
        }
        kinds.push(kind);
    }
    assert_eq!(kinds, ["cpu_unavailable", "cpu", "cpu_unavailable"]);
    // The subscription is gone.
    c.send(json!({"id": 2, "type": "unsubscribe", "subscription": sub}))
        .await;
    assert_eq!(c.recv().await["error"]["code"], 6);
}

#[tokio::test]
async fn a_source_that_stops_ends_the_subscription_with_a_reason() {
    // The cpu loop dies after one report (its ticker panics).
    let sampler = FakeSampler {
        ticks: Some(vec![
            Ok(TickOutcome {
                report: None,
                found: 1,
            }),
            Ok(TickOutcome {
                report: Some(report(1000, 1)),
                found: 1,
            }),
        ]),
        ..FakeSampler::default()
    };
    let (tx, rx) = mpsc::channel(8);
    let mut c = start_with(sampler, Some(rx), Limits::default());
    c.send(json!({"id": 1, "type": "subscribe", "topic": "cpu"}))
        .await;
    let cpu = c.recv().await["result"]["subscription"].as_u64().unwrap();
    assert_eq!(c.recv().await["event"]["type"], "cpu");
    let e = c.recv().await;
    assert_eq!(
        (e["subscription"].as_u64(), e["event"]["type"].as_str()),
        (Some(cpu), Some("subscription_ended"))
    );
    assert_eq!(e["event"]["code"], 7);

    // The audio source goes away.
    c.send(json!({"id": 2, "type": "subscribe", "topic": "audio"}))
        .await;
    let audio = c.recv().await["result"]["subscription"].as_u64().unwrap();
    drop(tx);
    let e = c.recv().await;
    assert_eq!(
        (e["subscription"].as_u64(), e["event"]["type"].as_str()),
        (Some(audio), Some("subscription_ended"))
    );
    assert!(e["event"]["reason"].as_str().unwrap().contains("audio"));
}

// Paused time: the producer's retry sleeps and the quiet stretch below pass instantly.
#[tokio::test(start_paused = true)]
async fn a_cpu_subscription_on_pids_that_are_gone_ends_once() {
    // The one loop: explicit pids that are not found -> ended.
    let sampler = FakeSampler {
        gone: true,
        ..FakeSampler::default()
    };
    let mut c = start_with(sampler, None, Limits::default());
    c.send(json!({"id": 1, "type": "subscribe", "topic": "cpu", "pids": [7], "interval_ms": 250}))
        .await;
    c.recv().await;
    let e = c.recv().await;
    assert_eq!(e["event"]["type"], "subscription_ended", "{e}");
    assert_eq!(e["event"]["code"], 6);
    // Without pids the same failure is "unavailable, still looking", sent once.
    c.send(json!({"id": 2, "type": "subscribe", "topic": "cpu", "interval_ms": 250}))
        .await;
    c.recv().await;
    let e = c.recv().await;
    assert_eq!(e["event"]["type"], "cpu_unavailable", "{e}");
    c.send(json!({"id": 3, "type": "version"})).await;
    // Nothing else arrives for the subscription while it stays unavailable.
    let r = c.recv().await;
    assert_eq!(r["id"], 3, "{r}");
    // Several retry intervals later (virtual time), still nothing but the reply.
    tokio::time::sleep(Duration::from_secs(3)).await;
    c.send(json!({"id": 4, "type": "version"})).await;
    assert_eq!(c.recv().await["id"], 4);
}

#[tokio::test]
async fn a_subscription_that_panics_ends_with_a_reason_and_the_host_goes_on() {
    let mut c = start();
    c.send(json!({"id": 1, "type": "subscribe", "topic": "cpu", "pids": [13]}))
        .await;
    let sub = c.recv().await["result"]["subscription"].as_u64().unwrap();
    let e = c.recv().await;
    assert_eq!(e["subscription"].as_u64(), Some(sub), "{e}");
    assert_eq!(e["event"]["type"], "subscription_ended", "{e}");
    assert_eq!(e["event"]["code"], 7, "{e}");
    assert!(
        e["event"]["reason"]
            .as_str()
            .unwrap()
            .contains("unlucky pids [13]"),
        "{e}"
    );
    // It is forgotten, and the connection and other subscriptions go on.
    c.send(json!({"id": 2, "type": "unsubscribe", "subscription": sub}))
        .await;
    assert_eq!(c.recv().await["error"]["code"], 6);
    c.send(json!({"id": 3, "type": "subscribe", "topic": "cpu", "interval_ms": 250}))
        .await;
    let r = c.recv().await;
    assert_eq!(r["id"], 3, "{r}");
    let e = c.recv().await;
    assert_eq!(e["event"]["type"], "cpu", "{e}");
}

#[tokio::test]
async fn a_processes_reply_is_trimmed_to_one_frame_and_counts_what_it_left_out() {
    let mut c = start();
    c.send(json!({"id": 1, "type": "processes", "browser_pid": 7000}))
        .await;
    let r = c.recv().await;
    assert_eq!(r["type"], "result", "{}", r["error"]);
    let kept = r["result"]["processes"].as_array().unwrap();
    let omitted = r["result"]["processes_omitted"].as_u64().unwrap();
    assert!(omitted > 0 && !kept.is_empty());
    assert_eq!(kept.len() as u64 + omitted, 7000);
    // The tree's start (root first) is what stays.
    assert_eq!(kept[0]["pid"], 10_000);
    assert!(r.to_string().len() <= micoff_native::framing::MAX_OUTGOING_BYTES);
}

#[tokio::test]
async fn an_invalid_value_is_not_echoed_back_whole() {
    let mut c = start();
    let long = "A".repeat(20_000);
    for (id, request) in [
        (
            Some(1),
            json!({"id": 1, "type": "cpu_sample", "window_ms": long}),
        ),
        (None, json!({"id": long, "type": "version"})),
        (Some(3), json!({"id": 3, "type": long})),
        (
            Some(4),
            json!({"id": 4, "type": "subscribe", "topic": long}),
        ),
    ] {
        c.send(request).await;
        let r = c.recv().await;
        assert_eq!(r["type"], "error");
        assert_eq!(r["id"].as_u64(), id);
        let message = r["error"]["message"].as_str().unwrap();
        assert!(
            message.chars().count() <= MAX_ERROR_MESSAGE_CHARS,
            "{} chars: {message}",
            message.chars().count(),
        );
        // At most 64 characters of the caller's value (security.md); before, serde's message
        // quoted ~208 of them.
        let quoted = message.split(|c| c != 'A').map(str::len).max().unwrap_or(0);
        assert!(quoted <= 64, "{quoted} characters quoted: {message}");
        assert!(message.contains("AAAA"), "says what was wrong: {message}");
    }
}

#[tokio::test]
async fn a_cpu_event_of_3000_threads_is_held_to_64_kib_with_the_busiest_threads() {
    let sampler = FakeSampler {
        threads: 3000,
        ..FakeSampler::default()
    };
    let mut c = start_with(sampler, None, Limits::default());
    c.send(json!({"id": 1, "type": "subscribe", "topic": "cpu", "interval_ms": 250}))
        .await;
    c.recv().await;
    let e = c.recv().await;
    assert_eq!(e["event"]["type"], "cpu", "{e}");
    let bytes = e.to_string().len();
    assert!(
        bytes <= micoff_native::server::MAX_CPU_EVENT_BYTES,
        "{bytes} bytes"
    );
    let report = &e["event"]["report"];
    let p = &report["processes"][0];
    let kept = p["threads"].as_array().unwrap().len() as u64;
    assert_eq!(kept + report["threads_omitted"].as_u64().unwrap(), 3000);
    assert!(kept >= 100, "{kept}");
    // The busiest first, and the process keeps its real totals.
    assert_eq!(p["threads"][0]["cpu_pct"].as_f64(), Some(2999.0));
    assert_eq!(p["thread_count"], 3000);
}

#[tokio::test]
async fn power_answers_a_reading_or_why_not() {
    let mut c = start();
    c.send(json!({"id": 1, "type": "power"})).await;
    let r = c.recv().await;
    assert_eq!(r["type"], "result", "{r}");
    let typed = micoff_native::protocol::typed_result("power", &r["result"]).unwrap();
    assert_eq!(typed, r["result"]);
    // Measured over one second; a figure, or a reason for each source that gave none.
    assert!(r["result"]["window_ms"].as_f64().unwrap() >= 1000.0, "{r}");
    if r["result"]["source"].is_null() {
        assert!(r["result"]["watts"].is_null(), "{r}");
        assert!(
            !r["result"]["unavailable"].as_array().unwrap().is_empty(),
            "{r}"
        );
    } else {
        assert!(r["result"]["watts"].as_f64().unwrap() > 0.0, "{r}");
    }
}

#[tokio::test]
async fn latency_requests_without_a_server() {
    let mut c = start();
    // Status still answers: the server is unknown, nothing granted to show.
    c.send(json!({"id": 1, "type": "latency_status"})).await;
    let r = c.recv().await;
    assert_eq!(r["type"], "result", "{r}");
    assert_eq!(r["result"]["server"]["kind"], "unknown");
    assert_eq!(r["result"]["streams"], json!([]));
    let typed = micoff_native::protocol::typed_result("latency_status", &r["result"]).unwrap();
    assert_eq!(typed, r["result"]);
    // Setting needs the server (the mechanism depends on it): nothing is written.
    c.send(json!({"id": 2, "type": "latency_set", "capture_ms": 40}))
        .await;
    let r = c.recv().await;
    assert_eq!(
        (r["id"].clone(), r["error"]["code"].clone()),
        (json!(2), json!(5)),
        "{r}"
    );
    // A dry run still shows the plans: both, since nothing of micoff's is configured.
    c.send(json!({"id": 5, "type": "latency_set", "capture_ms": 40, "dry_run": true}))
        .await;
    let r = c.recv().await;
    assert_eq!(r["type"], "result", "{r}");
    assert_eq!(r["result"]["mechanism"], Value::Null, "{r}");
    let message = r["result"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("no audio server reachable"),
        "{message}"
    );
    assert!(message.contains("pipewire_pulse_rule") && message.contains("launch_environment"));
    // A missing capture_ms is not a reset; out of range is refused before anything runs.
    c.send(json!({"id": 3, "type": "latency_set"})).await;
    assert_eq!(c.recv().await["error"]["code"], 2);
    c.send(json!({"id": 4, "type": "latency_set", "capture_ms": 500}))
        .await;
    assert_eq!(c.recv().await["error"]["code"], 2);
}

/// During a call the host samples the audio path into its history and sends nothing; the popup asks
/// for the history, then subscribes to each sample (1 s) with its report while it is open.
#[tokio::test(start_paused = true)]
async fn the_history_is_kept_without_a_word_until_asked_then_streamed_while_subscribed() {
    let mut c = start_with(
        FakeSampler {
            threads: 3,
            ..FakeSampler::default()
        },
        None,
        Limits::default(),
    );
    c.send(json!({"id": 1, "type": "phase", "phase": "capturing"}))
        .await;
    let r = c.recv().await;
    assert_eq!(
        r,
        json!({"id": 1, "type": "result", "result": {"saved_cpu_s": 0.0}})
    );
    // 21 s of a call: not one frame.
    let silent = tokio::time::timeout(Duration::from_secs(21), c.reader.next_frame()).await;
    assert!(silent.is_err(), "the host sent {silent:?} unasked");

    c.send(json!({"id": 2, "type": "history"})).await;
    let h = c.recv().await;
    assert_eq!(h["id"], 2);
    let h = &h["result"];
    assert_eq!(h["phase"], "capturing");
    assert_eq!(h["span_ms"], 300_000);
    let windows: Vec<f64> = h["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["window_ms"].as_f64().unwrap())
        .collect();
    assert_eq!(windows, [5000.0; 4]);

    c.send(json!({"id": 3, "type": "subscribe", "topic": "history", "interval_ms": 1000}))
        .await;
    let sub = c.recv().await["result"]["subscription"].as_u64().unwrap();
    let first = c.recv().await;
    assert_eq!(first["subscription"], sub);
    assert_eq!(first["event"]["type"], "history");
    assert_eq!(
        first["event"]["history"]["points"]
            .as_array()
            .unwrap()
            .len(),
        4
    );
    assert_eq!(first["event"]["report"], Value::Null);
    for _ in 0..3 {
        let e = c.recv().await;
        assert_eq!(e["event"]["type"], "history");
        let points = e["event"]["history"]["points"].as_array().unwrap();
        assert_eq!(points.len(), 1);
        assert!(points[0]["window_ms"].as_f64().unwrap() <= 1000.0);
        assert_eq!(
            e["event"]["report"]["processes"][0]["threads"]
                .as_array()
                .unwrap()
                .len(),
            3
        );
    }
    c.send(json!({"id": 4, "type": "unsubscribe", "subscription": sub}))
        .await;
    let r = c.recv().await;
    assert_eq!(
        (r["id"].clone(), r["type"].clone()),
        (json!(4), json!("result"))
    );
    let silent = tokio::time::timeout(Duration::from_secs(12), c.reader.next_frame()).await;
    assert!(
        silent.is_err(),
        "the host sent {silent:?} after the unsubscribe"
    );

    c.send(json!({"id": 5, "type": "phase", "phase": "idle"}))
        .await;
    assert_eq!(c.recv().await["result"]["saved_cpu_s"], 0.0);
    c.send(json!({"id": 6, "type": "phase", "phase": "loud"}))
        .await;
    assert_eq!(c.recv().await["error"]["code"], 2);
}
