//! What a run will measure, known before its first window: the modes (which collapse on
//! pipewire-pulse), their order per repeat, and every window in order.

use crate::args::{BenchArgs, CompareArg, SrbchannelArg};
use crate::report::Mode;

/// The modes of one repeat, alternating order on odd repeats (ABBA) to cancel drift.
pub fn schedule(modes: &[Mode], rep: u32) -> Vec<Mode> {
    let mut v = modes.to_vec();
    if rep % 2 == 1 {
        v.reverse();
    }
    v
}

/// The modes to measure: on pipewire-pulse (no shared memory, no srbchannel) `on` and `off`
/// collapse into one socket-only mode.
pub fn modes_for(args: &BenchArgs, pipewire: bool) -> Vec<Mode> {
    let mut m = if pipewire {
        vec![Mode::Socket]
    } else {
        match args.srbchannel {
            SrbchannelArg::On => vec![Mode::SrbchannelOn],
            SrbchannelArg::Off => vec![Mode::SrbchannelOff],
            SrbchannelArg::Both => vec![Mode::SrbchannelOn, Mode::SrbchannelOff],
        }
    };
    if args.compare == Some(CompareArg::Parec) {
        m.push(Mode::Reference);
    }
    m
}

/// Every window of the run, in order: per latency, per repeat, the modes alternating. Known
/// before the first window, so progress counts are right from the start.
pub fn plan(latencies_ms: &[u32], repeat: u32, modes: &[Mode]) -> Vec<(u32, Mode)> {
    latencies_ms
        .iter()
        .flat_map(|&lat| {
            (0..repeat).flat_map(move |rep| schedule(modes, rep).into_iter().map(move |m| (lat, m)))
        })
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use micoff_exit::EXIT_USAGE;

    fn try_args(cli: &[&str]) -> Result<BenchArgs, clap::Error> {
        #[derive(clap::Parser)]
        struct Cli {
            #[command(flatten)]
            a: BenchArgs,
        }
        let argv = std::iter::once("bench").chain(cli.iter().copied());
        <Cli as clap::Parser>::try_parse_from(argv).map(|c| c.a)
    }

    fn args(cli: &[&str]) -> BenchArgs {
        try_args(cli).unwrap()
    }

    #[test]
    fn schedule_alternates() {
        let m = [Mode::SrbchannelOn, Mode::SrbchannelOff, Mode::Reference];
        assert_eq!(schedule(&m, 0), m.to_vec());
        assert_eq!(
            schedule(&m, 1),
            vec![Mode::Reference, Mode::SrbchannelOff, Mode::SrbchannelOn]
        );
    }

    #[test]
    fn modes_and_plan_are_known_before_the_first_window() {
        let a = args(&["record", "--compare", "parec"]);
        assert_eq!(
            modes_for(&a, false),
            vec![Mode::SrbchannelOn, Mode::SrbchannelOff, Mode::Reference]
        );
        // pipewire-pulse: on and off collapse into one socket-only mode, so a sweep there has
        // half the windows (the old loop counted them as if both ran: "[1/2]" and stop).
        assert_eq!(modes_for(&a, true), vec![Mode::Socket, Mode::Reference]);
        let p = plan(&[5, 10], 2, &[Mode::Socket]);
        assert_eq!(p.len(), 4);
        let p = plan(&[10, 20], 2, &[Mode::SrbchannelOn, Mode::SrbchannelOff]);
        assert_eq!(
            p,
            vec![
                (10, Mode::SrbchannelOn),
                (10, Mode::SrbchannelOff),
                (10, Mode::SrbchannelOff),
                (10, Mode::SrbchannelOn),
                (20, Mode::SrbchannelOn),
                (20, Mode::SrbchannelOff),
                (20, Mode::SrbchannelOff),
                (20, Mode::SrbchannelOn),
            ]
        );
    }

    #[test]
    fn clap_rejects_what_the_bench_cannot_use_as_a_usage_error() {
        // Every argument is checked by its clap value parser (the bench has no checks of its
        // own): a bad one exits with 2 before anything runs.
        for bad in [
            &["record", "--duration", "0"][..],
            &["record", "--duration", "NaN"],
            &["record", "--duration", "inf"],
            &["record", "--baseline", "NaN"],
            &["record", "--baseline", "-1"],
            &["record", "--latency-ms", ""],
            &["record", "--latency-ms", "10,"],
            &["record", "--latency-ms", "0"],
            &["record", "--latency-ms", "10001"],
            &["record", "--repeat", "0"],
        ] {
            let e = try_args(bad)
                .err()
                .unwrap_or_else(|| panic!("{bad:?} accepted"));
            assert_eq!(e.exit_code(), EXIT_USAGE, "{bad:?}: {e}");
        }
        let a = args(&["record", "--baseline", "0"]);
        assert_eq!(a.baseline, Some(0.0));
        assert_eq!(a.latency_ms, vec![10]);
        assert_eq!(
            args(&["record", "--latency-ms", "5,10"]).latency_ms,
            [5, 10]
        );
    }
}
