//! What decoding one request costs in memory: every allocation of the decoder counted (a counting
//! global allocator around the system one), for the largest frames the host accepts, shaped to be
//! as expensive as JSON can be for a generic tree (thousands of tiny values, deep nesting, wide
//! objects, escaped strings). The decoder reads the envelope and the variant's own fields straight
//! into their types, so what it holds at its peak stays a small fraction of the frame whatever the
//! frame holds. (This file has one test: the counters are process-wide.)

#![allow(clippy::unwrap_used)] // tests may unwrap (house style)

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use micoff_native::framing::MAX_INCOMING_BYTES;
use micoff_native::protocol::decode_request;

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is passed on to the system allocator unchanged; only counters are added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as the caller promises for `layout`.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let now = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as the caller promises.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            if new_size >= layout.size() {
                let grow = new_size - layout.size();
                let now = LIVE.fetch_add(grow, Ordering::Relaxed) + grow;
                PEAK.fetch_max(now, Ordering::Relaxed);
            } else {
                LIVE.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
            }
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Bytes allocated at the peak of `f`, above what was live before it.
fn peak_during<T>(f: impl FnOnce() -> T) -> (usize, T) {
    let before = LIVE.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let out = f();
    (PEAK.load(Ordering::Relaxed) - before, out)
}

/// `head` + `unit` repeated (comma-separated) + `tail`, padded with spaces to exactly `size`.
fn frame_of(head: &str, unit: &str, tail: &str, size: usize) -> Vec<u8> {
    let mut body = head.as_bytes().to_vec();
    let room = size - head.len() - tail.len();
    let n = (room + 1) / (unit.len() + 1);
    for i in 0..n {
        if i > 0 {
            body.push(b',');
        }
        body.extend_from_slice(unit.as_bytes());
    }
    body.resize(size - tail.len(), b' ');
    body.extend_from_slice(tail.as_bytes());
    assert_eq!(body.len(), size);
    body
}

#[test]
fn decoding_the_largest_request_holds_a_small_fraction_of_the_frame() {
    let size = MAX_INCOMING_BYTES;
    let nested = format!("{}{}", "[".repeat(100), "]".repeat(100));
    let pids: Vec<String> = (1..=256).map(|p| p.to_string()).collect();
    let cpu_head = format!(
        r#"{{"id":3,"type":"cpu_sample","window_ms":500,"pids":[{}],"pad":["#,
        pids.join(",")
    );
    let cases: Vec<(&str, Vec<u8>, bool)> = vec![
        (
            "version padded with empty arrays",
            frame_of(r#"{"id":1,"type":"version","pad":["#, "[]", "]}", size),
            true,
        ),
        (
            "subscribe padded with empty objects",
            frame_of(
                r#"{"id":2,"type":"subscribe","topic":"cpu","pad":["#,
                "{}",
                "]}",
                size,
            ),
            true,
        ),
        (
            "cpu_sample with 256 pids padded with zeros",
            frame_of(&cpu_head, "0", "]}", size),
            true,
        ),
        (
            "latency_set padded with arrays nested 100 deep",
            frame_of(
                r#"{"id":4,"type":"latency_set","capture_ms":null,"pad":["#,
                &nested,
                "]}",
                size,
            ),
            true,
        ),
        (
            "processes with thousands of unknown fields",
            {
                let tail = r#""id":5,"type":"processes"}"#;
                let mut body = String::from("{");
                let mut i = 0;
                while body.len() + 16 + tail.len() < size {
                    body.push_str(&format!(r#""k{i}":0,"#));
                    i += 1;
                }
                body.push_str(&" ".repeat(size - body.len() - tail.len()));
                body.push_str(tail);
                body.into_bytes()
            },
            true,
        ),
        (
            "cpu_sample padded with escaped strings",
            frame_of(
                r#"{"id":6,"type":"cpu_sample","window_ms":500,"pad":["#,
                r#""\u00e9\n\"x""#,
                "]}",
                size,
            ),
            true,
        ),
        (
            "an invalid cpu_sample (the error path)",
            frame_of(
                r#"{"id":7,"type":"cpu_sample","window_ms":"soon","pad":["#,
                "[]",
                "]}",
                size,
            ),
            false,
        ),
    ];
    let mut figures = Vec::new();
    for (what, frame, valid) in &cases {
        assert_eq!(frame.len(), size, "{what}");
        let (peak, decoded) = peak_during(|| decode_request(frame));
        assert_eq!(decoded.is_ok(), *valid, "{what}: {decoded:?}");
        figures.push(format!("{what}: {peak} bytes"));
        // The 256 pids are 1 KiB as u32s; messages are capped at 256 characters.
        assert!(
            peak <= size / 8,
            "{what}: the decoder held {peak} bytes at its peak for a {size}-byte frame"
        );
    }
    eprintln!(
        "peak allocation while decoding a {size}-byte frame:\n  {}",
        figures.join("\n  ")
    );
}
