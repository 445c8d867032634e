//! Text rendering of CPU reports and streams (pidstat-like), shared by `sample` and `top`.

use std::io::{self, Write};

use micoff_proc::browser_family_of_name;

use crate::protocol::{AudioStream, BrowserFamily, CpuReport, Role, StreamKind};

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

/// Per role: totals; per process: a header (pid, role, cpu); per thread: tid, name, usr%, sys%,
/// cpu%, run ms, voluntary and involuntary context switches/s, rd/s, wr/s. `max_threads` limits
/// the rows per process (`None`: all).
pub fn write_report(
    out: &mut dyn Write,
    report: &CpuReport,
    max_threads: Option<usize>,
) -> io::Result<()> {
    writeln!(
        out,
        "window {:.0} ms, total {:.1} % of one core{}",
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
            "  {:<30} {:>3} proc {:>4} thr  cpu {:>6.1} %  usr {:>5.1}  sys {:>5.1}  wakeups/s {:>7}",
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
            "\n{:>7}  {:<16} {:<16} cpu {:>6.1} %  usr {:>5.1}  sys {:>5.1}  wakeups/s {:>7}  threads {}",
            p.pid,
            role_name(p.role, &p.comm),
            p.comm,
            p.rates.cpu_pct,
            p.rates.user_pct,
            p.rates.system_pct,
            opt(p.rates.wakeups_per_s),
            p.thread_count
        )?;
        writeln!(
            out,
            "{:>7}  {:<16} {:>6} {:>6} {:>6} {:>7} {:>7} {:>7} {:>7} {:>7}",
            "tid", "thread", "usr%", "sys%", "cpu%", "run ms", "cswch/s", "nvcsw/s", "rd/s", "wr/s"
        )?;
        let shown = max_threads.unwrap_or(usize::MAX);
        for t in p.threads.iter().take(shown) {
            writeln!(
                out,
                "{:>7}  {:<16} {:>6.1} {:>6.1} {:>6.1} {:>7} {:>7} {:>7} {:>7} {:>7}",
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
        if p.threads.len() > shown {
            writeln!(
                out,
                "{:>7}  ... {} more threads",
                "",
                p.threads.len() - shown
            )?;
        }
    }
    if report.threads_omitted > 0 {
        writeln!(out, "({} low-CPU threads omitted)", report.threads_omitted)?;
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
