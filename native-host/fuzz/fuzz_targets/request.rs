//! cargo-fuzz entry for the `request` target; the target itself (what it runs, what it checks) is
//! `micoff_fuzz::request` (native-host/crates/micoff-fuzz), shared with the stable runner.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    micoff_fuzz::run("request", data);
});
