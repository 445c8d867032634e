//! The decoder's rejections and the wire shape of requests and error codes.

#![allow(clippy::unwrap_used)]

use super::*;

#[test]
fn request_serializes_back_to_the_wire_shape() {
    let req = Request {
        id: 3,
        body: RequestBody::Subscribe(Topic::Cpu {
            interval_ms: Some(500),
            pids: None,
        }),
    };
    let json = serde_json::to_value(&req).unwrap();
    assert_eq!(
        json,
        serde_json::json!({"id": 3, "type": "subscribe", "topic": "cpu", "interval_ms": 500})
    );
    let back = decode_request(json.to_string().as_bytes()).unwrap();
    assert_eq!(back, req);
}

#[test]
fn error_codes_are_stable() {
    let codes: Vec<(u32, &str)> = ErrorCode::ALL
        .iter()
        .map(|c| (c.code(), c.name()))
        .collect();
    assert_eq!(
        codes,
        vec![
            (1, "invalid_json"),
            (2, "invalid_request"),
            (3, "unknown_type"),
            (4, "too_large"),
            (5, "audio_server_unavailable"),
            (6, "not_found"),
            (7, "internal"),
            (8, "busy"),
            (9, "not_implemented"),
            (10, "forbidden"),
        ]
    );
}

#[test]
fn rejection_keeps_the_id_when_it_was_readable() {
    let err = decode_request(br#"{"id": 9, "type": "cpu_sample", "window_ms": 5}"#).unwrap_err();
    assert_eq!((err.id, err.code), (Some(9), ErrorCode::InvalidRequest));
    let err = decode_request(b"\xff\xfe").unwrap_err();
    assert_eq!((err.id, err.code), (None, ErrorCode::InvalidJson));
}

#[test]
fn tags_and_fields_are_checked_like_serde_fields() {
    let reject = |text: &str| decode_request(text.as_bytes()).unwrap_err();
    let e = reject(r#"{"id":1,"type":"version","type":"version"}"#);
    assert_eq!((e.id, e.code), (Some(1), ErrorCode::InvalidRequest));
    assert_eq!(
        e.message,
        "invalid `version` request: duplicate field `type`"
    );
    let e = reject(r#"{"id":2,"type":"subscribe","topic":"cpu","topic":"audio"}"#);
    assert_eq!(
        e.message,
        "invalid `subscribe` request: duplicate field `topic`"
    );
    // `topic` is an ordinary (ignored) field of other requests.
    assert!(decode_request(br#"{"id":3,"type":"version","topic":1,"topic":2}"#).is_ok());
    let e = reject(r#"{"id":4,"type":"subscribe"}"#);
    assert_eq!(
        e.message,
        "invalid `subscribe` request: missing field `topic`"
    );
    let e = reject(r#"{"id":5,"type":"subscribe","topic":"disk"}"#);
    assert_eq!(
        e.message,
        "invalid `subscribe` request: unknown variant `disk`, expected one of `cpu`, `audio`, `history`"
    );
    let e = reject(r#"{"id":6,"type":"subscribe","topic":7}"#);
    assert_eq!(e.code, ErrorCode::InvalidRequest);
    // serde's own messages, without serde_json's position.
    let e = reject(r#"{"id":7,"type":"cpu_sample"}"#);
    assert_eq!(
        e.message,
        "invalid `cpu_sample` request: missing field `window_ms`"
    );
    let e = reject(r#"{"id":8,"type":"cpu_sample","window_ms":"soon"}"#);
    assert_eq!(
        e.message,
        "invalid `cpu_sample` request: invalid type: string \"soon\", expected u64"
    );
    let e = reject(r#"{"id":9,"type":"latency_set","dry_run":true}"#);
    assert_eq!(
        e.message,
        "invalid `latency_set` request: missing field `capture_ms`"
    );
    let e = reject(r#"{"id":10,"type":"unsubscribe","subscription":1,"subscription":2}"#);
    assert_eq!(
        e.message,
        "invalid `unsubscribe` request: duplicate field `subscription`"
    );
    // The tag may come anywhere, fields in any order.
    let r = decode_request(
        br#"{"pids":[4],"interval_ms":500,"topic":"cpu","x":{"y":[]},"type":"subscribe","id":11}"#,
    )
    .unwrap();
    assert_eq!(
        r.body,
        RequestBody::Subscribe(Topic::Cpu {
            interval_ms: Some(500),
            pids: Some(vec![4])
        })
    );
}

/// The wire's browser names (serde, `--browser`) are the keys of micoff-browsers' table rows the
/// protocol's `Browser` maps onto.
#[test]
fn latency_browsers_are_named_by_the_table() {
    use clap::ValueEnum;
    for b in Browser::ALL {
        let key = b.table().key();
        assert_eq!(
            serde_json::to_string(&b).unwrap_or_default(),
            format!("\"{key}\"")
        );
        assert_eq!(
            b.to_possible_value().map(|v| v.get_name().to_owned()),
            Some(key.to_owned())
        );
        assert_eq!(Browser::from_name(key), Some(b));
    }
}
