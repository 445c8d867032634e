//! Text rendering of CPU reports and streams (pidstat-like), shared by `sample` and `top`.

use std::io::{self, Write};

use crate::protocol::{AudioStream, CpuReport, StreamKind};

fn opt(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_owned(), |v| format!("{v:.0}"))
}

/// Per process: a header (pid, role, cpu); per thread: tid, name, usr%, sys%, cpu%, wakeups/s,
/// rd/s, wr/s. `max_threads` limits the rows per process (`None`: all).
pub fn write_report(
    out: &mut dyn Write,
    report: &CpuReport,
    max_threads: Option<usize>,
) -> io::Result<()> {
    writeln!(
        out,
        "window {:.0} ms, total {:.1} % of one core{}",
        report.elapsed_ms,
        report.total_cpu_pct,
        if report.gone_pids.is_empty() {
            String::new()
        } else {
            format!(", gone: {:?}", report.gone_pids)
        }
    )?;
    for p in &report.processes {
        writeln!(
            out,
            "\n{:>7}  {:<16} {:<16} cpu {:>6.1} %  usr {:>5.1}  sys {:>5.1}  wakeups/s {:>7.0}",
            p.pid, p.role, p.name, p.cpu_pct, p.usr_pct, p.sys_pct, p.wakeups_per_s
        )?;
        writeln!(
            out,
            "{:>7}  {:<16} {:>6} {:>6} {:>6} {:>10} {:>7} {:>7}",
            "tid", "thread", "usr%", "sys%", "cpu%", "wakeups/s", "rd/s", "wr/s"
        )?;
        let shown = max_threads.unwrap_or(usize::MAX);
        for t in p.threads.iter().take(shown) {
            writeln!(
                out,
                "{:>7}  {:<16} {:>6.1} {:>6.1} {:>6.1} {:>10.0} {:>7} {:>7}",
                t.tid,
                t.name,
                t.usr_pct,
                t.sys_pct,
                t.cpu_pct,
                t.wakeups_per_s,
                opt(t.read_syscalls_per_s),
                opt(t.write_syscalls_per_s)
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
            "  {kind:<8} #{:<4} {:<20} pid {:<7} {} Hz x{} {}  buffer {:.1} ms  device {:.1} ms{}{}",
            s.index,
            s.application_name.as_deref().unwrap_or("?"),
            s.application_process_id.map_or_else(|| "-".to_owned(), |p| p.to_string()),
            s.sample_rate_hz,
            s.channels,
            s.sample_format,
            s.buffer_latency_us as f64 / 1000.0,
            s.device_latency_us as f64 / 1000.0,
            if s.corked { "  corked" } else { "" },
            if s.muted { "  muted" } else { "" },
        )?;
    }
    Ok(())
}
