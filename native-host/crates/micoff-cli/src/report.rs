//! Text rendering of CPU reports and streams (pidstat-like), shared by `sample` and `top`, and
//! what both do to a report before showing it: idle threads hidden ([`hide_idle`]) and the time
//! it was taken ([`Shown`]).

use std::io::{self, Write};

use micoff_proc::browser_family_of_name;

use micoff_native::protocol::{
    AudioStream, BrowserFamily, CpuReport, ProcessRates, Rates, Role, StreamKind, ThreadRates,
};

/// What the columns count, for `top`'s and `sample`'s `--help` (and docs/cli.md's table).
pub const COLUMNS_HELP: &str = "Columns, named as pidstat names them: %usr, %system, %CPU: % of \
    one core, in user space, in the kernel, both; run_ms: milliseconds on a core in the window; \
    cswch/s: voluntary context switches per second (the thread slept and was woken: a wakeup); \
    nvcswch/s: involuntary context switches per second (it was preempted); rdcalls/s, \
    wrcalls/s: read and write system calls per second; wakeups/s = cswch/s + nvcswch/s. Idle \
    threads (no CPU time and no context switch in the window) are left out unless --all.";

/// A thread that did nothing over the window: no CPU time and no wakeup (voluntary or not).
pub fn is_idle(r: &Rates) -> bool {
    r.cpu_pct == 0.0 && r.wakeups_per_s.is_none_or(|w| w == 0.0)
}

/// Takes the idle threads ([`is_idle`]) out of every process's thread list (process and role
/// totals stay as measured); how many it took out.
pub fn hide_idle(report: &mut CpuReport) -> usize {
    let mut hidden = 0;
    for p in &mut report.processes {
        let before = p.threads.len();
        p.threads.retain(|t| !is_idle(&t.rates));
        hidden += before - p.threads.len();
    }
    hidden
}

/// A report as `top` and `sample` show it: when it was taken (RFC 3339, local time) and how many
/// idle threads were left out of it. The JSON of `sample --json` and of each `top --json` line
/// carries these beside the report.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Shown {
    pub time: String,
    pub idle_threads_hidden: usize,
}

impl Shown {
    /// Stamps `report` now, taking its idle threads out unless `all`.
    pub fn now(report: &mut CpuReport, all: bool) -> Self {
        let idle_threads_hidden = if all { 0 } else { hide_idle(report) };
        Self {
            time: crate::clock::rfc3339_local(std::time::SystemTime::now()),
            idle_threads_hidden,
        }
    }
}

/// Firefox calls its main process the "parent" process; the protocol's role id stays `browser`
/// (one id for every family's main process), only the tables say `parent`.
fn is_firefox_main(role: Role, comm: &str) -> bool {
    role == Role::Browser && browser_family_of_name(comm) == Some(BrowserFamily::Firefox)
}

/// The role as the process rows show it.
pub fn role_name(role: Role, comm: &str) -> &'static str {
    if is_firefox_main(role, comm) {
        "parent"
    } else {
        role.as_str()
    }
}

/// The label of a role total: `browser` totals of Firefox main processes only read `parent`.
fn role_label<'a>(report: &CpuReport, role: Role, label: &'a str) -> &'a str {
    if role != Role::Browser {
        return label;
    }
    // (main processes, Firefox ones among them), in one pass.
    let (mains, firefox) = report
        .processes
        .iter()
        .filter(|p| p.role == role)
        .fold((0usize, 0usize), |(n, ff), p| {
            (n + 1, ff + usize::from(is_firefox_main(p.role, &p.comm)))
        });
    match firefox {
        0 => label,
        _ if firefox == mains => "parent (Firefox main process)",
        _ => "browser / parent (main processes)",
    }
}

fn opt(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_owned(), |v| format!("{v:.0}"))
}

fn opt_ms(v: Option<u64>) -> String {
    v.map_or_else(|| "-".to_owned(), |v| format!("{:.1}", v as f64 / 1e6))
}

/// A report's first line: the time it was taken, the window, the total, the pids gone in it.
fn write_header(out: &mut dyn Write, report: &CpuReport, shown: &Shown) -> io::Result<()> {
    let gone = if report.gone_pids.is_empty() {
        String::new()
    } else {
        format!(", gone: {:?}", report.gone_pids)
    };
    writeln!(
        out,
        "{}  window {:.0} ms, total {:.1} % of one core{gone}",
        crate::clock::header_time(&shown.time),
        report.window_ms,
        report.total_cpu_pct,
    )
}

