//! The request decoder: one frame body -> a typed [`Request`] or the [`RequestError`] that says
//! why not, with its stable code and, when it could be read, the request id. In steps (syntax,
//! envelope, fields, ranges) and without a generic JSON tree; each request family's ranges are
//! checked by its own module. Nothing here does I/O.

use serde::Deserialize;

use super::cpu::{validate_cpu_sample, validate_cpu_subscription};
use super::errors::{bounded, ErrorCode, RequestError, QUOTED_CHARS};
use super::history::Phase;
use super::latency::{validate_capture_ms, Browser};
use super::processes::validate_pid;
use super::request::{Request, RequestBody, MAX_ID};
use super::subscription::Topic;

/// The envelope of a request, read without building a JSON tree: the `id`, the `type` and the
/// `topic` (a `subscribe`'s tag), each as the caller sent it (a foreign value is kept as a short
/// description for the error message). Every other field is skipped (`IgnoredAny`).
#[derive(Default)]
struct Head {
    id: Option<Loose>,
    kind: Option<Loose>,
    topic: Option<Loose>,
    /// A tag (`type`, `topic`) given twice: refused, as serde refuses a duplicate field.
    duplicate_tag: Option<&'static str>,
}

/// A JSON value summarised: an unsigned integer or a string kept, anything else described.
enum Loose {
    Uint(u64),
    Str(String),
    Other(String),
}

impl Loose {
    fn describe(&self) -> String {
        match self {
            Loose::Uint(n) => n.to_string(),
            Loose::Str(s) => format!("{:?}", bounded(s, QUOTED_CHARS)),
            Loose::Other(d) => d.clone(),
        }
    }
}

impl<'de> Deserialize<'de> for Loose {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Loose;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_u64<E>(self, v: u64) -> Result<Loose, E> {
                Ok(Loose::Uint(v))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Loose, E> {
                Ok(Loose::Other(v.to_string()))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Loose, E> {
                Ok(Loose::Other(v.to_string()))
            }
            fn visit_bool<E>(self, v: bool) -> Result<Loose, E> {
                Ok(Loose::Other(v.to_string()))
            }
            fn visit_unit<E>(self) -> Result<Loose, E> {
                Ok(Loose::Other("null".into()))
            }
            fn visit_str<E>(self, v: &str) -> Result<Loose, E> {
                // Kept whole only up to a little over what a message quotes.
                Ok(Loose::Str(bounded(v, QUOTED_CHARS)))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut a: A) -> Result<Loose, A::Error> {
                while a.next_element::<serde::de::IgnoredAny>()?.is_some() {}
                Ok(Loose::Other("an array".into()))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut a: A) -> Result<Loose, A::Error> {
                while a
                    .next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?
                    .is_some()
                {}
                Ok(Loose::Other("an object".into()))
            }
        }
        d.deserialize_any(V)
    }
}

impl<'de> Deserialize<'de> for Head {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(field_identifier, rename_all = "snake_case")]
        enum Key {
            Id,
            Type,
            Topic,
            #[serde(other)]
            Other,
        }
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Head;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut a: A) -> Result<Head, A::Error> {
                let mut head = Head::default();
                while let Some(key) = a.next_key::<Key>()? {
                    match key {
                        Key::Id => head.id = Some(a.next_value()?),
                        Key::Type => {
                            if head.kind.is_some() {
                                head.duplicate_tag.get_or_insert("type");
                            }
                            head.kind = Some(a.next_value()?);
                        }
                        Key::Topic => {
                            if head.topic.is_some() {
                                head.duplicate_tag.get_or_insert("topic");
                            }
                            head.topic = Some(a.next_value()?);
                        }
                        Key::Other => {
                            a.next_value::<serde::de::IgnoredAny>()?;
                        }
                    }
                }
                Ok(head)
            }
        }
        d.deserialize_map(V)
    }
}

/// A field that must be present and may be null (`"capture_ms": null` resets).
fn number_or_null<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u32>, D::Error> {
    Option::<u32>::deserialize(d)
}

/// The fields of each request type with fields, read straight from the frame (unknown fields,
/// `id` and the tags included, are skipped without being kept).
mod fields {
    use serde::Deserialize;

