//! Rates over a window: [`rates`] turns two [`Snapshot`]s into a [`CpuReport`]. Pure arithmetic.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::role::Role;
use crate::sample::{ProcessSample, Snapshot, ThreadSample};
use crate::Pid;

/// CPU use of a set of processes over one window. Percentages are % of ONE core (like `pidstat`; a
/// process with two busy threads shows 200).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CpuReport {
    /// The measured window between the two snapshots.
    pub window_ms: f64,
    /// Sum of the processes' `cpu_pct`.
    pub total_cpu_pct: f64,
    /// Processes sorted by `cpu_pct`, highest first.
    pub processes: Vec<ProcessRates>,
    /// Totals per role, highest `cpu_pct` first.
    pub roles: Vec<RoleTotals>,
    /// Processes in the first snapshot that were gone (or replaced by a reused pid) in the second.
    pub gone_pids: Vec<Pid>,
    /// Threads left out of `processes[].threads` by a consumer that had to shorten the report (the
    /// native host drops the lowest-CPU threads to fit a 1 MiB frame). Always 0 from [`rates`].
    #[serde(default)]
    pub threads_omitted: u64,
}

/// What is measured of a process, and of each of its threads, over a window: the same figures at
/// both levels, flat in each on the wire (`#[serde(flatten)]`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Rates {
    /// % of one core from `stat`'s utime + stime (user + system).
    pub cpu_pct: f64,
    pub user_pct: f64,
    pub system_pct: f64,
    /// On-CPU time during the window from `schedstat` (`None` without schedstats).
    pub run_time_ns: Option<u64>,
    pub run_time_pct: Option<f64>,
    /// Voluntary + involuntary context switches per second.
    pub wakeups_per_s: Option<f64>,
    pub voluntary_ctxt_per_s: Option<f64>,
    pub involuntary_ctxt_per_s: Option<f64>,
    /// `None` when `/proc/<pid>/task/<tid>/io` was not readable.
    pub read_syscalls_per_s: Option<f64>,
    pub write_syscalls_per_s: Option<f64>,
}

/// One process over the window. `cpu_pct`/`user_pct`/`system_pct` come from the process's own
/// `stat` (so they include threads that exited during the window); the other figures are sums over
/// the threads present at both ends, each thread's rates over its own span (see
/// [`ThreadRates::window_ms`]; `run_time_ns` is their sum at those rates over this window).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProcessRates {
    pub pid: Pid,
    pub ppid: Pid,
    pub comm: String,
    pub role: Role,
    #[serde(flatten)]
    pub rates: Rates,
    pub thread_count: usize,
    /// Threads sorted by `cpu_pct`, highest first.
    pub threads: Vec<ThreadRates>,
}

impl ProcessRates {
    /// A process that used nothing over the window and has no threads listed (the starting point
    /// for reports built by hand: fakes, trimmed views, tests).
    pub fn idle(pid: Pid, ppid: Pid, comm: impl Into<String>, role: crate::Role) -> Self {
        Self {
            pid,
            ppid,
            comm: comm.into(),
            role,
            rates: Rates::default(),
            thread_count: 0,
            threads: vec![],
        }
    }
}

/// One thread over the window (or its own span, [`ThreadRates::window_ms`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThreadRates {
    pub tid: Pid,
    pub comm: String,
    #[serde(flatten)]
    pub rates: Rates,
    /// The span these figures cover, when it is not its process's window: the time since this
    /// thread was last read. Longer than the window for a thread a [`crate::Sampler`] read less
    /// often (a "cold" thread, or one in a process that was not descended into), `0` for a thread
    /// not read in this window (its figures are then 0; what it did is reported, over its own
    /// span, when it is read). `None`: read with its process, over the process's window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_ms: Option<f64>,
}

impl ThreadRates {
    /// A thread that used nothing over the window (reports built by hand: fakes, tests).
    pub fn idle(tid: Pid, comm: impl Into<String>) -> Self {
        Self {
            tid,
            comm: comm.into(),
            rates: Rates::default(),
            window_ms: None,
        }
    }
}

