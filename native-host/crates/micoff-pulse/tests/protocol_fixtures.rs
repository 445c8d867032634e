//! The host carries `Stream` and `ServerInfo` on the wire as they are; the shared protocol
//! fixtures (read by the TS tests too) must decode into them. Replies that carry views of their own
//! under the same keys (the capture-latency status has a `server` summary and browser `streams`)
//! are the host's types, checked by the host's fixture test.
#![allow(clippy::unwrap_used)]

use std::path::PathBuf;

use micoff_pulse::{ServerInfo, Stream};
use serde_json::Value;

fn fixtures() -> Vec<(String, Value)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../fixtures/protocol");
    let mut out = Vec::new();
    for file in ["events.json", "responses.json"] {
        let text = std::fs::read_to_string(dir.join(file))
            .unwrap_or_else(|e| panic!("read {}: {e}", dir.join(file).display()));
        let cases: Vec<Value> = serde_json::from_str(&text).unwrap();
        for case in cases {
            let own_views = matches!(
                case["request_type"].as_str(),
                Some("latency_status" | "latency_set")
            );
            if case["valid"] == Value::Bool(true) && !own_views {
                let name = case["name"].as_str().unwrap_or("?").to_owned();
                out.push((name, case["json"].clone()));
            }
        }
    }
    out
}

fn collect<'a>(v: &'a Value, key: &str, out: &mut Vec<&'a Value>) {
    match v {
        Value::Object(map) => {
            for (k, child) in map {
                if k == key {
                    match child {
                        Value::Array(items) => out.extend(items.iter()),
                        other => out.push(other),
                    }
                } else {
                    collect(child, key, out);
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|i| collect(i, key, out)),
        _ => {}
    }
}

#[test]
fn fixture_streams_decode_into_stream() {
    let mut n = 0;
    for (name, json) in fixtures() {
        let mut found = Vec::new();
        collect(&json, "stream", &mut found);
        collect(&json, "streams", &mut found);
        for v in found {
            let s: Stream = serde_json::from_value(v.clone())
                .unwrap_or_else(|e| panic!("fixture `{name}`: {e}\n{v:#}"));
            // Every field the fixture names comes back the same.
            let back = serde_json::to_value(&s).unwrap();
            for (k, want) in v.as_object().unwrap() {
                assert_eq!(&back[k], want, "fixture `{name}` field `{k}`");
            }
            n += 1;
        }
    }
    assert!(n >= 3, "only {n} stream fixtures found");
}

#[test]
fn fixture_server_infos_decode_into_server_info() {
    let mut n = 0;
    for (name, json) in fixtures() {
        let mut candidates = Vec::new();
        collect(&json, "server", &mut candidates);
        if json["result"]["server_name"].is_string() {
            candidates.push(&json["result"]);
        }
        for v in candidates {
            let info: ServerInfo = serde_json::from_value(v.clone())
                .unwrap_or_else(|e| panic!("fixture `{name}`: {e}\n{v:#}"));
            assert_eq!(info.server_name, v["server_name"].as_str().unwrap());
            assert_eq!(
                u64::from(info.sample_rate_hz),
                v["sample_rate_hz"].as_u64().unwrap()
            );
            n += 1;
        }
    }
    assert!(n >= 2, "only {n} server-info fixtures found");
}