    #[derive(Deserialize)]
    pub struct Processes {
        #[serde(default)]
        pub browser_pid: Option<u32>,
    }

    #[derive(Deserialize)]
    pub struct CpuSample {
        pub window_ms: u64,
        #[serde(default)]
        pub pids: Option<Vec<u32>>,
    }

    #[derive(Deserialize)]
    pub struct Cpu {
        #[serde(default)]
        pub interval_ms: Option<u64>,
        #[serde(default)]
        pub pids: Option<Vec<u32>>,
    }

    #[derive(Deserialize)]
    pub struct History {
        #[serde(default)]
        pub interval_ms: Option<u64>,
    }

    #[derive(Deserialize)]
    pub struct Phase {
        pub phase: super::Phase,
    }

    #[derive(Deserialize)]
    pub struct Unsubscribe {
        pub subscription: u64,
    }

    #[derive(Deserialize)]
    pub struct LatencySet {
        // `deserialize_with` without `default`: serde refuses a missing field instead of reading
        // it as None.
        #[serde(deserialize_with = "super::number_or_null")]
        pub capture_ms: Option<u32>,
        #[serde(default)]
        pub dry_run: bool,
        #[serde(default)]
        pub browsers: Option<Vec<super::Browser>>,
    }
}

/// serde_json's message without its position (` at line 1 column 42`): the same text the caller
/// got when requests went through serde's tagged enums.
fn field_error(e: &serde_json::Error) -> String {
    let text = e.to_string();
    let position = format!(" at line {} column {}", e.line(), e.column());
    match text.strip_suffix(&position) {
        Some(bare) => bare.to_owned(),
        None => text,
    }
}

/// The typed body of a request of type `type_name` (one of [`RequestBody::TYPES`]): the variant's
/// own fields, decoded from `text` with everything else skipped.
fn decode_body(type_name: &str, head: &Head, text: &str) -> Result<RequestBody, String> {
    fn typed<T: for<'de> Deserialize<'de>>(text: &str) -> Result<T, String> {
        serde_json::from_str::<T>(text).map_err(|e| field_error(&e))
    }
    Ok(match type_name {
        "version" => RequestBody::Version,
        "processes" => {
            let f: fields::Processes = typed(text)?;
            RequestBody::Processes {
                browser_pid: f.browser_pid,
            }
        }
        "cpu_sample" => {
            let f: fields::CpuSample = typed(text)?;
            RequestBody::CpuSample {
                window_ms: f.window_ms,
                pids: f.pids,
            }
        }
        "subscribe" => RequestBody::Subscribe(match &head.topic {
            None => return Err("missing field `topic`".into()),
            Some(Loose::Str(t)) if t == "cpu" => {
                let f: fields::Cpu = typed(text)?;
                Topic::Cpu {
                    interval_ms: f.interval_ms,
                    pids: f.pids,
                }
            }
            Some(Loose::Str(t)) if t == "audio" => Topic::Audio,
            Some(Loose::Str(t)) if t == "history" => {
                let f: fields::History = typed(text)?;
                Topic::History {
                    interval_ms: f.interval_ms,
                }
            }
            Some(Loose::Str(t)) => {
                return Err(format!(
                    "unknown variant `{}`, expected one of `cpu`, `audio`, `history`",
                    bounded(t, QUOTED_CHARS)
                ))
            }
            Some(other) => {
                return Err(format!(
                    "`topic` must be a string, got {}",
                    other.describe()
                ))
            }
        }),
        "unsubscribe" => {
            let f: fields::Unsubscribe = typed(text)?;
            RequestBody::Unsubscribe {
                subscription: f.subscription,
            }
        }
        "audio_server_info" => RequestBody::AudioServerInfo,
        "audio_streams" => RequestBody::AudioStreams,
        "doctor" => RequestBody::Doctor,
        "latency_status" => RequestBody::LatencyStatus,
        "latency_set" => {
            let f: fields::LatencySet = typed(text)?;
            RequestBody::LatencySet {
                capture_ms: f.capture_ms,
                dry_run: f.dry_run,
                browsers: f.browsers,
            }
        }
        "power" => RequestBody::Power,
        "phase" => {
            let f: fields::Phase = typed(text)?;
            RequestBody::Phase { phase: f.phase }
        }
        "history" => RequestBody::History,
        other => return Err(format!("no decoder for `{other}`")),
    })
}

