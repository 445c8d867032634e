//! Replies and events encoded within the frame limit (native messaging: 1 MiB out, a `cpu` event
//! less). What does not fit is cut where the protocol allows it and says so: a CPU report loses
//! its lowest-CPU threads (`threads_omitted`), a process list its deepest processes
//! (`processes_omitted`), both through one shrink-until-it-fits loop ([`shrink_to_fit`]);
//! anything else that does not fit becomes a `too_large` error. Pure: bytes out, no I/O.

use serde::Serialize;

use crate::protocol::{
    CpuReport, ErrorCode, HistorySnapshot, HostToExtension, Processes, Rates, RequestId,
};

/// No thread row is smaller than this in JSON: reports with more threads than fit are cut to what
/// can fit before the first serialisation.
const MIN_THREAD_JSON_BYTES: usize = 200;

/// A `result` for `id` carrying `payload`; `too_large` or `internal` when it cannot be sent.
pub fn result<T: Serialize>(id: RequestId, payload: &T, max_bytes: usize) -> Vec<u8> {
    match serde_json::to_value(payload) {
        Ok(result) => message(&HostToExtension::Result { id, result }, max_bytes),
        Err(e) => message(
            &HostToExtension::error(Some(id), ErrorCode::Internal, format!("cannot encode: {e}")),
            max_bytes,
        ),
    }
}

/// Serializes a message; one that would not fit becomes a `too_large` error (results) or is
/// replaced by an id-less `too_large` error (events).
pub fn message(message: &HostToExtension, max_bytes: usize) -> Vec<u8> {
    match serde_json::to_vec(message) {
        Ok(body) if body.len() <= max_bytes => body,
        Ok(body) => {
            let id = match message {
                HostToExtension::Result { id, .. } => Some(*id),
                HostToExtension::Error { id, .. } => *id,
                HostToExtension::Event { .. } => None,
            };
            tracing::warn!(bytes = body.len(), "reply too large");
            too_large(id, max_bytes)
        }
        Err(e) => {
            tracing::error!("cannot encode a reply: {e}");
            fallback_error(None, ErrorCode::Internal, "cannot encode the reply")
        }
    }
}

/// The `too_large` error that replaces a reply over `max_bytes`.
pub fn too_large(id: Option<RequestId>, max_bytes: usize) -> Vec<u8> {
    fallback_error(
        id,
        ErrorCode::TooLarge,
        &format!("the reply would exceed {max_bytes} bytes"),
    )
}

/// An error frame that is always sent (a fixed `internal` one should even it fail to encode).
pub fn fallback_error(id: Option<RequestId>, code: ErrorCode, message: &str) -> Vec<u8> {
    serde_json::to_vec(&HostToExtension::error(id, code, message)).unwrap_or_else(|_| {
        format!(
            r#"{{"id":null,"type":"error","error":{{"code":{},"message":"internal"}}}}"#,
            ErrorCode::Internal.code()
        )
        .into_bytes()
    })
}

/// Why [`shrink_to_fit`] gave up.
#[derive(Debug)]
pub enum Unfit {
    /// The message could not be serialized at all.
    Encode(serde_json::Error),
    /// Still over the limit with nothing left to drop.
    TooLarge,
}

/// THE fit loop: encodes `item`; while the bytes exceed `max_bytes`, drops the excess share of
/// its droppable parts (`count` of them; `drop(item, n)` removes `n`), at least one per round.
/// Parts dominate the size, so it converges in a few rounds and never drops much more than needed.
pub fn shrink_to_fit<T>(
    item: &mut T,
    max_bytes: usize,
    encode: impl Fn(&T) -> Result<Vec<u8>, serde_json::Error>,
    count: impl Fn(&T) -> usize,
    mut drop: impl FnMut(&mut T, usize),
) -> Result<Vec<u8>, Unfit> {
    loop {
        let body = encode(item).map_err(Unfit::Encode)?;
        if body.len() <= max_bytes {
            return Ok(body);
        }
        let parts = count(item);
        if parts == 0 {
            return Err(Unfit::TooLarge);
        }
        let excess = (body.len() - max_bytes) as f64 / body.len() as f64;
        let n = ((parts as f64 * excess).ceil() as usize).clamp(1, parts);
        drop(item, n);
    }
}

