//! Text rendering of CPU reports and streams (pidstat-like), shared by `sample` and `top`, and
//! what both do to a report before showing it: idle threads hidden ([`hide_idle`]) and the time
//! it was taken ([`Shown`]).

use std::io::{self, Write};

use micoff_proc::browser_family_of_name;

use micoff_native::protocol::{AudioStream, BrowserFamily, CpuReport, Rates, Role, StreamKind};

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

/// A header with the time and the window; per role: totals; per process: a header (pid, role,
/// %CPU); per thread: TID, Command, %usr, %system, %CPU, run_ms, cswch/s, nvcswch/s, rdcalls/s,
/// wrcalls/s ([`COLUMNS_HELP`]). `max_threads` limits the rows per process (`None`: all).
pub fn write_report(
    out: &mut dyn Write,
    report: &CpuReport,
    shown: &Shown,
    max_threads: Option<usize>,
) -> io::Result<()> {
    writeln!(
        out,
        "{}  window {:.0} ms, total {:.1} % of one core{}",
        crate::clock::header_time(&shown.time),
        report.window_ms,
        report.total_cpu_pct,
        if report.gone_pids.is_empty() {
            String::new()
        } else {
            format!(", gone: {:?}", report.gone_pids)
        }
    )?;
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
        )?;
    }
    Ok(())
}
