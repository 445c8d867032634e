//! The result as text: a header (warnings first), the per-mode table of each latency, the sweep
//! table and the chart's path ([`write_text`]). No I/O besides the writer it is given.

use std::io::{self, Write};

use crate::report::figures::{Columns, Figures};
use crate::report::mode::Mode;
use crate::report::result::BenchResult;
use crate::report::runs::{saving_pct, Summary};
use crate::report::saving::saving_note;

/// The figures each table shows, one block of rows per metric.
#[derive(Debug, Clone, Copy)]
enum Metric {
    Cpu,
    Wakeups,
    Reads,
    Writes,
}

impl Metric {
    const ALL: [Metric; 4] = [Metric::Cpu, Metric::Wakeups, Metric::Reads, Metric::Writes];

    fn title(self) -> &'static str {
        match self {
            Metric::Cpu => "CPU % of one core",
            Metric::Wakeups => "wakeups/s (context switches)",
            Metric::Reads => "read syscalls/s",
            Metric::Writes => "write syscalls/s",
        }
    }

    /// This metric of `f`.
    fn of(self, f: &Figures) -> f64 {
        match self {
            Metric::Cpu => f.cpu_pct,
            Metric::Wakeups => f.wakeups_per_s,
            Metric::Reads => f.read_syscalls_per_s,
            Metric::Writes => f.write_syscalls_per_s,
        }
    }

    fn fmt(self, v: f64) -> String {
        match self {
            Metric::Cpu => format!("{v:.2}"),
            _ => format!("{v:.0}"),
        }
    }
}

pub fn fmt_ms(us: Option<u64>) -> String {
    match us {
        Some(us) => format!("{:.1} ms", us as f64 / 1000.0),
        None => "-".to_string(),
    }
}

fn fmt_pct(p: Option<f64>) -> String {
    match p {
        Some(p) => format!("{p:+.1} %"),
        None => "-".to_string(),
    }
}

/// Label of the idle-baseline row (the server measured with no bench client connected).
pub const BASELINE_LABEL: &str = "server alone (idle)";

/// The per-mode table of one latency, like the seeds': per metric, one row per mode with the
/// client, server main thread, server device thread(s) and total, and srbchannel's saving; then
/// the server's idle baseline (its work with no bench client: subtract it from the server
/// columns to see what the client alone costs the server).
pub fn write_table(
    out: &mut dyn Write,
    summaries: &[&Summary],
    baseline: Option<&Columns>,
) -> io::Result<()> {
    writeln!(
        out,
        "{:<16} {:<15} {:>10} {:>10} {:>10}",
        "mode", "srbchannel", "granted", "latency", "callbacks/s"
    )?;
    for s in summaries {
        let cbs = s
            .callbacks_per_s
            .map_or_else(|| "-".to_string(), |c| format!("{c:.0}"));
        writeln!(
            out,
            "{:<16} {:<15} {:>10} {:>10} {:>10}",
            s.mode.label(),
            s.srbchannel.label(),
            fmt_ms(s.granted_us),
            fmt_ms(s.latency_us),
            cbs
        )?;
    }
    let off = summaries.iter().find(|b| b.mode == Mode::SrbchannelOff);
    for m in Metric::ALL {
        writeln!(out)?;
        writeln!(
            out,
            "{:<30} {:>9} {:>11} {:>13} {:>9} {:>9}",
            m.title(),
            "client",
            "server main",
            "server device",
            "total",
            "saving"
        )?;
        for s in summaries {
            let c = &s.columns;
            let void = |o: &&Summary| saving_note(s.srbchannel, o.srbchannel).voids_saving();
            let saving = match (s.mode, m) {
                (Mode::SrbchannelOn, _) if off.is_some_and(void) => "n/a".to_string(),
                (Mode::SrbchannelOn, Metric::Cpu) => fmt_pct(s.cpu_saving_pct),
                (Mode::SrbchannelOn, Metric::Wakeups) => fmt_pct(s.wakeups_saving_pct),
                (Mode::SrbchannelOn, _) => {
                    fmt_pct(off.and_then(|b| saving_pct(m.of(&b.columns.total), m.of(&c.total))))
                }
                _ => String::new(),
            };
            writeln!(
                out,
                "  {:<28} {:>9} {:>11} {:>13} {:>9} {:>9}",
                s.mode.label(),
                m.fmt(m.of(&c.client)),
                m.fmt(m.of(&c.server_main)),
                m.fmt(m.of(&c.server_device)),
                m.fmt(m.of(&c.total)),
                saving
            )?;
        }
        if let Some(b) = baseline {
            writeln!(
                out,
                "  {:<28} {:>9} {:>11} {:>13} {:>9} {:>9}",
                BASELINE_LABEL,
                "-",
                m.fmt(m.of(&b.server_main)),
                m.fmt(m.of(&b.server_device)),
                m.fmt(m.of(&b.total)),
                ""
            )?;
        }
    }
    writeln!(out)?;
    writeln!(out, "{SYSCALLS_FOOTNOTE}")?;
    for s in summaries {
        if let Some(note) = &s.saving_note {
            writeln!(out)?;
            writeln!(out, "{}: {note}", s.mode.label())?;
        }
    }
    Ok(())
}

