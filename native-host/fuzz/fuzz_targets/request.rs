//! Arbitrary frame bodies through the request decoder: never panics, codes stay in the table.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(e) = micoff_host::protocol::decode_request(data) {
        assert!((1..=9).contains(&e.code.code()));
    }
});
