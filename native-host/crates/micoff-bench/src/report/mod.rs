//! The report arithmetic and its rendering: per-thread rates grouped into the seeds' columns
//! (client, server main thread, server device thread(s), total), medians over repeats, the relative
//! saving of srbchannel, the latency sweep table; the run's result ([`BenchResult`]) and its text
//! form ([`write_text`]). Pure: no I/O besides the writer it is given.

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::sample::ThreadRates;
use crate::Direction;

/// How the measured client talked to the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Our client, shared memory on: PulseAudio offers srbchannel.
    SrbchannelOn,
    /// Our client, `enable-shm = no`, `enable-memfd = no`: control over the socket (iochannel).
    SrbchannelOff,
    /// Our client on a server without shared memory (pipewire-pulse): the socket is all there is.
    Socket,
    /// parec / pacat at the same latency, the outside reference.
    Reference,
}

impl Mode {
    pub fn label(self) -> &'static str {
        match self {
            Mode::SrbchannelOn => "srbchannel on",
            Mode::SrbchannelOff => "srbchannel off",
            Mode::Socket => "socket only",
            Mode::Reference => "parec/pacat",
        }
    }
}

/// Whether srbchannel carried the control channel, as seen from the client's file descriptors
/// (srbchannel hands the client two eventfds; the iochannel path has none).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SrbchannelState {
    Active,
    Inactive,
    NotApplicable,
    Unknown,
}

impl SrbchannelState {
    pub fn label(self) -> &'static str {
        match self {
            SrbchannelState::Active => "active",
            SrbchannelState::Inactive => "inactive",
            SrbchannelState::NotApplicable => "not applicable",
            SrbchannelState::Unknown => "unknown",
        }
    }

    pub fn from_eventfds(eventfds: Option<usize>) -> Self {
        match eventfds {
            Some(n) if n >= 2 => SrbchannelState::Active,
            Some(_) => SrbchannelState::Inactive,
            None => SrbchannelState::Unknown,
        }
    }
}

/// What the run showed about srbchannel at this server (the header's "srbchannel ..."). Derived
/// from what happened to the measured clients, never assumed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SrbchannelAvailability {
    /// Every `on` window's client held srbchannel's eventfds.
    Available,
    /// At least one `on` window's client did not get srbchannel: `on` and `off` were the same
    /// kind of client.
    NotGranted,
    /// pipewire-pulse: no shared memory, no srbchannel.
    NotApplicable,
    /// No `on` window was run (`--srbchannel off`).
    NotMeasured,
    /// The client's file descriptors could not be read.
    #[default]
    Unknown,
}

impl SrbchannelAvailability {
    pub fn label(self) -> &'static str {
        match self {
            SrbchannelAvailability::Available => "available (the on client got it)",
            SrbchannelAvailability::NotGranted => "NOT GRANTED to the on client",
            SrbchannelAvailability::NotApplicable => "not applicable",
            SrbchannelAvailability::NotMeasured => "not measured (no on window)",
            SrbchannelAvailability::Unknown => "unknown (client fds unreadable)",
        }
    }

    /// From the `on` windows: all active = available, any inactive = not granted.
    pub fn from_runs(runs: &[Run], pipewire: bool) -> Self {
        if pipewire {
            return SrbchannelAvailability::NotApplicable;
        }
        let on: Vec<SrbchannelState> = runs
            .iter()
            .filter(|r| r.mode == Mode::SrbchannelOn)
            .map(|r| r.srbchannel)
            .collect();
        if on.is_empty() {
            SrbchannelAvailability::NotMeasured
        } else if on.contains(&SrbchannelState::Inactive) {
            SrbchannelAvailability::NotGranted
        } else if on.iter().all(|s| *s == SrbchannelState::Active) {
            SrbchannelAvailability::Available
        } else {
            SrbchannelAvailability::Unknown
        }
    }
}

/// What voids the saving column: on and off did not differ in srbchannel. Every text that says
/// so (the rows' notes, the report's warnings) is built from this and [`SAVING_MEANS_NOTHING`].
pub const SAME_CLIENT: &str = "on and off are the same client here";
pub const SAVING_MEANS_NOTHING: &str = "the saving column means nothing";