/// Totals of all processes sharing a role.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoleTotals {
    pub role: Role,
    pub label: String,
    pub process_count: usize,
    pub thread_count: usize,
    pub cpu_pct: f64,
    pub user_pct: f64,
    pub system_pct: f64,
    pub wakeups_per_s: Option<f64>,
    pub read_syscalls_per_s: Option<f64>,
    pub write_syscalls_per_s: Option<f64>,
}

/// Ticks over `elapsed_ns` as % of one core.
pub fn ticks_pct(ticks: u64, clk_tck: u64, elapsed_ns: u64) -> f64 {
    if elapsed_ns == 0 || clk_tck == 0 {
        return 0.0;
    }
    ticks as f64 / clk_tck as f64 * 1e11 / elapsed_ns as f64
}

/// A counter's growth per second (a counter that went backwards counts as 0).
pub fn per_s(before: u64, after: u64, elapsed_ns: u64) -> f64 {
    if elapsed_ns == 0 {
        return 0.0;
    }
    after.saturating_sub(before) as f64 * 1e9 / elapsed_ns as f64
}

/// (cpu, user, system) % of one core from `(utime, stime)` ticks at both ends of the window.
fn tick_pcts(before: (u64, u64), after: (u64, u64), clk_tck: u64, elapsed_ns: u64) -> [f64; 3] {
    let du = after.0.saturating_sub(before.0);
    let ds = after.1.saturating_sub(before.1);
    [du + ds, du, ds].map(|ticks| ticks_pct(ticks, clk_tck, elapsed_ns))
}

/// On-CPU time as % of the window.
fn run_time_pct(run_time_ns: u64, elapsed_ns: u64) -> f64 {
    if elapsed_ns == 0 {
        return 0.0;
    }
    run_time_ns as f64 * 100.0 / elapsed_ns as f64
}

fn opt_per_s(before: Option<u64>, after: Option<u64>, elapsed_ns: u64) -> Option<f64> {
    Some(per_s(before?, after?, elapsed_ns))
}

fn add_opt(acc: &mut Option<f64>, v: Option<f64>) {
    if let Some(v) = v {
        *acc = Some(acc.unwrap_or(0.0) + v);
    }
}

/// The rates of one thread between two samples of it.
pub fn thread_rates(
    a: &ThreadSample,
    b: &ThreadSample,
    clk_tck: u64,
    elapsed_ns: u64,
) -> ThreadRates {
    let [cpu_pct, user_pct, system_pct] =
        tick_pcts((a.utime, a.stime), (b.utime, b.stime), clk_tck, elapsed_ns);
    let run_time_ns = match (a.run_time_ns, b.run_time_ns) {
        (Some(x), Some(y)) => Some(y.saturating_sub(x)),
        _ => None,
    };
    let voluntary = opt_per_s(a.voluntary_ctxt, b.voluntary_ctxt, elapsed_ns);
    let involuntary = opt_per_s(a.involuntary_ctxt, b.involuntary_ctxt, elapsed_ns);
    ThreadRates {
        tid: b.tid,
        comm: b.comm.clone(),
        rates: Rates {
            cpu_pct,
            user_pct,
            system_pct,
            run_time_ns,
            run_time_pct: run_time_ns.map(|ns| run_time_pct(ns, elapsed_ns)),
            wakeups_per_s: voluntary.zip(involuntary).map(|(v, i)| v + i),
            voluntary_ctxt_per_s: voluntary,
            involuntary_ctxt_per_s: involuntary,
            read_syscalls_per_s: opt_per_s(a.syscr, b.syscr, elapsed_ns),
            write_syscalls_per_s: opt_per_s(a.syscw, b.syscw, elapsed_ns),
        },
        window_ms: None,
    }
}

/// `ns` measured over `own_ns`, as its share of `window_ns` at the same average rate (exact when
/// the two spans are equal).
fn pro_rated(ns: u64, own_ns: u64, window_ns: u64) -> u64 {
    if own_ns == window_ns {
        return ns;
    }
    if own_ns == 0 {
        return 0;
    }
    u64::try_from(u128::from(ns) * u128::from(window_ns) / u128::from(own_ns)).unwrap_or(u64::MAX)
}