/// A header with the time and the window; per role: totals; per process: a header (pid, role,
/// %CPU); per thread: TID, Command, %usr, %system, %CPU, run_ms, cswch/s, nvcswch/s, rdcalls/s,
/// wrcalls/s ([`COLUMNS_HELP`]). `max_threads` limits the rows per process (`None`: all).
pub fn write_report(
    out: &mut dyn Write,
    report: &CpuReport,
    shown: &Shown,
    max_threads: Option<usize>,
) -> io::Result<()> {
    write_header(out, report, shown)?;
    for r in &report.roles {
        writeln!(
            out,
            "  {:<30} {:>3} proc {:>4} thr  %CPU {:>6.1}  %usr {:>5.1}  %system {:>5.1}  wakeups/s {:>7}",
            role_label(report, r.role, &r.label),
            r.process_count,
            r.thread_count,
            r.cpu_pct,
            r.user_pct,
            r.system_pct,
            opt(r.wakeups_per_s)
        )?;
    }
    for p in &report.processes {
        writeln!(
            out,
            "\n{:>7}  {:<16} {:<16} %CPU {:>6.1}  %usr {:>5.1}  %system {:>5.1}  wakeups/s {:>7}  threads {}",
            p.pid,
            role_name(p.role, &p.comm),
            p.comm,
            p.rates.cpu_pct,
            p.rates.user_pct,
            p.rates.system_pct,
            opt(p.rates.wakeups_per_s),
            p.thread_count
        )?;
        if p.threads.is_empty() {
            continue;
        }
        writeln!(
            out,
            "{:>7}  {:<16} {:>6} {:>7} {:>6} {:>7} {:>7} {:>9} {:>9} {:>9}",
            "TID",
            "Command",
            "%usr",
            "%system",
            "%CPU",
            "run_ms",
            "cswch/s",
            "nvcswch/s",
            "rdcalls/s",
            "wrcalls/s"
        )?;
        let shown_rows = max_threads.unwrap_or(usize::MAX);
        for t in p.threads.iter().take(shown_rows) {
            writeln!(
                out,
                "{:>7}  {:<16} {:>6.1} {:>7.1} {:>6.1} {:>7} {:>7} {:>9} {:>9} {:>9}",
                t.tid,
                t.comm,
                t.rates.user_pct,
                t.rates.system_pct,
                t.rates.cpu_pct,
                opt_ms(t.rates.run_time_ns),
                opt(t.rates.voluntary_ctxt_per_s),
                opt(t.rates.involuntary_ctxt_per_s),
                opt(t.rates.read_syscalls_per_s),
                opt(t.rates.write_syscalls_per_s)
            )?;
        }
        if p.threads.len() > shown_rows {
            writeln!(
                out,
                "{:>7}  ... {} more threads",
                "",
                p.threads.len() - shown_rows
            )?;
        }
    }
    if report.threads_omitted > 0 {
        writeln!(out, "({} low-CPU threads omitted)", report.threads_omitted)?;
    }
    if shown.idle_threads_hidden > 0 {
        writeln!(
            out,
            "({} idle threads not shown: no CPU time and no wakeup in the window; --all shows them)",
            shown.idle_threads_hidden
        )?;
    }
    Ok(())
}

pub fn write_streams(out: &mut dyn Write, streams: &[AudioStream]) -> io::Result<()> {
    writeln!(out, "\naudio server streams:")?;
    if streams.is_empty() {
        writeln!(out, "  (none)")?;
    }
    for s in streams {
        write_stream(out, s)?;
    }
    Ok(())
}

/// One stream's line.
fn write_stream(out: &mut dyn Write, s: &AudioStream) -> io::Result<()> {
    let kind = match s.kind {
        StreamKind::Record => "record",
        StreamKind::Playback => "playback",
    };
    writeln!(
            out,
            "  {kind:<8} #{:<4} {:<20} pid {:<7} {} Hz x{} {}  on {} ({})  buffer {:.1} ms  device {:.1} ms{}{}",
            s.index,
            s.application_name.as_deref().unwrap_or("?"),
            s.application_process_id
                .map_or_else(|| "-".to_owned(), |p| p.to_string()),
            s.sample_rate_hz,
            s.channels,
            s.sample_format,
            s.device_name.as_deref().unwrap_or("?"),
            s.device_bus.as_deref().unwrap_or("no bus"),
            s.buffer_latency_us as f64 / 1000.0,
            s.device_latency_us as f64 / 1000.0,
            if s.corked { "  corked" } else { "" },
            if s.muted { "  muted" } else { "" },
        )
}