/// A warning that `what` made on and off the same client: "<what>: on and off are the same
/// client here; the saving column means nothing".
pub fn same_client_warning(what: &str) -> String {
    format!("{what}: {SAME_CLIENT}; {SAVING_MEANS_NOTHING}")
}

/// How far the saving column of an `on` row can be trusted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SavingNote {
    /// The on client had srbchannel and the off client did not: the saving stands, no note.
    Valid,
    /// srbchannel use could not be verified: the saving is given, with a note.
    Unverified,
    /// on and off were the same kind of client (the reason in words): the saving is left out.
    Void(&'static str),
}

impl SavingNote {
    /// True when the saving must be left out (`n/a`, JSON null).
    pub fn voids_saving(self) -> bool {
        matches!(self, SavingNote::Void(_))
    }

    /// The note printed under the table and kept as `saving_note` in the JSON.
    pub fn text(self) -> Option<String> {
        match self {
            SavingNote::Valid => None,
            SavingNote::Unverified => {
                Some("srbchannel use could not be verified; the saving is unverified".into())
            }
            SavingNote::Void(why) => Some(format!("{SAME_CLIENT} ({why}); {SAVING_MEANS_NOTHING}")),
        }
    }
}

/// Whether the saving of an `on` row against its `off` row means anything, from what each got.
pub fn saving_note(on: SrbchannelState, off: SrbchannelState) -> SavingNote {
    match (on, off) {
        (SrbchannelState::Active, SrbchannelState::Inactive) => SavingNote::Valid,
        (SrbchannelState::Inactive, _) => SavingNote::Void("the on client did not get srbchannel"),
        (_, SrbchannelState::Active) => SavingNote::Void("the off client got srbchannel anyway"),
        _ => SavingNote::Unverified,
    }
}

/// Summed rates of a group of threads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Figures {
    pub cpu_pct: f64,
    pub wakeups_per_s: f64,
    pub read_syscalls_per_s: f64,
    pub write_syscalls_per_s: f64,
}

impl Figures {
    pub fn sum<'a>(threads: impl IntoIterator<Item = &'a ThreadRates>) -> Self {
        threads
            .into_iter()
            .fold(Figures::default(), |acc, t| Figures {
                cpu_pct: acc.cpu_pct + t.cpu_pct,
                wakeups_per_s: acc.wakeups_per_s + t.wakeups_per_s,
                read_syscalls_per_s: acc.read_syscalls_per_s + t.read_syscalls_per_s,
                write_syscalls_per_s: acc.write_syscalls_per_s + t.write_syscalls_per_s,
            })
    }

    pub fn plus(self, o: Figures) -> Figures {
        Figures {
            cpu_pct: self.cpu_pct + o.cpu_pct,
            wakeups_per_s: self.wakeups_per_s + o.wakeups_per_s,
            read_syscalls_per_s: self.read_syscalls_per_s + o.read_syscalls_per_s,
            write_syscalls_per_s: self.write_syscalls_per_s + o.write_syscalls_per_s,
        }
    }

    fn get(&self, m: Metric) -> f64 {
        match m {
            Metric::Cpu => self.cpu_pct,
            Metric::Wakeups => self.wakeups_per_s,
            Metric::Reads => self.read_syscalls_per_s,
            Metric::Writes => self.write_syscalls_per_s,
        }
    }
}

/// The seeds' columns.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Columns {
    pub client: Figures,
    pub server_main: Figures,
    pub server_device: Figures,
    pub total: Figures,
}

impl Columns {
    /// Group per-thread rates: all client threads; the server's main thread is the one whose tid
    /// is the server's pid, every other server thread counts as device (I/O) thread.
    pub fn from_threads(client: &[ThreadRates], server: &[ThreadRates], server_pid: u32) -> Self {
        let client = Figures::sum(client);
        let server_main = Figures::sum(server.iter().filter(|t| t.tid == server_pid));
        let server_device = Figures::sum(server.iter().filter(|t| t.tid != server_pid));
        Columns {
            client,
            server_main,
            server_device,
            total: client.plus(server_main).plus(server_device),
        }
    }
}

