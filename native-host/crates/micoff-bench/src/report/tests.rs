//! The report's arithmetic and rendering, on runs made by hand.

use std::path::PathBuf;

use super::*;
use crate::args::Direction;
use crate::sample::ThreadRates;

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
