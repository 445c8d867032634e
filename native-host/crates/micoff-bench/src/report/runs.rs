//! The measured windows ([`Run`]) and their medians per (latency, mode) with srbchannel's
//! saving ([`Summary`], [`summarize`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::report::figures::{Columns, Figures};
use crate::report::mode::{Mode, SrbchannelState};
use crate::report::saving::saving_note;
use crate::sample::ThreadRates;

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