/// One measured window of one mode.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Run {
    pub mode: Mode,
    pub latency_ms: u32,
    pub window_s: f64,
    pub columns: Columns,
    /// fragsize (record) or tlength (playback) the server granted, in µs.
    pub granted_us: Option<u64>,
    /// Stream latency at the end of the window, in µs.
    pub latency_us: Option<u64>,
    pub srbchannel: SrbchannelState,
    /// Client wakeups the client itself counted (read/write callbacks), per second.
    pub callbacks_per_s: Option<f64>,
    pub client_threads: Vec<ThreadRates>,
    pub server_threads: Vec<ThreadRates>,
}

/// Medians over the repeats of one (latency, mode).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub mode: Mode,
    pub latency_ms: u32,
    pub runs: usize,
    pub columns: Columns,
    pub granted_us: Option<u64>,
    pub latency_us: Option<u64>,
    pub srbchannel: SrbchannelState,
    pub callbacks_per_s: Option<f64>,
    /// Relative saving of total CPU against the baseline mode of the same latency, in percent
    /// (positive = cheaper). Set for `SrbchannelOn` against `SrbchannelOff`.
    pub cpu_saving_pct: Option<f64>,
    pub wakeups_saving_pct: Option<f64>,
    /// Set on an `on` row whose saving means nothing (e.g. srbchannel not granted): the savings
    /// are then left out (null), and this says why.
    #[serde(default)]
    pub saving_note: Option<String>,
}

/// Median; the mean of the two middle values for an even count. `None` for no values.
pub fn median(values: &[f64]) -> Option<f64> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

fn median_u64(values: impl Iterator<Item = Option<u64>>) -> Option<u64> {
    let v: Vec<f64> = values.flatten().map(|x| x as f64).collect();
    median(&v).map(|m| m.round() as u64)
}

/// Relative saving of `new` against `base`, in percent of `base`. `None` when the base is zero.
pub fn saving_pct(base: f64, new: f64) -> Option<f64> {
    if base.abs() < f64::EPSILON || !base.is_finite() || !new.is_finite() {
        return None;
    }
    Some((base - new) / base * 100.0)
}

fn median_figures(f: &[Figures]) -> Figures {
    let m = |g: fn(&Figures) -> f64| median(&f.iter().map(g).collect::<Vec<_>>()).unwrap_or(0.0);
    Figures {
        cpu_pct: m(|x| x.cpu_pct),
        wakeups_per_s: m(|x| x.wakeups_per_s),
        read_syscalls_per_s: m(|x| x.read_syscalls_per_s),
        write_syscalls_per_s: m(|x| x.write_syscalls_per_s),
    }
}

