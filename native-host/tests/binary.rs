//! The built binary in native messaging mode: frames over its real stdin/stdout.

#![allow(clippy::unwrap_used)] // tests may unwrap (house style)

use std::io::{Read, Write};
use std::process::{Command, Stdio};

use micoff_testkit::host::{chrome_origin, decode_frames as read_frames};
use micoff_testkit::HostClient;

fn frame(body: &str) -> Vec<u8> {
    micoff_testkit::encode_frame(body.as_bytes())
}

fn host(args: &[&str]) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_micoff-host"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

#[test]
fn chrome_launch_answers_frames_and_exits_0_on_eof() {
    let mut child = host(&[&chrome_origin()]);
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(&frame(r#"{"id":1,"type":"version"}"#))
        .unwrap();
    stdin
        .write_all(&frame(r#"{"id":2,"type":"nope"}"#))
        .unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut frames = read_frames(&out.stdout);
    frames.sort_by_key(|f| f["id"].as_u64());
    assert_eq!(frames.len(), 2);
    assert_eq!(
        frames[0]["result"]["extension_id"],
        "ipgdconbmedmelnlpalblnicflhpfkim"
    );
    assert_eq!(
        frames[0]["result"]["host_version"],
        env!("CARGO_PKG_VERSION")
    );
    assert_eq!(frames[1]["error"]["code"], 3);
}

/// The real binary, input closed while a 60 s `cpu_sample` runs: it answers that request
/// `8 busy` (cancelled) and exits 0 within seconds. Before, it sat out the window (57 s left).
#[test]
fn end_of_input_during_a_long_sample_exits_promptly() {
    let mut child = host(&[&chrome_origin()]);
    let mut stdin = child.stdin.take().unwrap();
    let me = std::process::id();
    stdin
        .write_all(&frame(&format!(
            r#"{{"id":1,"type":"cpu_sample","window_ms":60000,"pids":[{me}]}}"#
        )))
        .unwrap();
    let started = std::time::Instant::now();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let took = started.elapsed();
    assert!(took < std::time::Duration::from_secs(10), "{took:?}");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let frames = read_frames(&out.stdout);
    assert_eq!(frames.len(), 1, "{frames:?}");
    assert_eq!(frames[0]["id"], 1);
    assert_eq!(frames[0]["error"]["code"], 8, "{:?}", frames[0]);
}

#[test]
fn firefox_launch_and_truncated_frame_exits_1_with_only_frames_on_stdout() {
    let mut child = host(&["/tmp/org.micoff.host.json", "micoff@micoff.org"]);
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(&frame(r#"{"id":1,"type":"version"}"#))
        .unwrap();
    stdin.write_all(&100u32.to_ne_bytes()).unwrap();
    stdin.write_all(b"{\"id\"").unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let frames = read_frames(&out.stdout);
    assert_eq!(frames.len(), 1);
    assert_eq!(frames[0]["result"]["browser_family"], "firefox");
    assert!(String::from_utf8_lossy(&out.stderr).contains("input ended inside a frame body"));
}

#[test]
fn audio_requests_without_a_server_are_error_replies() {
    // No server at this address: the host's own audio client answers `audio_server_unavailable`
    // (it once recursed into itself here and overflowed its stack).
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_micoff-host"));
    cmd.arg(chrome_origin())
        .env("PULSE_SERVER", "unix:/nonexistent/micoff-test/native")
        .stderr(Stdio::null());
    let mut client = HostClient::spawn(cmd).unwrap();
    for kind in ["audio_server_info", "audio_streams"] {
        client.send(serde_json::json!({ "type": kind }));
    }
    client.send(serde_json::json!({"type": "subscribe", "topic": "audio"}));
    // Wait for the three answers (and the subscription's first event), then close.
    let mut frames: Vec<serde_json::Value> = Vec::new();
    while frames.len() < 4 {
        frames.push(client.wait("the host's answers", |_| true));
    }
    let status = client.close_and_wait(std::time::Duration::from_secs(20));
    assert_eq!(status.and_then(|s| s.code()), Some(0));
    let by_id = |id: u64| frames.iter().find(|f| f["id"] == id).unwrap().clone();
    assert_eq!(by_id(1)["error"]["code"], 5, "{frames:?}");
    assert_eq!(by_id(2)["error"]["code"], 5, "{frames:?}");
    assert!(by_id(3)["result"]["subscription"].is_u64(), "{frames:?}");
    let event = frames.iter().find(|f| f["type"] == "event").unwrap();
    assert_eq!(event["event"]["type"], "audio_disconnected", "{frames:?}");
}

#[test]
fn help_is_available_on_every_command() {
    for cmd in [
        &["--help"][..],
        &["sample", "--help"],
        &["top", "--help"],
        &["install", "--help"],
    ] {
        let mut child = host(cmd);
        let mut text = String::new();
        child
            .stdout
            .take()
            .unwrap()
            .read_to_string(&mut text)
            .unwrap();
        assert_eq!(child.wait().unwrap().code(), Some(0), "{cmd:?}");
        assert!(text.contains("Usage"), "{cmd:?}: {text}");
    }
    let status = host(&["--no-such-flag"]).wait().unwrap();
    assert_eq!(status.code(), Some(2));
}

/// `--pid` takes Linux's process ids, 1 to `PID_MAX_LIMIT` - 1: said so in `--help`, and the
/// limit itself is a usage error in the one style.
#[test]
fn pid_range_is_linuxs_in_help_and_check() {
    let out = host(&["sample", "--help"]).wait_with_output().unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(help.contains("Range: 1-4194303."), "{help}");
    assert!(!help.contains("4194304"), "{help}");
    for cmd in ["sample", "top"] {
        let out = host(&[cmd, "--pid", "4194304"]).wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{cmd}: {stderr}");
        assert!(
            stderr.starts_with(&format!("micoff-host {cmd}: ")),
            "{cmd}: {stderr}"
        );
        assert!(
            stderr.contains("out of range; give 1-4194303"),
            "{cmd}: {stderr}"
        );
    }
}

#[test]
fn version_verbose_names_commit_libpulse_and_target() {
    let out = host(&["--version"]).wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("micoff-host {}\n", env!("CARGO_PKG_VERSION"))
    );
    let out = host(&["--version", "--verbose"])
        .wait_with_output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4, "{text}");
    assert!(lines[1].starts_with("commit: "), "{text}");
    // The libpulse loaded at run time: `major.minor.micro`.
    let libpulse = lines[2].strip_prefix("libpulse: ").unwrap_or("");
    assert!(
        libpulse.split('.').count() >= 2 && libpulse.split('.').all(|p| p.parse::<u32>().is_ok()),
        "{text}"
    );
    assert_eq!(
        lines[3],
        format!("target: {}", micoff_native::TARGET),
        "{text}"
    );
}

/// A foreign caller (another extension's id, a Firefox add-on that is not micoff) gets one
/// `forbidden` error frame and the host exits 1 without answering its requests.
#[test]
fn a_foreign_caller_gets_one_forbidden_error_and_no_answers() {
    for args in [
        &["chrome-extension://aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/"][..],
        &["/tmp/org.micoff.host.json", "evil@example.org"][..],
        // micoff's Firefox id where Chromium's origin is expected.
        &["chrome-extension://micoff@micoff.org/"][..],
    ] {
        let mut child = host(args);
        let mut stdin = child.stdin.take().unwrap();
        // The host may have closed its stdin already: a failed write is fine.
        let _ = stdin.write_all(&frame(r#"{"id":1,"type":"processes"}"#));
        drop(stdin);
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let frames = read_frames(&out.stdout);
        assert_eq!(frames.len(), 1, "{args:?}: {frames:?}");
        assert_eq!(frames[0]["type"], "error");
        assert_eq!(frames[0]["id"], serde_json::Value::Null);
        assert_eq!(frames[0]["error"]["code"], 10, "{:?}", frames[0]);
        let message = frames[0]["error"]["message"].as_str().unwrap();
        assert!(message.contains("is not micoff"), "{message}");
    }
}

/// Peak resident memory of a live process, in KiB (`VmHWM` in `/proc/<pid>/status`).
fn vm_hwm_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// A request body of exactly `size` bytes: a `version` padded with an unknown field full of empty
/// arrays (what costs a generic JSON tree the most per byte).
fn padded_version(id: u64, size: usize) -> Vec<u8> {
    let head = format!(r#"{{"id":{id},"type":"version","pad":["#);
    let tail = "]}";
    let mut body = head.into_bytes();
    let room = size - body.len() - tail.len();
    let pairs = (room + 1) / 3; // "[]," per entry, the last without a comma
    for i in 0..pairs {
        body.extend_from_slice(if i + 1 == pairs { b"[]" } else { b"[]," });
    }
    body.resize(size - tail.len(), b' ');
    body.extend_from_slice(tail.as_bytes());
    assert_eq!(body.len(), size);
    body
}

/// The host in native messaging mode for micoff's Chromium origin, stderr silenced, no audio
/// server (nothing on the machine's own server is touched).
fn host_command() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_micoff-host"));
    cmd.arg(chrome_origin())
        .env("PULSE_SERVER", "unix:/nonexistent/micoff-test/native")
        .stderr(Stdio::null());
    cmd
}

/// The largest request the host accepts costs it little memory and is answered; one byte more is
/// refused from its header with a `too_large` error at once (no stall, nothing buffered).
#[test]
fn the_largest_allowed_request_stays_small_and_a_larger_one_is_refused_at_once() {
    use micoff_native::framing::MAX_INCOMING_BYTES;
    let mut client = HostClient::spawn(host_command()).unwrap();
    let pid = client.pid();
    let started = std::time::Instant::now();
    for id in 1..=4 {
        client
            .write_frame(&padded_version(id, MAX_INCOMING_BYTES))
            .unwrap();
    }
    let mut ids: Vec<u64> = (0..4)
        .map(|_| client.wait("a reply", |_| true)["id"].as_u64().unwrap())
        .collect();
    ids.sort_unstable();
    assert_eq!(ids, vec![1, 2, 3, 4]);
    let hwm = vm_hwm_kib(pid);
    assert!(
        hwm < 64 * 1024,
        "peak RSS {hwm} KiB after the largest allowed requests"
    );

    // One byte over the limit: refused from the header. The body is never read.
    let too_long = (MAX_INCOMING_BYTES + 1) as u32;
    client.write_raw(&too_long.to_ne_bytes()).unwrap();
    let refused = client.wait("the refusal", |_| true);
    assert_eq!(refused["type"], "error");
    assert_eq!(refused["id"], serde_json::Value::Null);
    assert_eq!(refused["error"]["code"], 4, "{refused}");
    assert!(refused["error"]["message"]
        .as_str()
        .unwrap()
        .contains(&MAX_INCOMING_BYTES.to_string()));
    assert_eq!(
        client.next_body(std::time::Duration::from_secs(10)),
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected),
        "the host ends after it"
    );
    let status = client.close_and_wait(std::time::Duration::from_secs(10));
    assert_eq!(status.and_then(|s| s.code()), Some(1));
    assert!(
        started.elapsed() < std::time::Duration::from_secs(10),
        "took {:?}",
        started.elapsed()
    );
}

/// 300 threads of this test process, sleeping and waking every 200 ms, until dropped.
struct Sleepers {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Sleepers {
    fn start(n: usize) -> Self {
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let threads = (0..n)
            .map(|_| {
                let stop = std::sync::Arc::clone(&stop);
                std::thread::spawn(move || {
                    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                        std::thread::sleep(std::time::Duration::from_millis(200));
                    }
                })
            })
            .collect();
        Self { stop, threads }
    }
}

impl Drop for Sleepers {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// Eight `cpu` subscriptions on a process with 300 threads under `ulimit -n 256`: the host shares
/// one open-file budget among them (sized from the limit), so every subscription keeps reporting;
/// none of them takes "too many open files" for "the process is gone".
#[test]
fn eight_cpu_subscriptions_under_ulimit_256_all_keep_reporting() {
    let _sleepers = Sleepers::start(300);
    // The host's log, said when it does not end cleanly.
    let log = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("eight-subscriptions.log");
    let me = std::process::id();
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(r#"ulimit -n 256 && exec "$0" "$1""#)
        .arg(env!("CARGO_BIN_EXE_micoff-host"))
        .arg(chrome_origin())
        .stderr(Stdio::from(std::fs::File::create(&log).unwrap()));
    let mut client = HostClient::spawn(cmd).unwrap();
    for _ in 1..=8 {
        client.send(serde_json::json!(
            {"type": "subscribe", "topic": "cpu", "interval_ms": 250, "pids": [me]}
        ));
    }
    let mut reports = std::collections::HashMap::<u64, usize>::new();
    while reports.len() < 8 || reports.values().any(|n| *n < 3) {
        let f = client.wait("every subscription's 3 reports", |_| true);
        if f["type"] != "event" {
            assert_eq!(f["type"], "result", "{f}");
            continue;
        }
        let event = &f["event"];
        assert_eq!(event["type"], "cpu", "{f}");
        let p = &event["report"]["processes"][0];
        assert_eq!(p["pid"], me, "{f}");
        assert!(p["thread_count"].as_u64().unwrap() >= 300, "{p}");
        *reports
            .entry(f["subscription"].as_u64().unwrap())
            .or_default() += 1;
    }
    // Each subscription ended before the input: the host then has nothing left to write, and its
    // exit does not depend on how fast this process reads (output still queued at the end of input
    // gets a short grace, then the host exits 1).
    for sub in reports.keys() {
        client.result(serde_json::json!({"type": "unsubscribe", "subscription": sub}));
    }
    let status = client.close_and_wait(std::time::Duration::from_secs(20));
    assert_eq!(
        status.and_then(|s| s.code()),
        Some(0),
        "the host's stderr:\n{}",
        std::fs::read_to_string(&log).unwrap_or_default()
    );
}

/// `cmd` started under the open-file limits `soft`/`hard`, with `taken` more fds open (copies of
/// its stderr, inherited across exec) than a program normally starts with.
fn with_nofile_limits(cmd: &mut Command, soft: u64, hard: u64, taken: usize) {
    use std::os::unix::process::CommandExt;
    // SAFETY: between fork and exec the closure calls only setrlimit and fcntl, which are
    // async-signal-safe, and allocates nothing.
    unsafe {
        cmd.pre_exec(move || {
            let rl = libc::rlimit {
                rlim_cur: soft,
                rlim_max: hard,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &rl) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            for _ in 0..taken {
                // The lowest free fd from 3 on, without close-on-exec: the host starts with it.
                if libc::fcntl(2, libc::F_DUPFD, 3) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
}

/// `(soft, hard)` of a live process's open-file limit, from `/proc/<pid>/limits`.
fn nofile_limits(pid: u32) -> (u64, u64) {
    let limits = std::fs::read_to_string(format!("/proc/{pid}/limits")).unwrap();
    let line = limits
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .unwrap();
    let mut n = line["Max open files".len()..]
        .split_whitespace()
        .map(|v| v.parse::<u64>().unwrap());
    (n.next().unwrap(), n.next().unwrap())
}

/// Started with a soft open-file limit far below its hard one (the usual 1024 under a high hard
/// limit), the host raises the soft limit to the hard one before it serves anything.
#[test]
fn the_host_raises_its_soft_open_file_limit_to_the_hard_one() {
    let mut cmd = host_command();
    with_nofile_limits(&mut cmd, 100, 2000, 0);
    let mut client = HostClient::spawn(cmd).unwrap();
    let version = client.result(serde_json::json!({"type": "version"}));
    assert_eq!(version["pid"], client.pid());
    assert_eq!(nofile_limits(client.pid()), (2000, 2000));
    client.finish();
}

/// A real "too many open files": the host starts with most of its fds already taken (its budget,
/// sized from the limit, is larger than what is really free), so keeping a 300-thread process's
/// files open runs into EMFILE. That is a retryable `busy`, for a subscription (`cpu_unavailable`)
/// and for a `cpu_sample` alike, never `not_found` ("the process is gone", code 6), and the host
/// goes on answering.
#[test]
fn running_out_of_fds_for_real_is_busy_not_process_gone() {
    let _sleepers = Sleepers::start(300);
    let me = std::process::id();
    let mut cmd = host_command();
    // 256 fds: a budget of 128 kept-open files; about 40 are really free.
    with_nofile_limits(&mut cmd, 256, 256, 210);
    let mut client = HostClient::spawn(cmd).unwrap();
    client.result(serde_json::json!({"type": "version"}));
    let sub = client.result(serde_json::json!(
        {"type": "subscribe", "topic": "cpu", "interval_ms": 250, "pids": [me]}
    ))["subscription"]
        .clone();
    let event = client.wait("the subscription's first event", |f| {
        f["type"] == "event" && f["subscription"] == sub
    })["event"]
        .clone();
    assert_eq!(event["type"], "cpu_unavailable", "{event}");
    assert_eq!(event["code"], 8, "{event}");
    assert!(
        event["reason"]
            .as_str()
            .unwrap()
            .contains("too many open files"),
        "{event}"
    );
    // The subscription's sampler now holds every free fd: a one-off sample runs out at once.
    let reply = client.call(serde_json::json!(
        {"type": "cpu_sample", "window_ms": 100, "pids": [me]}
    ));
    assert_eq!(reply["type"], "error", "{reply}");
    assert_eq!(reply["error"]["code"], 8, "{reply}");
    // Still serving, and the subscription was never ended.
    client.result(serde_json::json!({"type": "version"}));
    client.result(serde_json::json!({"type": "unsubscribe", "subscription": sub}));
    client.finish();
}
