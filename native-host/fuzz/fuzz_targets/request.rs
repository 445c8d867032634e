//! Arbitrary frame bodies through the request decoder: never panics, codes stay in the table.
#![no_main]

use libfuzzer_sys::fuzz_target;
use micoff_host::protocol::ErrorCode;

fuzz_target!(|data: &[u8]| {
    if let Err(e) = micoff_host::protocol::decode_request(data) {
        assert!(ErrorCode::from_code(e.code.code()).is_some());
    }
});
