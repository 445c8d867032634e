//! Every committed seed (real samples and the regression inputs of crashes found and fixed) runs
//! through its target without a panic: what the bounded fuzz run found stays fixed in the plain
//! `cargo test` run.

#![allow(clippy::unwrap_used)] // tests may unwrap (house style)

use std::path::Path;

use micoff_fuzz::mutate::read_dir_files;
use micoff_fuzz::TARGETS;

#[test]
fn every_committed_seed_runs_clean() {
    let seeds = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/seeds");
    for (name, target) in TARGETS {
        let files = read_dir_files(&seeds.join(name)).unwrap();
        assert!(!files.is_empty(), "no seeds for {name}");
        for (path, bytes) in files {
            let r = std::panic::catch_unwind(|| target(&bytes));
            assert!(r.is_ok(), "{name} panics on {}", path.display());
        }
    }
}

#[test]
fn regression_seeds_exercise_what_they_are_named_for() {
    // The interrupts line with a u64::MAX counter is parsed (counted as saturated, not dropped).
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../fuzz/seeds/doctor_parsers/regression-interrupts-count-overflow"),
    )
    .unwrap();
    let irqs = micoff_doctor::parse::interrupts(&text);
    assert_eq!(irqs[0].count, u64::MAX);
    let hw = micoff_doctor::parse::hw_params(
        "rate: 48000\nperiod_size: 18446744073709551615\nbuffer_size: 96000\n",
    )
    .unwrap();
    assert_eq!(hw.period_us(), None);
    assert_eq!(hw.buffer_us(), Some(2_000_000));
}