/// Medians per (latency, mode), in latency order then mode order. The total is the median of the
/// per-run totals (not the sum of the columns' medians).
pub fn summarize(runs: &[Run]) -> Vec<Summary> {
    let mut groups: BTreeMap<(u32, Mode), Vec<&Run>> = BTreeMap::new();
    for r in runs {
        groups.entry((r.latency_ms, r.mode)).or_default().push(r);
    }
    let mut out: Vec<Summary> = groups
        .into_iter()
        .map(|((latency_ms, mode), rs)| {
            let col = |g: fn(&Columns) -> Figures| {
                median_figures(&rs.iter().map(|r| g(&r.columns)).collect::<Vec<_>>())
            };
            let srbchannel = if rs.iter().all(|r| r.srbchannel == rs[0].srbchannel) {
                rs[0].srbchannel
            } else {
                SrbchannelState::Unknown
            };
            let cbs: Vec<f64> = rs.iter().filter_map(|r| r.callbacks_per_s).collect();
            Summary {
                mode,
                latency_ms,
                runs: rs.len(),
                columns: Columns {
                    client: col(|c| c.client),
                    server_main: col(|c| c.server_main),
                    server_device: col(|c| c.server_device),
                    total: col(|c| c.total),
                },
                granted_us: median_u64(rs.iter().map(|r| r.granted_us)),
                latency_us: median_u64(rs.iter().map(|r| r.latency_us)),
                srbchannel,
                callbacks_per_s: median(&cbs),
                cpu_saving_pct: None,
                wakeups_saving_pct: None,
                saving_note: None,
            }
        })
        .collect();
    // Savings of srbchannel on against off at the same latency, only where the two really were
    // different clients (the on one with srbchannel, the off one without).
    let bases: BTreeMap<u32, (Columns, SrbchannelState)> = out
        .iter()
        .filter(|s| s.mode == Mode::SrbchannelOff)
        .map(|s| (s.latency_ms, (s.columns, s.srbchannel)))
        .collect();
    for s in out.iter_mut().filter(|s| s.mode == Mode::SrbchannelOn) {
        if let Some((base, off_state)) = bases.get(&s.latency_ms) {
            let note = saving_note(s.srbchannel, *off_state);
            s.saving_note = note.text();
            if note.voids_saving() {
                continue;
            }
            s.cpu_saving_pct = saving_pct(base.total.cpu_pct, s.columns.total.cpu_pct);
            s.wakeups_saving_pct =
                saving_pct(base.total.wakeups_per_s, s.columns.total.wakeups_per_s);
        }
    }
    out
}

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
                    fmt_pct(off.and_then(|b| saving_pct(b.columns.total.get(m), c.total.get(m))))
                }
                _ => String::new(),
            };
            writeln!(
                out,
                "  {:<28} {:>9} {:>11} {:>13} {:>9} {:>9}",
                s.mode.label(),
                m.fmt(c.client.get(m)),
                m.fmt(c.server_main.get(m)),
                m.fmt(c.server_device.get(m)),
                m.fmt(c.total.get(m)),
                saving
            )?;
        }
        if let Some(b) = baseline {
            writeln!(
                out,
                "  {:<28} {:>9} {:>11} {:>13} {:>9} {:>9}",
                BASELINE_LABEL,
                "-",
                m.fmt(b.server_main.get(m)),
                m.fmt(b.server_device.get(m)),
                m.fmt(b.total.get(m)),
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

/// The server as the bench saw it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerReport {
    pub name: String,
    pub version: String,
    pub protocol_version: Option<u32>,
    pub pid: Option<u32>,
    pub socket: Option<PathBuf>,
    pub pipewire: bool,
    /// What the measured `on` clients got: derived from the run, never assumed.
    pub srbchannel: SrbchannelAvailability,
    /// Why srbchannel was not granted, as far as the bench can tell (only when it was not).
    pub srbchannel_detail: Option<String>,
    /// Names of the server's non-main threads that did work in any window.
    pub device_threads: Vec<String>,
    /// Other clients connected at some point (the probe before the run, and the start and end of
    /// each of our windows).
    pub other_clients: Vec<String>,
    /// Other clients' streams seen at those points: their work is in the server columns.
    pub other_streams: Vec<String>,
    /// Streams of the server's own modules (configuration, e.g. a remap source on its master).
    pub module_streams: Vec<String>,
}

/// The server measured with no bench client connected, before the modes: its row is what the
/// server does anyway (other clients, its own modules, timers); subtract it from the server
/// columns to see what the measured client alone costs the server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Baseline {
    pub window_s: f64,
    /// `client` stays zero.
    pub columns: Columns,
    pub server_threads: Vec<ThreadRates>,
}

