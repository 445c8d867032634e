//! cargo-fuzz entry for the `policies_json` target; the target itself (what it runs, what it checks)
//! is `micoff_fuzz::policies_json` (native-host/crates/micoff-fuzz), shared with the stable runner.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    micoff_fuzz::run("policies_json", data);
});
