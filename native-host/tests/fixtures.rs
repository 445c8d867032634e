//! The shared protocol fixtures (fixtures/protocol/*.json), also run by
//! extension/src/shared/protocol.test.ts: every valid case decodes and round-trips, every invalid
//! request gets its documented error code, every invalid response/event is refused.

#![allow(clippy::unwrap_used)] // tests may unwrap (house style)

use std::path::PathBuf;

use micoff_native::protocol::{decode_request, typed_result, HostToExtension};
use serde_json::Value;

fn fixture_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fixtures/protocol")
}

struct Case {
    file: String,
    name: String,
    kind: String,
    valid: bool,
    text: String,
    request_type: Option<String>,
    expect_error_code: Option<u64>,
}

fn cases() -> Vec<Case> {
    let mut out = Vec::new();
    let mut files: Vec<_> = std::fs::read_dir(fixture_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    assert_eq!(files.len(), 3, "requests, responses, events");
    for path in files {
        let list: Vec<Value> =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        for c in list {
            let text = match (c.get("json"), c.get("json_text")) {
                (Some(json), None) => json.to_string(),
                (None, Some(Value::String(text))) => text.clone(),
                _ => panic!("{}: exactly one of json/json_text: {c}", path.display()),
            };
            out.push(Case {
                file: path.file_name().unwrap().to_string_lossy().into_owned(),
                name: c["name"].as_str().unwrap().to_owned(),
                kind: c["kind"].as_str().unwrap().to_owned(),
                valid: c["valid"].as_bool().unwrap(),
                text,
                request_type: c
                    .get("request_type")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
                expect_error_code: c.get("expect_error_code").and_then(Value::as_u64),
            });
        }
    }
    out
}

/// JSON equality where numbers compare by value (3 == 3.0). Roles are an open set that Rust reads
/// as `other` when it does not know them, so a `role` of `other` matches any role string.
fn same(a: &Value, b: &Value) -> bool {
    same_at(None, a, b)
}

fn same_at(key: Option<&str>, a: &Value, b: &Value) -> bool {
    let other = Value::String("other".into());
    if key == Some("role") && a.is_string() && b.is_string() && (*a == other || *b == other) {
        return true;
    }
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same_at(key, a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_at(Some(k), v, w)))
        }
        _ => a == b,
    }
}

fn check_host_message(c: &Case) -> Result<(), String> {
    let value: Value = serde_json::from_str(&c.text).map_err(|e| e.to_string())?;
    let message: HostToExtension =
        serde_json::from_value(value.clone()).map_err(|e| e.to_string())?;
    match (&message, c.kind.as_str()) {
        (HostToExtension::Event { .. }, "event") => {}
        (HostToExtension::Result { .. } | HostToExtension::Error { .. }, "response") => {}
        _ => return Err(format!("a {} fixture decoded as {message:?}", c.kind)),
    }
    let back = serde_json::to_value(&message).map_err(|e| e.to_string())?;
    if !same(&back, &value) {
        return Err(format!("round trip changed it: {back}"));
    }
    if let (HostToExtension::Result { result, .. }, Some(request_type)) =
        (&message, &c.request_type)
    {
        let typed = typed_result(request_type, result)?;
        if !same(&typed, result) {
            return Err(format!("typed round trip changed the result: {typed}"));
        }
    }
    Ok(())
}

#[test]
fn fixtures_match_the_rust_protocol() {
    let cases = cases();
    assert!(cases.len() >= 60, "only {} cases", cases.len());
    let mut failures = Vec::new();
    for c in &cases {
        let label = format!(
            "{} / {} ({})",
            c.file,
            c.name,
            if c.valid { "valid" } else { "invalid" }
        );
        match c.kind.as_str() {
            "request" => match (decode_request(c.text.as_bytes()), c.valid) {
                (Ok(request), true) => {
                    // Re-encode and decode again: the same request.
                    let again = serde_json::to_vec(&request).unwrap();
                    match decode_request(&again) {
                        Ok(r) if r == request => {}
                        other => failures.push(format!("{label}: re-encoded as {other:?}")),
                    }
                }
                (Ok(request), false) => failures.push(format!("{label}: accepted as {request:?}")),
                (Err(e), true) => failures.push(format!("{label}: rejected: {e}")),
                (Err(e), false) => {
                    if Some(u64::from(e.code.code())) != c.expect_error_code {
                        failures.push(format!(
                            "{label}: code {} ({}), fixture expects {:?}",
                            e.code.code(),
                            e.message,
                            c.expect_error_code
                        ));
                    }
                }
            },
            "response" | "event" => match (check_host_message(c), c.valid) {
                (Ok(()), true) | (Err(_), false) => {}
                (Ok(()), false) => failures.push(format!("{label}: accepted")),
                (Err(e), true) => failures.push(format!("{label}: {e}")),
            },
            other => failures.push(format!("{label}: unknown kind {other}")),
        }
    }
    assert!(
        failures.is_empty(),
        "{} fixture failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
