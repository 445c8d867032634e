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