/// The rates of one process between two samples of it (same pid and start time).
///
/// Each thread's rates cover the time since that thread was last read (its `read_at_ns`, else its
/// process's `at_ns`), which is the process's window unless a [`crate::Sampler`] read it less
/// often; then [`ThreadRates::window_ms`] says its own span. The process's CPU comes from its own
/// counters; its other figures add up its threads' rates, each over its own span (a thread read
/// after several windows adds its average rate, not the sum of those windows at once).
pub fn process_rates(a: &ProcessSample, b: &ProcessSample, clk_tck: u64) -> ProcessRates {
    let elapsed_ns = b.at_ns.saturating_sub(a.at_ns);
    let before: HashMap<(Pid, u64), &ThreadSample> = a
        .threads
        .iter()
        .map(|t| ((t.tid, t.starttime), t))
        .collect();
    let mut run_time_ns: Option<u64> = None;
    let mut threads: Vec<ThreadRates> = b
        .threads
        .iter()
        .filter_map(|tb| {
            let ta = before.get(&(tb.tid, tb.starttime))?;
            let own_ns = tb
                .read_at_ns
                .unwrap_or(b.at_ns)
                .saturating_sub(ta.read_at_ns.unwrap_or(a.at_ns));
            let mut r = thread_rates(ta, tb, clk_tck, own_ns);
            if own_ns != elapsed_ns {
                r.window_ms = Some(own_ns as f64 / 1e6);
            }
            if let Some(ns) = r.rates.run_time_ns {
                let share = pro_rated(ns, own_ns, elapsed_ns);
                run_time_ns = Some(run_time_ns.unwrap_or(0).saturating_add(share));
            }
            Some(r)
        })
        .collect();
    threads.sort_by(|x, y| {
        y.rates
            .cpu_pct
            .total_cmp(&x.rates.cpu_pct)
            .then(x.tid.cmp(&y.tid))
    });

    let [cpu_pct, user_pct, system_pct] =
        tick_pcts((a.utime, a.stime), (b.utime, b.stime), clk_tck, elapsed_ns);
    let mut rates = Rates {
        cpu_pct,
        user_pct,
        system_pct,
        run_time_ns,
        run_time_pct: run_time_ns.map(|ns| run_time_pct(ns, elapsed_ns)),
        ..Rates::default()
    };
    for t in &threads {
        let r = &t.rates;
        add_opt(&mut rates.wakeups_per_s, r.wakeups_per_s);
        add_opt(&mut rates.voluntary_ctxt_per_s, r.voluntary_ctxt_per_s);
        add_opt(&mut rates.involuntary_ctxt_per_s, r.involuntary_ctxt_per_s);
        add_opt(&mut rates.read_syscalls_per_s, r.read_syscalls_per_s);
        add_opt(&mut rates.write_syscalls_per_s, r.write_syscalls_per_s);
    }
    ProcessRates {
        pid: b.pid,
        ppid: b.ppid,
        comm: b.comm.clone(),
        role: b.role,
        rates,
        thread_count: b.threads.len(),
        threads,
    }
}

/// Per-role totals of a list of process rates, highest `cpu_pct` first.
pub fn role_totals(processes: &[ProcessRates]) -> Vec<RoleTotals> {
    let mut out: Vec<RoleTotals> = Vec::new();
    for p in processes {
        let idx = match out.iter().position(|r| r.role == p.role) {
            Some(i) => i,
            None => {
                out.push(RoleTotals {
                    role: p.role,
                    label: p.role.label().to_owned(),
                    process_count: 0,
                    thread_count: 0,
                    cpu_pct: 0.0,
                    user_pct: 0.0,
                    system_pct: 0.0,
                    wakeups_per_s: None,
                    read_syscalls_per_s: None,
                    write_syscalls_per_s: None,
                });
                out.len() - 1
            }
        };
        let r = &mut out[idx];
        r.process_count += 1;
        r.thread_count += p.thread_count;
        r.cpu_pct += p.rates.cpu_pct;
        r.user_pct += p.rates.user_pct;
        r.system_pct += p.rates.system_pct;
        add_opt(&mut r.wakeups_per_s, p.rates.wakeups_per_s);
        add_opt(&mut r.read_syscalls_per_s, p.rates.read_syscalls_per_s);
        add_opt(&mut r.write_syscalls_per_s, p.rates.write_syscalls_per_s);
    }
    out.sort_by(|x, y| y.cpu_pct.total_cmp(&x.cpu_pct).then(x.role.cmp(&y.role)));
    out
}