/// Everything a bench run measured: what `--json` prints and [`write_text`] renders.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchResult {
    pub direction: Direction,
    pub window_s: f64,
    pub repeat: u32,
    pub latencies_ms: Vec<u32>,
    pub server: ServerReport,
    pub baseline: Option<Baseline>,
    pub summaries: Vec<Summary>,
    pub runs: Vec<Run>,
    pub chart: Option<PathBuf>,
    /// Things that make figures mean less than they seem (printed first, as `WARNING:`).
    pub warnings: Vec<String>,
    pub notes: Vec<String>,
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn tr(tid: u32, cpu: f64, wk: f64, r: f64, w: f64) -> ThreadRates {
        ThreadRates {
            tid,
            name: format!("t{tid}"),
            cpu_pct: cpu,
            wakeups_per_s: wk,
            read_syscalls_per_s: r,
            write_syscalls_per_s: w,
        }
    }

    fn run(mode: Mode, latency_ms: u32, client: f64, main: f64, dev: f64) -> Run {
        let columns = Columns::from_threads(
            &[tr(50, client, 100.0, 10.0, 0.0)],
            &[
                tr(7, main, 200.0, 600.0, 300.0),
                tr(8, dev, 100.0, 0.0, 0.0),
            ],
            7,
        );
        Run {
            mode,
            latency_ms,
            window_s: 10.0,
            columns,
            granted_us: Some(10_000),
            latency_us: Some(12_000),
            srbchannel: match mode {
                Mode::SrbchannelOff => SrbchannelState::Inactive,
                _ => SrbchannelState::Active,
            },
            callbacks_per_s: Some(100.0),
            client_threads: vec![],
            server_threads: vec![],
        }
    }

    #[test]
    fn median_odd_even_empty() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[f64::NAN, 5.0]), Some(5.0));
    }

    #[test]
    fn saving_matches_the_seed() {
        // Seed 004, recording at 10 ms: 6.9 % with iochannel, 5.3 % with srchannel: ~25 % less.
        let s = saving_pct(6.9, 5.3).unwrap();
        assert!((s - 23.19).abs() < 0.01, "{s}");
        // Playback at 20 ms: 5.8 -> 4.9: ~15 %.
        assert!((saving_pct(5.8, 4.9).unwrap() - 15.52).abs() < 0.01);
        assert_eq!(saving_pct(0.0, 1.0), None);
        assert!(saving_pct(1.0, 2.0).unwrap() < 0.0);
    }

    #[test]
    fn columns_split_main_and_device_threads_and_total() {
        let c = Columns::from_threads(
            &[tr(50, 1.7, 100.0, 1.0, 0.0), tr(51, 0.1, 1.0, 0.0, 0.0)],
            &[tr(7, 2.3, 300.0, 600.0, 300.0), tr(8, 1.7, 200.0, 0.0, 0.0)],
            7,
        );
        assert!((c.client.cpu_pct - 1.8).abs() < 1e-9);
        assert!((c.server_main.read_syscalls_per_s - 600.0).abs() < 1e-9);
        assert!((c.server_device.cpu_pct - 1.7).abs() < 1e-9);
        assert!((c.total.cpu_pct - 5.8).abs() < 1e-9);
        assert!((c.total.wakeups_per_s - 601.0).abs() < 1e-9);
        assert!((c.total.write_syscalls_per_s - 300.0).abs() < 1e-9);
    }

    #[test]
    fn summarize_takes_medians_and_savings() {
        let runs = vec![
            run(Mode::SrbchannelOn, 10, 1.7, 2.3, 1.7),
            run(Mode::SrbchannelOff, 10, 2.6, 2.6, 1.7),
            run(Mode::SrbchannelOn, 10, 1.5, 2.0, 1.7),
            run(Mode::SrbchannelOff, 10, 2.6, 2.6, 1.7),
            run(Mode::SrbchannelOn, 10, 9.0, 9.0, 9.0), // outlier: the median ignores it
            run(Mode::SrbchannelOff, 10, 2.6, 2.6, 1.7),
            run(Mode::SrbchannelOn, 20, 1.0, 1.0, 1.0),
        ];
        let s = summarize(&runs);
        assert_eq!(s.len(), 3);
        assert_eq!((s[0].latency_ms, s[0].mode), (10, Mode::SrbchannelOn));
        assert_eq!((s[1].latency_ms, s[1].mode), (10, Mode::SrbchannelOff));
        assert_eq!(s[2].latency_ms, 20);
        assert_eq!(s[0].runs, 3);
        assert!((s[0].columns.client.cpu_pct - 1.7).abs() < 1e-9);
        // Total is the median of per-run totals: 5.7, 5.2, 27.0 -> 5.7.
        assert!((s[0].columns.total.cpu_pct - 5.7).abs() < 1e-9);
        assert!((s[1].columns.total.cpu_pct - 6.9).abs() < 1e-9);
        let saving = s[0].cpu_saving_pct.unwrap();
        assert!((saving - (6.9 - 5.7) / 6.9 * 100.0).abs() < 1e-9);
        assert_eq!(s[1].cpu_saving_pct, None);
        // No baseline at 20 ms.
        assert_eq!(s[2].cpu_saving_pct, None);
        assert_eq!(s[0].granted_us, Some(10_000));
    }

    #[test]
    fn table_and_sweep_render() {
        let s = summarize(&[
            run(Mode::SrbchannelOn, 10, 1.7, 2.3, 1.7),
            run(Mode::SrbchannelOff, 10, 2.6, 2.6, 1.7),
            run(Mode::Reference, 10, 1.9, 2.3, 1.7),
        ]);
        let refs: Vec<&Summary> = s.iter().collect();
        let mut buf = Vec::new();
        write_table(&mut buf, &refs, None).unwrap();
        let text = String::from_utf8(buf).unwrap();
        assert!(text.contains("CPU % of one core"), "{text}");
        assert!(text.contains("srbchannel on"));
        assert!(text.contains("+17.4 %"), "{text}"); // (6.9 - 5.7) / 6.9
        assert!(text.contains("10.0 ms"));
        assert!(text.contains("write syscalls/s"));
        assert!(text.contains("socket sendto/recvmsg are not counted"));

        let mut buf = Vec::new();
        write_sweep(&mut buf, &s, None).unwrap();
        let text = String::from_utf8(buf).unwrap();
        assert_eq!(text.lines().count(), 2 + 3);
        assert!(text.contains("| 10 ms | srbchannel off | 10.0 ms | 2.60 | 2.60 | 1.70 | 6.90 |"));
        let idle = Columns {
            server_main: Figures {
                cpu_pct: 0.5,
                wakeups_per_s: 20.0,
                ..Figures::default()
            },
            total: Figures {
                cpu_pct: 0.5,
                wakeups_per_s: 20.0,
                ..Figures::default()
            },
            ..Columns::default()
        };
        let mut buf = Vec::new();
        write_sweep(&mut buf, &s, Some(&idle)).unwrap();
        let text = String::from_utf8(buf).unwrap();
        assert!(
            text.ends_with("| - | server alone (idle) | - | - | 0.50 | 0.00 | 0.50 | 20 |\n"),
            "{text}"
        );
        let mut buf = Vec::new();
        write_table(&mut buf, &refs, Some(&idle)).unwrap();
        let text = String::from_utf8(buf).unwrap();
        // One idle row per metric.
        assert_eq!(text.matches("server alone (idle)").count(), 4, "{text}");
    }

    #[test]
    fn saving_only_when_on_and_off_really_differ() {
        use SrbchannelState::{Active, Inactive, Unknown};
        assert_eq!(saving_note(Active, Inactive).text(), None);
        assert!(saving_note(Inactive, Inactive)
            .text()
            .unwrap()
            .contains("did not get srbchannel"));
        assert!(saving_note(Active, Active)
            .text()
            .unwrap()
            .contains("got srbchannel anyway"));
        assert!(saving_note(Unknown, Inactive)
            .text()
            .unwrap()
            .contains("unverified"));
        assert!(saving_note(Inactive, Inactive).voids_saving());
        assert!(saving_note(Active, Active).voids_saving());
        assert!(!saving_note(Unknown, Inactive).voids_saving());

        let mut on = run(Mode::SrbchannelOn, 10, 1.7, 2.3, 1.7);
        on.srbchannel = Inactive;
        let s = summarize(&[on.clone(), run(Mode::SrbchannelOff, 10, 2.6, 2.6, 1.7)]);
        assert_eq!(s[0].cpu_saving_pct, None);
        assert_eq!(s[0].wakeups_saving_pct, None);
        assert!(s[0]
            .saving_note
            .as_deref()
            .unwrap()
            .contains("means nothing"));
        let refs: Vec<&Summary> = s.iter().collect();
        let mut buf = Vec::new();
        write_table(&mut buf, &refs, None).unwrap();
        let text = String::from_utf8(buf).unwrap();
        assert_eq!(text.matches(" n/a").count(), 4, "{text}");
        assert!(
            text.contains("srbchannel on: on and off are the same client here"),
            "{text}"
        );

        // Unverified (fds unreadable): the saving is given, with the note.
        on.srbchannel = Unknown;
        let s = summarize(&[on, run(Mode::SrbchannelOff, 10, 2.6, 2.6, 1.7)]);
        assert!(s[0].cpu_saving_pct.is_some());
        assert!(s[0].saving_note.as_deref().unwrap().contains("unverified"));
    }

    #[test]
    fn availability_comes_from_what_the_on_clients_got() {
        use SrbchannelState::{Active, Inactive, Unknown};
        let with = |states: &[(Mode, SrbchannelState)]| -> Vec<Run> {
            states
                .iter()
                .map(|(m, st)| {
                    let mut r = run(*m, 10, 1.0, 1.0, 1.0);
                    r.srbchannel = *st;
                    r
                })
                .collect()
        };
        use SrbchannelAvailability as A;
        let on_off = with(&[
            (Mode::SrbchannelOn, Active),
            (Mode::SrbchannelOff, Inactive),
        ]);
        assert_eq!(A::from_runs(&on_off, false), A::Available);
        assert_eq!(A::from_runs(&on_off, true), A::NotApplicable);
        let refused = with(&[(Mode::SrbchannelOn, Active), (Mode::SrbchannelOn, Inactive)]);
        assert_eq!(A::from_runs(&refused, false), A::NotGranted);
        assert_eq!(
            A::from_runs(&with(&[(Mode::SrbchannelOff, Inactive)]), false),
            A::NotMeasured
        );
        assert_eq!(
            A::from_runs(&with(&[(Mode::SrbchannelOn, Unknown)]), false),
            A::Unknown
        );
        assert_eq!(
            serde_json::to_string(&A::NotGranted).unwrap(),
            r#""not_granted""#
        );
    }

    #[test]
    fn srbchannel_state_from_eventfds() {
        assert_eq!(
            SrbchannelState::from_eventfds(Some(2)),
            SrbchannelState::Active
        );
        assert_eq!(
            SrbchannelState::from_eventfds(Some(0)),
            SrbchannelState::Inactive
        );
        assert_eq!(
            SrbchannelState::from_eventfds(None),
            SrbchannelState::Unknown
        );
    }

    fn run_at(mode: Mode, lat: u32, cpu: f64, srb: SrbchannelState) -> Run {
        Run {
            mode,
            latency_ms: lat,
            window_s: 10.0,
            columns: Columns {
                total: Figures {
                    cpu_pct: cpu,
                    ..Default::default()
                },
                ..Default::default()
            },
            granted_us: Some(u64::from(lat) * 1000),
            latency_us: None,
            srbchannel: srb,
            callbacks_per_s: None,
            client_threads: vec![],
            server_threads: vec![],
        }
    }

    fn report_of(runs: Vec<Run>, latencies_ms: Vec<u32>) -> BenchResult {
        BenchResult {
            direction: Direction::Record,
            window_s: 10.0,
            repeat: 1,
            latencies_ms,
            server: ServerReport {
                name: "pulseaudio".into(),
                version: "16.1".into(),
                protocol_version: Some(35),
                pid: Some(7),
                srbchannel: SrbchannelAvailability::from_runs(&runs, false),
                device_threads: vec!["null-sink".into()],
                ..Default::default()
            },
            baseline: Some(Baseline {
                window_s: 10.0,
                columns: Columns {
                    server_main: Figures {
                        cpu_pct: 0.25,
                        ..Default::default()
                    },
                    total: Figures {
                        cpu_pct: 0.25,
                        ..Default::default()
                    },
                    ..Default::default()
                },
                server_threads: vec![],
            }),
            summaries: summarize(&runs),
            runs,
            chart: Some(PathBuf::from("results/x.svg")),
            warnings: vec![],
            notes: vec![],
        }
    }

    #[test]
    fn text_report_has_header_tables_baseline_and_sweep() {
        use SrbchannelState::{Active, Inactive};
        let runs = vec![
            run_at(Mode::SrbchannelOn, 10, 5.0, Active),
            run_at(Mode::SrbchannelOff, 10, 6.0, Inactive),
            run_at(Mode::SrbchannelOn, 20, 3.0, Active),
            run_at(Mode::SrbchannelOff, 20, 3.5, Inactive),
        ];
        let r = report_of(runs, vec![10, 20]);
        let mut buf = Vec::new();
        write_text(&mut buf, &r).unwrap();
        let text = String::from_utf8(buf).unwrap();
        assert!(
            text.contains("server: pulseaudio 16.1 (protocol 35, pid 7), srbchannel available"),
            "{text}"
        );
        assert!(text.contains("== requested 10 ms =="));
        assert!(text.contains("== requested 20 ms =="));
        assert!(text.contains("== CPU against requested latency =="));
        assert!(text.contains("+16.7 %"), "{text}");
        assert!(text.contains("server alone (idle)"), "{text}");
        assert!(
            text.contains("| - | server alone (idle) | - | - | 0.25 |"),
            "{text}"
        );
        assert!(text.contains("chart: results/x.svg"));
        assert!(!text.contains("WARNING"));
        let json = serde_json::to_string(&r).unwrap();
        assert!(json.contains(r#""srbchannel":"available""#), "{json}");
        let back: BenchResult = serde_json::from_str(&json).unwrap();
        assert_eq!(back.summaries.len(), 4);
    }

    #[test]
    fn srbchannel_not_granted_voids_the_saving_in_text_and_json() {
        use SrbchannelState::Inactive;
        let runs = vec![
            run_at(Mode::SrbchannelOn, 10, 5.0, Inactive),
            run_at(Mode::SrbchannelOff, 10, 6.0, Inactive),
        ];
        let mut r = report_of(runs, vec![10]);
        assert_eq!(r.server.srbchannel, SrbchannelAvailability::NotGranted);
        r.warnings
            .push("srbchannel was NOT granted to the `on` client (x)".into());
        let mut buf = Vec::new();
        write_text(&mut buf, &r).unwrap();
        let text = String::from_utf8(buf).unwrap();
        assert!(
            text.contains("srbchannel NOT GRANTED to the on client"),
            "{text}"
        );
        assert!(
            text.contains("WARNING: srbchannel was NOT granted"),
            "{text}"
        );
        assert!(text.contains("n/a"), "{text}");
        assert!(!text.contains("+16.7 %"), "{text}");
        assert!(
            text.contains("on and off are the same client here"),
            "{text}"
        );
        let json: serde_json::Value = serde_json::to_value(&r).unwrap();
        assert_eq!(json["server"]["srbchannel"], "not_granted");
        let on = &json["summaries"][0];
        assert_eq!(on["mode"], "srbchannel_on");
        assert!(on["cpu_saving_pct"].is_null());
        assert!(on["saving_note"].as_str().unwrap().contains("same client"));
    }

    #[test]
    fn json_spells_not_applicable_one_way() {
        let runs = vec![run_at(
            Mode::Socket,
            10,
            1.0,
            SrbchannelState::NotApplicable,
        )];
        let mut r = report_of(runs, vec![10]);
        r.server.pipewire = true;
        r.server.srbchannel = SrbchannelAvailability::from_runs(&r.runs, true);
        let json = serde_json::to_string(&r).unwrap();
        assert!(!json.contains("not applicable"), "{json}");
        assert_eq!(json.matches("\"not_applicable\"").count(), 3, "{json}");
    }
}
