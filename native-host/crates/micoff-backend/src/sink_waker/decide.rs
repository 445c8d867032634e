//! Whether a new stream should wake the null sink behind it: a pure function over the server's
//! listing ([`decide`]), so every case is a unit test with a literal sample.
//!
//! Why: PulseAudio's `module-null-sink` renders up to `BLOCK_USEC` (2 s) ahead when no stream asks
//! for less, and sleeps until that timestamp even after a new low-latency stream lowers the
//! requested latency. A new recorder on its monitor gets its first data 0-2 s late; a new playback
//! stream is consumed 0-2 s late, which holds up Firefox's capture too (its media graph is clocked by
//! its output stream: after a server restart its call's audio came back 1.7-1.8 s late while the
//! rig's output was an idle null sink, 34-85 ms once that sink was woken). A suspend and resume
//! restarts the timeline at now (`sink_set_state_in_io_thread_cb`).

use micoff_pulse::{Device, Snapshot, Stream, StreamKind};

use micoff_native::protocol::Browser;

/// `driver` of a `module-null-sink` sink (and its monitor) on PulseAudio.
pub const NULL_SINK_DRIVER: &str = "module-null-sink.c";
/// A sink rendering further ahead than this keeps a new recorder waiting noticeably.
pub const FAR_AHEAD_US: u64 = 200_000;
/// How far ahead of what the new stream's source is configured to a sink must be, as a factor:
/// a recorder that asked for a long latency gets its data late anyway.
pub const FAR_AHEAD_FACTOR: u64 = 2;
/// `device.master_device` links followed from the stream's source to a monitor (a remap over a
/// filter over a monitor is two).
pub const MAX_HOPS: usize = 4;

/// The null sink to suspend and resume, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wake {
    pub sink_index: u32,
    pub sink_name: String,
    /// How far ahead the sink has rendered (its current latency).
    pub ahead_us: u64,
    /// The configured latency of the stream's source (the smallest any of its recorders asked).
    pub asked_us: u64,
    pub browser: Browser,
    pub stream_kind: StreamKind,
    pub stream_index: u32,
    /// Record streams: source names from the stream's source to the sink's monitor; playback
    /// streams: the sink.
    pub chain: Vec<String>,
}

/// Why a stream is left alone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Leave {
    /// pipewire-pulse: its graph starts a new recorder promptly.
    PipeWire,
    /// Not in the listing (gone already), or not of the kind asked about.
    NoStream,
    NotBrowser,
    /// A playback stream of a browser whose capture does not wait for its output (Chromium's
    /// capture and playback are separate streams).
    NotClockedByOutput,
    /// A playback stream whose sink is not in the listing.
    NoSink,
    /// The stream's source is not in the listing (gone, or the stream is not linked yet).
    NoSource,
    /// The chain of sources ends at something that is not a sink's monitor (a hardware or
    /// self-clocked source), or is longer than [`MAX_HOPS`].
    NoMonitor {
        chain: Vec<String>,
    },
    /// The chain ends at the monitor of a sink that is not a null sink (e.g. ALSA hardware).
    NotNullSink {
        sink: String,
        driver: Option<String>,
    },
    /// The null sink is not rendering far ahead (suspended, or already at a low latency).
    NotFarAhead {
        sink: String,
        ahead_us: u64,
        asked_us: u64,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Wake(Wake),
    Leave(Leave),
}

/// What to do about the new stream `stream_index` of `kind`, given the server's listing.
pub fn decide(snapshot: &Snapshot, kind: StreamKind, stream_index: u32) -> Verdict {
    let woken = if snapshot.server.is_pipewire {
        Err(Leave::PipeWire)
    } else {
        match kind {
            StreamKind::Record => wake_for_recorder(snapshot, stream_index),
            StreamKind::Playback => wake_for_player(snapshot, stream_index),
        }
    };
    match woken {
        Ok(w) => Verdict::Wake(w),
        Err(leave) => Verdict::Leave(leave),
    }
}

/// A browser's playback stream on a null sink far ahead, where the browser's capture waits for its
/// output (Firefox).
fn wake_for_player(snapshot: &Snapshot, stream_index: u32) -> Result<Wake, Leave> {
    let (stream, browser) = browser_stream(snapshot, StreamKind::Playback, stream_index)?;
    if !clocked_by_output(browser) {
        return Err(Leave::NotClockedByOutput);
    }
    let sink = snapshot
        .sinks
        .iter()
        .find(|s| s.index == stream.device_index)
        .ok_or(Leave::NoSink)?;
    // What the sink's streams ask, the new one's included.
    let asked_us = sink.configured_latency_us;
    let chain = vec![sink.name.clone()];
    wake_far_ahead(
        sink,
        asked_us,
        (browser, StreamKind::Playback, stream_index),
        chain,
    )
}