/// Decodes one request frame body: UTF-8 JSON -> object -> id -> type -> fields -> ranges,
/// without a generic JSON tree: a syntax pass that keeps nothing, the envelope ([`Head`]: `id`,
/// `type`, `topic`, every other value skipped), then the variant's own fields straight into their
/// types (skipping the rest again). What is kept is the typed request and at most a few short
/// strings for messages, whatever the frame holds (the frame size is capped at
/// [`crate::framing::MAX_INCOMING_BYTES`]).
pub fn decode_request(body: &[u8]) -> Result<Request, RequestError> {
    let invalid_json =
        |e: String| RequestError::new(None, ErrorCode::InvalidJson, format!("invalid JSON: {e}"));
    let text = std::str::from_utf8(body).map_err(|e| invalid_json(e.to_string()))?;
    // Syntax first, over the whole frame, without keeping anything.
    serde_json::from_str::<serde::de::IgnoredAny>(text).map_err(|e| invalid_json(e.to_string()))?;
    let head = serde_json::from_str::<Head>(text).map_err(|_| {
        RequestError::new(
            None,
            ErrorCode::InvalidRequest,
            "a request must be a JSON object",
        )
    })?;
    let id = match head.id {
        None => {
            return Err(RequestError::new(
                None,
                ErrorCode::InvalidRequest,
                "missing `id`",
            ))
        }
        Some(Loose::Uint(id)) if id <= MAX_ID => id,
        Some(ref other) => {
            return Err(RequestError::new(
                None,
                ErrorCode::InvalidRequest,
                format!(
                    "`id` must be an integer in 0..=2^53-1, got {}",
                    other.describe()
                ),
            ))
        }
    };
    let type_name = match &head.kind {
        Some(Loose::Str(t)) => t.as_str(),
        Some(_) => {
            return Err(RequestError::new(
                Some(id),
                ErrorCode::InvalidRequest,
                "`type` must be a string",
            ))
        }
        None => {
            return Err(RequestError::new(
                Some(id),
                ErrorCode::InvalidRequest,
                "missing `type`",
            ))
        }
    };
    let Some(type_name) = RequestBody::TYPES.iter().copied().find(|t| *t == type_name) else {
        return Err(RequestError::new(
            Some(id),
            ErrorCode::UnknownType,
            format!(
                "unknown request type `{}`",
                bounded(type_name, QUOTED_CHARS)
            ),
        ));
    };
    let invalid = |message: String| {
        RequestError::new(
            Some(id),
            ErrorCode::InvalidRequest,
            format!("invalid `{type_name}` request: {message}"),
        )
    };
    // `topic` is a tag only for `subscribe`; elsewhere it is one more unknown field.
    match head.duplicate_tag {
        Some("topic") if type_name != "subscribe" => {}
        Some(tag) => return Err(invalid(format!("duplicate field `{tag}`"))),
        None => {}
    }
    let body = decode_body(type_name, &head, text).map_err(invalid)?;
    validate(&body).map_err(invalid)?;
    Ok(Request { id, body })
}

/// The ranges of a decoded body, each family's by its own rule.
fn validate(body: &RequestBody) -> Result<(), String> {
    match body {
        RequestBody::Processes {
            browser_pid: Some(pid),
        } => validate_pid(*pid),
        RequestBody::CpuSample { window_ms, pids } => {
            validate_cpu_sample(*window_ms, pids.as_deref())
        }
        RequestBody::Subscribe(Topic::Cpu { interval_ms, pids }) => {
            validate_cpu_subscription(*interval_ms, pids.as_deref())
        }
        RequestBody::Subscribe(Topic::History { interval_ms }) => {
            validate_cpu_subscription(*interval_ms, None)
        }
        RequestBody::LatencySet {
            capture_ms: Some(ms),
            ..
        } => validate_capture_ms(*ms),
        _ => Ok(()),
    }
}
