//! Arbitrary byte streams through the frame decoder (and every frame through the request decoder).
#![no_main]

use libfuzzer_sys::fuzz_target;
use micoff_host::framing::FrameCodec;

fuzz_target!(|data: &[u8]| {
    let codec = FrameCodec {
        max_incoming_bytes: 1 << 16,
        ..FrameCodec::default()
    };
    let mut buf = data.to_vec();
    let mut taken = 0usize;
    loop {
        match codec.decode(&mut buf) {
            Ok(Some(body)) => {
                taken += 4 + body.len();
                assert!(taken <= data.len());
                let _ = micoff_host::protocol::decode_request(&body);
            }
            Ok(None) => {
                let _ = codec.decode_eof(&mut buf);
                break;
            }
            Err(_) => break,
        }
    }
});