/// Encodes a `processes` result, dropping processes from the end of the tree (the deepest, after
/// the browser and its direct children) until it fits, counted in `processes_omitted`; like
/// [`cpu_report`] for threads. A reply that does not fit even without them is `too_large`.
pub fn processes_result(id: RequestId, mut processes: Processes, max_bytes: usize) -> Vec<u8> {
    #[derive(Serialize)]
    struct ProcessesResult<'a> {
        id: RequestId,
        #[serde(rename = "type")]
        kind: &'static str,
        result: &'a Processes,
    }
    let fitted = shrink_to_fit(
        &mut processes,
        max_bytes,
        |processes| {
            serde_json::to_vec(&ProcessesResult {
                id,
                kind: "result",
                result: processes,
            })
        },
        |processes| processes.processes.len(),
        |processes, n| {
            let left = processes.processes.len() - n;
            processes.processes.truncate(left);
            processes.processes_omitted += n as u64;
        },
    );
    match fitted {
        Ok(body) => body,
        Err(Unfit::Encode(e)) => fallback_error(
            Some(id),
            ErrorCode::Internal,
            &format!("cannot encode: {e}"),
        ),
        Err(Unfit::TooLarge) => too_large(Some(id), max_bytes),
    }
}

// The hot path (a `cpu` event every interval, ~80 KB for 300 threads) serializes the report in
// place: the same JSON as `HostToExtension::Result` / `Event { HostEvent::Cpu }`, without cloning
// the report into the enum or building a `serde_json::Value` tree first.
#[derive(Serialize)]
struct CpuResult<'a> {
    id: RequestId,
    #[serde(rename = "type")]
    kind: &'static str,
    result: &'a CpuReport,
}

#[derive(Serialize)]
struct CpuEvent<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    subscription: u64,
    event: CpuEventBody<'a>,
}

#[derive(Serialize)]
struct CpuEventBody<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    report: &'a CpuReport,
}

/// A `cpu_sample` result (see [`cpu_report`]); `too_large` when even its thread-less report does
/// not fit.
pub fn cpu_result(id: RequestId, report: CpuReport, max_bytes: usize) -> Vec<u8> {
    cpu_report(report, max_bytes, |report| {
        serde_json::to_vec(&CpuResult {
            kind: "result",
            id,
            result: report,
        })
    })
    .unwrap_or_else(|| too_large(Some(id), max_bytes))
}

/// A `cpu` event of `subscription` (see [`cpu_report`]); `None` when even its thread-less report
/// does not fit.
pub fn cpu_event(subscription: u64, report: CpuReport, max_bytes: usize) -> Option<Vec<u8>> {
    cpu_report(report, max_bytes, |report| {
        serde_json::to_vec(&CpuEvent {
            kind: "event",
            subscription,
            event: CpuEventBody {
                kind: "cpu",
                report,
            },
        })
    })
}

#[derive(Serialize)]
struct HistoryEvent<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    subscription: u64,
    event: HistoryEventBody<'a>,
}

#[derive(Serialize)]
struct HistoryEventBody<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    history: &'a HistorySnapshot,
    report: Option<&'a CpuReport>,
}

/// A `history` event of `subscription`: `history` whole, `report` (if any) trimmed as in a `cpu`
/// event to fit what is left of `max_bytes`. `None` when even its thread-less report, or the
/// history alone, does not fit.
pub fn history_event(
    subscription: u64,
    history: &HistorySnapshot,
    report: Option<CpuReport>,
    max_bytes: usize,
) -> Option<Vec<u8>> {
    let wrap = |report: Option<&CpuReport>| {
        serde_json::to_vec(&HistoryEvent {
            kind: "event",
            subscription,
            event: HistoryEventBody {
                kind: "history",
                history,
                report,
            },
        })
    };
    match report {
        Some(report) => cpu_report(report, max_bytes, |r| wrap(Some(r))),
        None => wrap(None).ok().filter(|body| body.len() <= max_bytes),
    }
}

/// Encodes a CPU report (`wrap` serializes it inside its envelope), sorted, cleaned of values
/// JSON cannot carry, dropping its lowest-CPU threads until it fits. `None` when even the
/// thread-less report does not fit (or it cannot be encoded).
pub fn cpu_report(
    mut report: CpuReport,
    max_bytes: usize,
    wrap: impl Fn(&CpuReport) -> Result<Vec<u8>, serde_json::Error>,
) -> Option<Vec<u8>> {
    sanitize(&mut report);
    sort_report(&mut report);
    let fit = max_bytes / MIN_THREAD_JSON_BYTES;
    let threads = thread_count(&report);
    if threads > fit {
        drop_lowest_threads(&mut report, threads - fit);
    }
    shrink_to_fit(
        &mut report,
        max_bytes,
        wrap,
        thread_count,
        drop_lowest_threads,
    )
    .ok()
}