/// The report between two snapshots of the same pids, `a` taken before `b`. Processes are matched
/// by pid AND start time (a reused pid is a different process); threads likewise. Processes or
/// threads present only in `b` have no baseline and are left out.
pub fn rates(a: &Snapshot, b: &Snapshot) -> CpuReport {
    let clk_tck = b.clk_tck;
    let after: HashMap<(Pid, u64), &ProcessSample> = b
        .processes
        .iter()
        .map(|p| ((p.pid, p.starttime), p))
        .collect();
    let mut processes = Vec::with_capacity(a.processes.len());
    let mut gone_pids = Vec::new();
    for pa in &a.processes {
        match after.get(&(pa.pid, pa.starttime)) {
            Some(pb) => processes.push(process_rates(pa, pb, clk_tck)),
            None => gone_pids.push(pa.pid),
        }
    }
    processes.sort_by(|x, y| {
        y.rates
            .cpu_pct
            .total_cmp(&x.rates.cpu_pct)
            .then(x.pid.cmp(&y.pid))
    });
    let roles = role_totals(&processes);
    CpuReport {
        window_ms: b.taken_at_ns.saturating_sub(a.taken_at_ns) as f64 / 1e6,
        // A fold from +0.0: `Sum` for f64 starts at -0.0, so an empty report would say -0.0.
        total_cpu_pct: processes.iter().fold(0.0, |acc, p| acc + p.rates.cpu_pct),
        processes,
        roles,
        gone_pids,
        threads_omitted: 0,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const SEC: u64 = 1_000_000_000;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn ticks_pct_table() {
        // (ticks, clk_tck, elapsed_ns, expected %)
        let cases = [
            (0, 100, SEC, 0.0),
            (100, 100, SEC, 100.0),
            (30, 100, SEC, 30.0),
            (60, 100, 2 * SEC, 30.0),
            (150, 100, SEC, 150.0), // two cores busy
            (1, 100, SEC / 2, 2.0),
            (250, 250, SEC, 100.0),
            (5, 100, 0, 0.0), // no window: no rate, no NaN
            (5, 0, SEC, 0.0),
        ];
        for (ticks, tck, ns, want) in cases {
            let got = ticks_pct(ticks, tck, ns);
            assert!(close(got, want), "{ticks} {tck} {ns}: {got} != {want}");
        }
    }

    #[test]
    fn per_s_table() {
        let cases = [
            (0, 100, SEC, 100.0),
            (100, 350, 2 * SEC, 125.0),
            (10, 10, SEC, 0.0),
            (10, 5, SEC, 0.0), // went backwards
            (0, 7, 0, 0.0),
            (0, 1, SEC / 4, 4.0),
        ];
        for (a, b, ns, want) in cases {
            assert!(close(per_s(a, b, ns), want), "{a} {b} {ns}");
        }
    }

    fn thread(
        tid: Pid,
        utime: u64,
        stime: u64,
        run: u64,
        vol: u64,
        inv: u64,
        io: Option<(u64, u64)>,
    ) -> ThreadSample {
        ThreadSample {
            tid,
            comm: format!("t{tid}"),
            starttime: 1000 + u64::from(tid),
            utime,
            stime,
            run_time_ns: Some(run),
            voluntary_ctxt: Some(vol),
            involuntary_ctxt: Some(inv),
            syscr: io.map(|x| x.0),
            syscw: io.map(|x| x.1),
            read_at_ns: None,
        }
    }

    fn process(
        pid: Pid,
        role: Role,
        at_ns: u64,
        utime: u64,
        stime: u64,
        threads: Vec<ThreadSample>,
    ) -> ProcessSample {
        ProcessSample {
            pid,
            ppid: 1,
            comm: "chromium".into(),
            role,
            starttime: 500 + u64::from(pid),
            at_ns,
            utime,
            stime,
            threads,
        }
    }

    #[test]
    fn thread_rates_arithmetic() {
        let a = thread(10, 100, 20, 5_000_000_000, 1000, 10, Some((500, 50)));
        let b = thread(10, 120, 30, 5_300_000_000, 1200, 20, Some((800, 150)));
        let r = thread_rates(&a, &b, 100, 2 * SEC);
        assert!(close(r.rates.user_pct, 10.0));
        assert!(close(r.rates.system_pct, 5.0));
        assert!(close(r.rates.cpu_pct, 15.0));
        assert_eq!(r.rates.run_time_ns, Some(300_000_000));
        assert!(close(r.rates.run_time_pct.unwrap(), 15.0));
        assert!(close(r.rates.voluntary_ctxt_per_s.unwrap(), 100.0));
        assert!(close(r.rates.involuntary_ctxt_per_s.unwrap(), 5.0));
        assert!(close(r.rates.wakeups_per_s.unwrap(), 105.0));
        assert!(close(r.rates.read_syscalls_per_s.unwrap(), 150.0));
        assert!(close(r.rates.write_syscalls_per_s.unwrap(), 50.0));
        // io unreadable at either end -> None; schedstat missing -> None.
        let mut b2 = b.clone();
        b2.syscr = None;
        b2.syscw = None;
        b2.run_time_ns = None;
        let r = thread_rates(&a, &b2, 100, 2 * SEC);
        assert_eq!(r.rates.read_syscalls_per_s, None);
        assert_eq!(r.rates.write_syscalls_per_s, None);
        assert_eq!(r.rates.run_time_ns, None);
        assert_eq!(r.rates.run_time_pct, None);
    }

    #[test]
    fn report_matches_processes_and_threads() {
        let a = Snapshot {
            clk_tck: 100,
            taken_at_ns: 0,
            processes: vec![
                process(
                    100,
                    Role::Renderer,
                    0,
                    1000,
                    100,
                    vec![
                        thread(100, 900, 90, 0, 0, 0, None),
                        thread(101, 100, 10, 0, 0, 0, Some((0, 0))),
                        thread(102, 0, 0, 0, 0, 0, None), // exits during the window
                    ],
                ),
                process(
                    200,
                    Role::AudioService,
                    0,
                    10,
                    0,
                    vec![thread(201, 10, 0, 0, 0, 0, None)],
                ),
                process(
                    300,
                    Role::Renderer,
                    0,
                    0,
                    0,
                    vec![thread(300, 0, 0, 0, 0, 0, None)],
                ),
                process(400, Role::Gpu, 0, 0, 0, vec![]),
            ],
        };
        let mut pid400_reused = process(400, Role::Gpu, SEC, 0, 0, vec![]);
        pid400_reused.starttime += 1;
        let b = Snapshot {
            clk_tck: 100,
            taken_at_ns: SEC,
            processes: vec![
                process(
                    100,
                    Role::Renderer,
                    SEC,
                    1040,
                    110,
                    vec![
                        thread(100, 920, 95, 0, 0, 0, None),
                        thread(101, 110, 12, 500_000_000, 100, 3, Some((300, 30))),
                        thread(103, 5, 0, 0, 0, 0, None), // new: no baseline
                    ],
                ),
                process(
                    200,
                    Role::AudioService,
                    SEC,
                    40,
                    0,
                    vec![thread(201, 40, 0, 0, 0, 0, None)],
                ),
                process(
                    300,
                    Role::Renderer,
                    SEC,
                    5,
                    0,
                    vec![thread(300, 5, 0, 0, 0, 0, None)],
                ),
                pid400_reused,
            ],
        };
        let r = rates(&a, &b);
        assert!(close(r.window_ms, 1000.0));
        assert_eq!(r.gone_pids, vec![400]);
        let pids: Vec<Pid> = r.processes.iter().map(|p| p.pid).collect();
        assert_eq!(pids, vec![100, 200, 300]);
        let p = &r.processes[0];
        // Process figures from the process's own stat (includes the exited thread 102).
        assert!(close(p.rates.cpu_pct, 50.0));
        assert!(close(p.rates.user_pct, 40.0));
        assert!(close(p.rates.system_pct, 10.0));
        assert_eq!(p.thread_count, 3);
        let tids: Vec<Pid> = p.threads.iter().map(|t| t.tid).collect();
        assert_eq!(tids, vec![100, 101]);
        assert!(close(p.threads[0].rates.cpu_pct, 25.0));
        assert!(close(p.threads[1].rates.cpu_pct, 12.0));
        assert_eq!(p.rates.run_time_ns, Some(500_000_000));
        assert!(close(p.rates.run_time_pct.unwrap(), 50.0));
        assert!(close(p.rates.wakeups_per_s.unwrap(), 103.0));
        assert!(close(p.rates.read_syscalls_per_s.unwrap(), 300.0));
        assert!(close(p.rates.write_syscalls_per_s.unwrap(), 30.0));
        assert!(close(r.total_cpu_pct, 85.0));
        let roles: Vec<(Role, usize, f64)> = r
            .roles
            .iter()
            .map(|x| (x.role, x.process_count, x.cpu_pct))
            .collect();
        assert_eq!(
            roles,
            vec![(Role::Renderer, 2, 55.0), (Role::AudioService, 1, 30.0)]
        );
        assert_eq!(r.roles[0].label, "renderer");
        assert_eq!(r.roles[0].thread_count, 4);

        // Serde: snake_case with units, round trip.
        let json = serde_json::to_value(&r).unwrap();
        for key in [
            "window_ms",
            "total_cpu_pct",
            "processes",
            "roles",
            "gone_pids",
        ] {
            assert!(json.get(key).is_some(), "{key}");
        }
        let t = &json["processes"][0]["threads"][1];
        for key in [
            "tid",
            "comm",
            "cpu_pct",
            "user_pct",
            "system_pct",
            "run_time_ns",
            "run_time_pct",
            "wakeups_per_s",
            "voluntary_ctxt_per_s",
            "involuntary_ctxt_per_s",
            "read_syscalls_per_s",
            "write_syscalls_per_s",
        ] {
            assert!(t.get(key).is_some(), "{key}");
        }
        assert_eq!(json["processes"][0]["role"], "renderer");
        assert!(json["processes"][0]["threads"][0]["read_syscalls_per_s"].is_null());
        let back: CpuReport = serde_json::from_value(json).unwrap();
        assert_eq!(back, r);
    }

    #[test]
    fn empty_and_zero_window() {
        let s = Snapshot {
            clk_tck: 100,
            taken_at_ns: 5,
            processes: vec![process(
                1,
                Role::Other,
                5,
                10,
                10,
                vec![thread(1, 10, 10, 0, 0, 0, None)],
            )],
        };
        let r = rates(&s, &s);
        assert!(close(r.window_ms, 0.0));
        assert!(r.processes[0].rates.cpu_pct == 0.0 && r.processes[0].rates.cpu_pct.is_finite());
        let e = Snapshot {
            clk_tck: 100,
            taken_at_ns: 0,
            processes: vec![],
        };
        let r = rates(&e, &e);
        assert!(r.processes.is_empty() && r.roles.is_empty() && r.gone_pids.is_empty());
        // +0.0, never -0.0 (serialized as `-0.0`, which reads as a bug).
        assert!(r.total_cpu_pct == 0.0 && r.total_cpu_pct.is_sign_positive());
        assert_eq!(serde_json::to_string(&r.total_cpu_pct).unwrap(), "0.0");
    }

    /// A process's and a thread's figures sit flat in each, in the order the protocol has always
    /// listed them, and read back.
    #[test]
    fn rates_are_flat_on_the_wire() {
        let mut p = ProcessRates::idle(7, 1, "chromium", Role::Renderer);
        p.thread_count = 1;
        p.threads = vec![ThreadRates::idle(8, "AudioThread")];
        let json = serde_json::to_string(&p).unwrap();
        let figures = "\"cpu_pct\":0.0,\"user_pct\":0.0,\"system_pct\":0.0,\"run_time_ns\":null,\
                       \"run_time_pct\":null,\"wakeups_per_s\":null,\"voluntary_ctxt_per_s\":null,\
                       \"involuntary_ctxt_per_s\":null,\"read_syscalls_per_s\":null,\
                       \"write_syscalls_per_s\":null";
        assert_eq!(
            json,
            format!(
                "{{\"pid\":7,\"ppid\":1,\"comm\":\"chromium\",\"role\":\"renderer\",{figures},\
                 \"thread_count\":1,\"threads\":[{{\"tid\":8,\"comm\":\"AudioThread\",{figures}}}]}}"
            )
        );
        let back: ProcessRates = serde_json::from_str(&json).unwrap();
        assert_eq!(back, p);
    }
}
