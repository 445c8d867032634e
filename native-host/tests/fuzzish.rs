//! A stable, deterministic stand-in for the cargo-fuzz targets (native-host/fuzz): random and
//! mutated byte streams through the frame decoder and the request decoder, a fixed number of
//! iterations. Checks: no panic, and every decoded frame fits the input.

#![allow(clippy::unwrap_used)] // tests may unwrap (house style)

use micoff_native::framing::FrameCodec;
use micoff_native::protocol::decode_request;

/// xorshift64*: reproducible without a dependency.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

const SEEDS: &[&str] = &[
    r#"{"id":1,"type":"version"}"#,
    r#"{"id":7,"type":"cpu_sample","window_ms":1000,"pids":[1,2]}"#,
    r#"{"id":3,"type":"subscribe","topic":"cpu","interval_ms":500}"#,
    r#"{"id":4,"type":"unsubscribe","subscription":1}"#,
    r#"{"id":5,"type":"processes","browser_pid":123}"#,
];

fn mutate(rng: &mut Rng, seed: &[u8]) -> Vec<u8> {
    let mut bytes = seed.to_vec();
    for _ in 0..=rng.below(4) {
        match rng.below(4) {
            0 if !bytes.is_empty() => {
                let i = rng.below(bytes.len());
                bytes[i] = rng.next() as u8;
            }
            1 if !bytes.is_empty() => {
                let i = rng.below(bytes.len());
                bytes.remove(i);
            }
            2 => {
                let i = rng.below(bytes.len() + 1);
                const ALPHABET: &[u8] = b"{}[]\":,0-9e.\\u";
                bytes.insert(i, ALPHABET[rng.below(ALPHABET.len())]);
            }
            _ => bytes.truncate(rng.below(bytes.len() + 1)),
        }
    }
    bytes
}

#[test]
fn request_decoder_never_panics() {
    let mut rng = Rng(0x5eed_1234_abcd_0001);
    for i in 0..20_000 {
        let seed = SEEDS[i % SEEDS.len()].as_bytes();
        let body = if i % 5 == 0 {
            (0..rng.below(64)).map(|_| rng.next() as u8).collect()
        } else {
            mutate(&mut rng, seed)
        };
        if let Err(e) = decode_request(&body) {
            assert!((1..=9).contains(&e.code.code()));
        }
    }
}

#[test]
fn frame_decoder_never_panics_and_stays_in_bounds() {
    let mut rng = Rng(0x5eed_1234_abcd_0002);
    let codec = FrameCodec {
        max_incoming_bytes: 1 << 12,
        ..FrameCodec::default()
    };
    for _ in 0..20_000 {
        let mut stream = Vec::new();
        for _ in 0..rng.below(4) {
            let seed = SEEDS[rng.below(SEEDS.len())].as_bytes();
            let body = mutate(&mut rng, seed);
            let mut len = (body.len() as u32).to_ne_bytes();
            if rng.below(8) == 0 {
                len[rng.below(4)] = rng.next() as u8;
            }
            stream.extend_from_slice(&len);
            stream.extend_from_slice(&body);
        }
        stream.truncate(stream.len().saturating_sub(rng.below(3)));
        let total = stream.len();
        let mut buf = stream;
        let mut taken = 0;
        loop {
            match codec.decode(&mut buf) {
                Ok(Some(body)) => {
                    taken += 4 + body.len();
                    assert!(taken <= total);
                    let _ = decode_request(&body);
                }
                Ok(None) => {
                    let _ = codec.decode_eof(&mut buf);
                    break;
                }
                Err(_) => break,
            }
        }
    }
}
