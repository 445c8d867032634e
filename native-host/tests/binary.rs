//! The built binary in native messaging mode: frames over its real stdin/stdout.

#![allow(clippy::unwrap_used)] // tests may unwrap (house style)

use std::io::{Read, Write};
use std::process::{Command, Stdio};

fn frame(body: &str) -> Vec<u8> {
    let mut out = (body.len() as u32).to_ne_bytes().to_vec();
    out.extend_from_slice(body.as_bytes());
    out
}

fn read_frames(mut bytes: &[u8]) -> Vec<serde_json::Value> {
    let mut out = Vec::new();
    while !bytes.is_empty() {
        let len = u32::from_ne_bytes(bytes[..4].try_into().unwrap()) as usize;
        out.push(serde_json::from_slice(&bytes[4..4 + len]).unwrap());
        bytes = &bytes[4 + len..];
    }
    out
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
    let mut child = host(&["chrome-extension://ipgdconbmedmelnlpalblnicflhpfkim/"]);
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
    let mut child = Command::new(env!("CARGO_BIN_EXE_micoff-host"))
        .arg("chrome-extension://ipgdconbmedmelnlpalblnicflhpfkim/")
        .env("PULSE_SERVER", "unix:/nonexistent/micoff-test/native")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for (id, kind) in [(1, "audio_server_info"), (2, "audio_streams")] {
        stdin
            .write_all(&frame(&format!(r#"{{"id":{id},"type":"{kind}"}}"#)))
            .unwrap();
    }
    stdin
        .write_all(&frame(r#"{"id":3,"type":"subscribe","topic":"audio"}"#))
        .unwrap();
    // Wait for the three answers (and the subscription's first event), then close.
    let mut stdout = child.stdout.take().unwrap();
    let mut frames = Vec::new();
    while frames.len() < 4 {
        let mut len = [0u8; 4];
        stdout.read_exact(&mut len).unwrap();
        let mut body = vec![0u8; u32::from_ne_bytes(len) as usize];
        stdout.read_exact(&mut body).unwrap();
        frames.push(serde_json::from_slice::<serde_json::Value>(&body).unwrap());
    }
    drop(stdin);
    assert_eq!(child.wait().unwrap().code(), Some(0));
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