/// `top`'s compact view: at most `lines` lines (when `lines` leaves room for one process and one
/// thread row): the header, the role totals, the busiest processes (one row each), the busiest
/// threads of them all (one table), what was left out, the audio server's streams. [`write_report`]
/// is the full view (every process with its threads).
pub fn write_compact(
    out: &mut dyn Write,
    report: &CpuReport,
    shown: &Shown,
    streams: &[AudioStream],
    lines: usize,
) -> io::Result<()> {
    let mut threads: Vec<(&ProcessRates, &ThreadRates)> = report
        .processes
        .iter()
        .flat_map(|p| p.threads.iter().map(move |t| (p, t)))
        .collect();
    threads.sort_by(|a, b| b.1.rates.cpu_pct.total_cmp(&a.1.rates.cpu_pct));
    // Fixed lines: the header, the role totals, the two notes at most, the streams.
    let notes = usize::from(shown.idle_threads_hidden > 0) + 1;
    let stream_lines = if streams.is_empty() {
        1
    } else {
        1 + streams.len()
    };
    let fixed = 1 + report.roles.len() + notes + stream_lines;
    // Each table: a blank line and its column header, then its rows.
    let room = lines.saturating_sub(fixed + 4);
    // A third of the rows for processes (at most COMPACT_PROCESSES), the rest for threads; rows
    // the threads leave go back to processes.
    let fit = |n: usize, most: usize| n.min(most).max(1);
    let process_rows = fit(report.processes.len().min(COMPACT_PROCESSES), room / 3);
    let thread_rows = fit(threads.len(), room.saturating_sub(process_rows));
    let process_rows = fit(
        report.processes.len().min(COMPACT_PROCESSES),
        room.saturating_sub(thread_rows),
    );
    write_header(out, report, shown)?;
    for r in &report.roles {
        writeln!(
            out,
            "  {:<30} {:>3} proc {:>4} thr  %CPU {:>6.1}  wakeups/s {:>7}",
            role_label(report, r.role, &r.label),
            r.process_count,
            r.thread_count,
            r.cpu_pct,
            opt(r.wakeups_per_s)
        )?;
    }
    writeln!(
        out,
        "\n{:>7}  {:<16} {:<16} {:>6} {:>9} {:>7}",
        "PID", "Role", "Command", "%CPU", "wakeups/s", "threads"
    )?;
    for p in report.processes.iter().take(process_rows) {
        writeln!(
            out,
            "{:>7}  {:<16} {:<16} {:>6.1} {:>9} {:>7}",
            p.pid,
            role_name(p.role, &p.comm),
            p.comm,
            p.rates.cpu_pct,
            opt(p.rates.wakeups_per_s),
            p.thread_count
        )?;
    }
    writeln!(
        out,
        "\n{:>7}  {:>7}  {:<16} {:>6} {:>7} {:>6} {:>7} {:>7} {:>9} {:>9} {:>9}",
        "TID",
        "PID",
        "Command",
        "%usr",
        "%system",
        "%CPU",
        "run_ms",
        "cswch/s",
        "nvcswch/s",
        "rdcalls/s",
        "wrcalls/s"
    )?;
    if threads.is_empty() {
        writeln!(out, "{:>7}  (no thread to show)", "")?;
    }
    for (p, t) in threads.iter().take(thread_rows) {
        writeln!(
            out,
            "{:>7}  {:>7}  {:<16} {:>6.1} {:>7.1} {:>6.1} {:>7} {:>7} {:>9} {:>9} {:>9}",
            t.tid,
            p.pid,
            t.comm,
            t.rates.user_pct,
            t.rates.system_pct,
            t.rates.cpu_pct,
            opt_ms(t.rates.run_time_ns),
            opt(t.rates.voluntary_ctxt_per_s),
            opt(t.rates.involuntary_ctxt_per_s),
            opt(t.rates.read_syscalls_per_s),
            opt(t.rates.write_syscalls_per_s)
        )?;
    }
    let more_processes = report.processes.len().saturating_sub(process_rows);
    let more_threads = threads.len().saturating_sub(thread_rows) as u64 + report.threads_omitted;
    writeln!(
        out,
        "({more_processes} more processes, {more_threads} more threads; --full shows every process and its threads)"
    )?;
    if shown.idle_threads_hidden > 0 {
        writeln!(
            out,
            "({} idle threads not shown; --all shows them)",
            shown.idle_threads_hidden
        )?;
    }
    if streams.is_empty() {
        return writeln!(out, "audio server streams: none");
    }
    writeln!(out, "audio server streams:")?;
    for s in streams {
        write_stream(out, s)?;
    }
    Ok(())
}