/// Sorts processes and their threads by `cpu_pct`, highest first (the documented order).
pub fn sort_report(report: &mut CpuReport) {
    let by_cpu = |a: f64, b: f64| b.total_cmp(&a);
    for process in &mut report.processes {
        process
            .threads
            .sort_by(|a, b| by_cpu(a.rates.cpu_pct, b.rates.cpu_pct).then(a.tid.cmp(&b.tid)));
    }
    report
        .processes
        .sort_by(|a, b| by_cpu(a.rates.cpu_pct, b.rates.cpu_pct).then(a.pid.cmp(&b.pid)));
}

/// Threads listed in the report (after any trimming).
pub fn thread_count(report: &CpuReport) -> usize {
    report.processes.iter().map(|p| p.threads.len()).sum()
}

/// Drops the `n` threads with the lowest `cpu_pct` (over all processes), counting them in
/// `threads_omitted`. Used to fit the report into one frame. Process and role totals keep counting
/// the dropped threads (`thread_count` stays the real count).
pub fn drop_lowest_threads(report: &mut CpuReport, n: usize) {
    if n == 0 {
        return;
    }
    let mut all: Vec<(f64, usize, usize)> = Vec::with_capacity(thread_count(report));
    for (p, process) in report.processes.iter().enumerate() {
        for (t, thread) in process.threads.iter().enumerate() {
            all.push((thread.rates.cpu_pct, p, t));
        }
    }
    // Linear: a partial selection of the `n` lowest, then one `retain` per process (removing
    // thousands of threads one by one was quadratic: most of a 3000-thread event's cost).
    let n = n.min(all.len());
    if n < all.len() {
        all.select_nth_unstable_by(n, |a, b| a.0.total_cmp(&b.0));
    }
    let mut doomed: Vec<Vec<bool>> = report
        .processes
        .iter()
        .map(|p| vec![false; p.threads.len()])
        .collect();
    for &(_, p, t) in &all[..n] {
        doomed[p][t] = true;
    }
    let mut dropped = 0u64;
    for (process, doomed) in report.processes.iter_mut().zip(doomed) {
        let mut i = 0;
        process.threads.retain(|_| {
            let keep = !doomed[i];
            i += 1;
            keep
        });
        dropped += doomed.iter().filter(|d| **d).count() as u64;
    }
    report.threads_omitted += dropped;
}