/// What the read/write columns count (measured with strace: see docs/design/srbchannel-bench.md).
pub const SYSCALLS_FOOTNOTE: &str = "read/write syscalls: read()/write() calls as /proc/<pid>/io counts them (eventfds, pipes); socket sendto/recvmsg are not counted, so the socket path's audio traffic does not show there";

/// Seed 000's table: CPU against the requested latency, one row per (latency, mode), and the
/// server's idle baseline as its own row.
pub fn write_sweep(
    out: &mut dyn Write,
    summaries: &[Summary],
    baseline: Option<&Columns>,
) -> io::Result<()> {
    writeln!(
        out,
        "| requested | mode | granted | client CPU % | server main % | server device % | total CPU % | wakeups/s |"
    )?;
    writeln!(out, "|---:|---|---:|---:|---:|---:|---:|---:|")?;
    for s in summaries {
        let c = &s.columns;
        writeln!(
            out,
            "| {} ms | {} | {} | {:.2} | {:.2} | {:.2} | {:.2} | {:.0} |",
            s.latency_ms,
            s.mode.label(),
            fmt_ms(s.granted_us),
            c.client.cpu_pct,
            c.server_main.cpu_pct,
            c.server_device.cpu_pct,
            c.total.cpu_pct,
            c.total.wakeups_per_s
        )?;
    }
    if let Some(b) = baseline {
        writeln!(
            out,
            "| - | {BASELINE_LABEL} | - | - | {:.2} | {:.2} | {:.2} | {:.0} |",
            b.server_main.cpu_pct, b.server_device.cpu_pct, b.total.cpu_pct, b.total.wakeups_per_s
        )?;
    }
    Ok(())
}

/// The whole run as text: a header (warnings first), one table per latency, the sweep table and chart
/// path.
pub fn write_text(out: &mut dyn Write, r: &BenchResult) -> io::Result<()> {
    let s = &r.server;
    writeln!(
        out,
        "micoff bench: {}, {:.1} s window, {} run(s) per mode{}",
        r.direction.as_str(),
        r.window_s,
        r.repeat,
        if r.repeat > 1 { " (medians)" } else { "" }
    )?;
    writeln!(
        out,
        "server: {} {} (protocol {}, pid {}), srbchannel {}; device thread(s): {}",
        s.name,
        s.version,
        s.protocol_version
            .map_or_else(|| "?".into(), |p| p.to_string()),
        s.pid.map_or_else(|| "unknown".into(), |p| p.to_string()),
        s.srbchannel.label(),
        if s.device_threads.is_empty() {
            "-".to_string()
        } else {
            s.device_threads.join(", ")
        }
    )?;
    for w in &r.warnings {
        writeln!(out, "WARNING: {w}")?;
    }
    for note in &r.notes {
        writeln!(out, "note: {note}")?;
    }
    if let Some(b) = &r.baseline {
        writeln!(
            out,
            "idle baseline: the server alone for {:.1} s before the modes (row \"{}\")",
            b.window_s, BASELINE_LABEL
        )?;
    }
    let baseline = r.baseline.as_ref().map(|b| &b.columns);
    for &lat in &r.latencies_ms {
        let rows: Vec<&Summary> = r.summaries.iter().filter(|x| x.latency_ms == lat).collect();
        writeln!(out)?;
        writeln!(out, "== requested {lat} ms ==")?;
        write_table(out, &rows, baseline)?;
    }
    if r.latencies_ms.len() > 1 {
        writeln!(out)?;
        writeln!(out, "== CPU against requested latency ==")?;
        write_sweep(out, &r.summaries, baseline)?;
    }
    if let Some(c) = &r.chart {
        writeln!(out)?;
        writeln!(out, "chart: {}", c.display())?;
    }
    Ok(())
}