/// Process rows in `top`'s compact view, at most.
pub const COMPACT_PROCESSES: usize = 5;

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use micoff_native::protocol::RoleTotals;

    use super::*;

    /// `processes` processes of `threads` threads each, thread `t` of process `p` at `p + t` %
    /// (the busiest thread: the last process's last one), `roles` role totals.
    fn report(processes: u32, threads: u32, roles: usize) -> CpuReport {
        let rates = |cpu_pct: f64| Rates {
            cpu_pct,
            wakeups_per_s: Some(10.0),
            ..Rates::default()
        };
        let mut processes: Vec<ProcessRates> = (1..=processes)
            .map(|p| ProcessRates {
                rates: rates(f64::from(p * threads)),
                thread_count: threads as usize,
                threads: (1..=threads)
                    .rev()
                    .map(|t| ThreadRates {
                        rates: rates(f64::from(p + t)),
                        ..ThreadRates::idle(p * 1000 + t, format!("thread-{p}-{t}"))
                    })
                    .collect(),
                ..ProcessRates::idle(p, 1, "chromium", Role::Renderer)
            })
            .collect();
        processes.reverse();
        CpuReport {
            window_ms: 1000.0,
            total_cpu_pct: 1.0,
            processes,
            roles: (0..roles)
                .map(|i| RoleTotals {
                    role: Role::Renderer,
                    label: format!("role {i}"),
                    process_count: 1,
                    thread_count: 1,
                    cpu_pct: 1.0,
                    user_pct: 1.0,
                    system_pct: 0.0,
                    wakeups_per_s: None,
                    read_syscalls_per_s: None,
                    write_syscalls_per_s: None,
                })
                .collect(),
            gone_pids: vec![],
            threads_omitted: 0,
        }
    }

    fn shown(idle: usize) -> Shown {
        Shown {
            time: "2026-11-28T20:00:00.000+00:00".into(),
            idle_threads_hidden: idle,
        }
    }

    fn compact(report: &CpuReport, idle: usize, lines: usize) -> String {
        let mut out = Vec::new();
        write_compact(&mut out, report, &shown(idle), &[], lines).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn the_compact_view_fits_its_lines_and_shows_the_busiest_first() {
        let big = report(30, 12, 8);
        for lines in [12, 23, 40, 100] {
            let text = compact(&big, 5, lines);
            let n = text.lines().count();
            assert!(n <= lines.max(19), "{lines}: {n} lines\n{text}");
        }
        // The full view of the same report: a table per process.
        let mut full = Vec::new();
        write_report(&mut full, &big, &shown(5), Some(8)).unwrap();
        assert!(String::from_utf8(full).unwrap().lines().count() > 300);

        let text = compact(&big, 0, 23);
        let rows: Vec<&str> = text.lines().collect();
        // The busiest thread (42 %: process 30's thread 12) heads the thread table, under its
        // process; the busiest process heads the process table.
        let head = rows
            .iter()
            .position(|l| l.trim_start().starts_with("TID"))
            .unwrap();
        assert!(
            rows[head + 1].contains("30012") && rows[head + 1].contains("42.0"),
            "{text}"
        );
        let procs = rows
            .iter()
            .position(|l| l.trim_start().starts_with("PID"))
            .unwrap();
        assert!(rows[procs + 1].trim_start().starts_with("30 "), "{text}");
        // What was left out is counted: 23 lines, 8 roles: 2 process rows, 6 thread rows.
        assert!(
            text.contains("(28 more processes, 354 more threads; --full"),
            "{text}"
        );
        assert_eq!(text.lines().count(), 23, "{text}");
    }

    #[test]
    fn a_small_report_is_shown_whole() {
        let text = compact(&report(2, 2, 1), 0, 24);
        assert!(text.contains("(0 more processes, 0 more threads"), "{text}");
        assert!(text.contains("audio server streams: none"), "{text}");
        let text = compact(&report(0, 0, 0), 0, 24);
        assert!(text.contains("(no thread to show)"), "{text}");
    }
}