/// serde_json writes NaN/inf as `null`, which the extension's guards reject; never send them.
/// Nor `-0.0` (a sum over nothing), which reads as a bug.
fn sanitize(report: &mut CpuReport) {
    fn fix(v: &mut f64) {
        if !v.is_finite() || *v == 0.0 {
            *v = 0.0;
        }
    }
    fn fix_opt(v: &mut Option<f64>) {
        match v {
            Some(x) if !x.is_finite() => *v = None,
            Some(x) if *x == 0.0 => *x = 0.0,
            _ => {}
        }
    }
    fix(&mut report.window_ms);
    fix(&mut report.total_cpu_pct);
    for r in &mut report.roles {
        for v in [&mut r.cpu_pct, &mut r.user_pct, &mut r.system_pct] {
            fix(v);
        }
        for v in [
            &mut r.wakeups_per_s,
            &mut r.read_syscalls_per_s,
            &mut r.write_syscalls_per_s,
        ] {
            fix_opt(v);
        }
    }
    /// A process's or a thread's figures.
    fn fix_rates(r: &mut Rates) {
        for v in [&mut r.cpu_pct, &mut r.user_pct, &mut r.system_pct] {
            fix(v);
        }
        for v in [
            &mut r.run_time_pct,
            &mut r.wakeups_per_s,
            &mut r.voluntary_ctxt_per_s,
            &mut r.involuntary_ctxt_per_s,
            &mut r.read_syscalls_per_s,
            &mut r.write_syscalls_per_s,
        ] {
            fix_opt(v);
        }
    }
    for p in &mut report.processes {
        fix_rates(&mut p.rates);
        for t in &mut p.threads {
            fix_rates(&mut t.rates);
            fix_opt(&mut t.window_ms);
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::protocol::{HostEvent, ProcessRates, Rates, Role, ThreadRates};

    #[test]
    fn a_history_event_is_the_enum_encoding_with_its_report_trimmed_to_fit() {
        let history = crate::history::CpuHistory::default().snapshot(1_000);
        let busy = |i: usize| {
            let mut t = ThreadRates::idle(1000 + i as u32, format!("thread-{i:05}"));
            t.rates.cpu_pct = i as f64;
            t
        };
        let mut process = ProcessRates::idle(10, 1, "chromium", Role::Renderer);
        process.threads = (0..3000).map(busy).collect();
        process.thread_count = 3000;
        let report = CpuReport {
            window_ms: 1000.0,
            total_cpu_pct: 1.0,
            processes: vec![process],
            roles: vec![],
            gone_pids: vec![],
            threads_omitted: 0,
        };
        let value = |b: &[u8]| serde_json::from_slice::<serde_json::Value>(b).unwrap();
        let body = history_event(2, &history, None, 64 * 1024).unwrap();
        let want = serde_json::to_vec(&HostToExtension::Event {
            subscription: 2,
            event: Box::new(HostEvent::History {
                history: history.clone(),
                report: None,
            }),
        })
        .unwrap();
        assert_eq!(value(&body), value(&want));

        let body = history_event(2, &history, Some(report), 64 * 1024).unwrap();
        assert!(body.len() <= 64 * 1024);
        let v = value(&body);
        assert_eq!(
            v["event"]["history"],
            serde_json::to_value(&history).unwrap()
        );
        let kept = v["event"]["report"]["processes"][0]["threads"]
            .as_array()
            .unwrap();
        assert!(kept.len() > 100, "{} threads kept", kept.len());
        assert_eq!(kept[0]["comm"], "thread-02999"); // the busiest first
        assert_eq!(
            v["event"]["report"]["threads_omitted"].as_u64().unwrap() as usize + kept.len(),
            3000
        );
    }

    #[test]
    fn in_place_cpu_encoding_is_the_enum_encoding() {
        let report = CpuReport {
            window_ms: 1000.0,
            total_cpu_pct: -0.0,
            processes: vec![],
            roles: vec![],
            gone_pids: vec![4],
            threads_omitted: 0,
        };
        let event = cpu_event(3, report.clone(), 1 << 20).unwrap();
        let want = serde_json::to_vec(&HostToExtension::Event {
            subscription: 3,
            event: Box::new(HostEvent::Cpu {
                report: report.clone(),
            }),
        })
        .unwrap();
        let value = |b: &[u8]| serde_json::from_slice::<serde_json::Value>(b).unwrap();
        assert_eq!(value(&event), value(&want));
        // -0.0 went out as 0.0.
        assert!(String::from_utf8_lossy(&event).contains(r#""total_cpu_pct":0.0"#));
        let result = cpu_result(9, report.clone(), 1 << 20);
        let want = serde_json::to_vec(&HostToExtension::Result {
            id: 9,
            result: serde_json::to_value(&report).unwrap(),
        })
        .unwrap();
        assert_eq!(value(&result), value(&want));
    }

    fn thread(tid: u32, cpu_pct: f64) -> ThreadRates {
        ThreadRates {
            rates: Rates {
                cpu_pct,
                user_pct: cpu_pct,
                ..Rates::default()
            },
            ..ThreadRates::idle(tid, format!("t{tid}"))
        }
    }

    #[test]
    fn drop_lowest_threads_keeps_the_busy_ones() {
        let process = |pid, threads: Vec<ThreadRates>| ProcessRates {
            thread_count: threads.len(),
            threads,
            ..ProcessRates::idle(pid, 1, "p", Role::Other)
        };
        let mut report = CpuReport {
            window_ms: 100.0,
            total_cpu_pct: 0.0,
            roles: vec![],
            threads_omitted: 0,
            gone_pids: vec![],
            processes: vec![
                process(1, vec![thread(1, 5.0), thread(2, 0.1)]),
                process(2, vec![thread(3, 0.2), thread(4, 3.0)]),
            ],
        };
        drop_lowest_threads(&mut report, 2);
        let left: Vec<u32> = report
            .processes
            .iter()
            .flat_map(|p| p.threads.iter().map(|t| t.tid))
            .collect();
        assert_eq!(left, vec![1, 4]);
        assert_eq!(report.threads_omitted, 2);
    }
}