/// `sink` to wake for the new stream `(browser, kind, index)` if it is a null sink rendering far
/// ahead of `asked_us`.
fn wake_far_ahead(
    sink: &Device,
    asked_us: u64,
    (browser, stream_kind, stream_index): (Browser, StreamKind, u32),
    chain: Vec<String>,
) -> Result<Wake, Leave> {
    if sink.driver.as_deref() != Some(NULL_SINK_DRIVER) {
        return Err(Leave::NotNullSink {
            sink: sink.name.clone(),
            driver: sink.driver.clone(),
        });
    }
    let ahead_us = sink.latency_us;
    if ahead_us <= FAR_AHEAD_US || ahead_us <= asked_us.saturating_mul(FAR_AHEAD_FACTOR) {
        return Err(Leave::NotFarAhead {
            sink: sink.name.clone(),
            ahead_us,
            asked_us,
        });
    }
    Ok(Wake {
        sink_index: sink.index,
        sink_name: sink.name.clone(),
        ahead_us,
        asked_us,
        browser,
        stream_kind,
        stream_index,
        chain,
    })
}

/// The stream `stream_index` of `kind` in the listing, and its browser.
fn browser_stream(
    snapshot: &Snapshot,
    kind: StreamKind,
    stream_index: u32,
) -> Result<(&Stream, Browser), Leave> {
    let streams = match kind {
        StreamKind::Record => &snapshot.streams.record,
        StreamKind::Playback => &snapshot.streams.playback,
    };
    let stream = streams
        .iter()
        .find(|s| s.index == stream_index && s.kind == kind)
        .ok_or(Leave::NoStream)?;
    Ok((stream, browser_of(stream).ok_or(Leave::NotBrowser)?))
}

fn wake_for_recorder(snapshot: &Snapshot, stream_index: u32) -> Result<Wake, Leave> {
    let (stream, browser) = browser_stream(snapshot, StreamKind::Record, stream_index)?;
    let source = source_by_index(snapshot, stream.device_index).ok_or(Leave::NoSource)?;
    let asked_us = source.configured_latency_us;
    let (chain, sink_index) = chain_to_monitor(snapshot, source)?;
    let sink = snapshot
        .sinks
        .iter()
        .find(|s| s.index == sink_index)
        .ok_or_else(|| Leave::NoMonitor {
            chain: chain.clone(),
        })?;
    wake_far_ahead(
        sink,
        asked_us,
        (browser, StreamKind::Record, stream_index),
        chain,
    )
}

/// Whether a new stream of `kind` can ever wake a sink (so is worth a listing): a browser's capture
/// stream, or the playback stream of a browser whose capture waits for its output.
pub(super) fn may_wake(kind: StreamKind, stream: &Stream) -> bool {
    browser_of(stream).is_some_and(|b| kind == StreamKind::Record || clocked_by_output(b))
}

/// Firefox: one media graph per page, clocked by its output stream, carries its capture too.
fn clocked_by_output(browser: Browser) -> bool {
    browser.table().is_firefox()
}

/// A browser's stream: a client the browser table names (never a module's own stream, such as a
/// remap source recording its master).
pub(super) fn browser_of(stream: &Stream) -> Option<Browser> {
    if stream.is_module_stream() {
        return None;
    }
    Browser::of_stream(stream)
}

fn source_by_index(snapshot: &Snapshot, index: u32) -> Option<&Device> {
    snapshot.sources.iter().find(|s| s.index == index)
}

/// From `source` along `device.master_device` to a sink's monitor: the source names passed and
/// the sink's index.
fn chain_to_monitor(snapshot: &Snapshot, source: &Device) -> Result<(Vec<String>, u32), Leave> {
    let mut chain = vec![source.name.clone()];
    let mut at = source;
    for hop in 0..=MAX_HOPS {
        if let Some(sink) = at.monitor_index {
            return Ok((chain, sink));
        }
        if hop == MAX_HOPS {
            break;
        }
        let master = at
            .props
            .get("device.master_device")
            .and_then(|name| snapshot.sources.iter().find(|s| &s.name == name));
        match master {
            // A loop (a source naming itself, or two naming each other) ends here.
            Some(next) if !chain.contains(&next.name) => {
                chain.push(next.name.clone());
                at = next;
            }
            _ => break,
        }
    }
    Err(Leave::NoMonitor { chain })
}
