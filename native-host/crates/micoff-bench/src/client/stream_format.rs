//! The measured stream's sample format (what parec/pacat use by default) and the byte/time
//! conversions on it.

/// The sample format of the measured stream: what `parec`/`pacat` use by default, so the
/// `--compare parec` reference moves the same number of bytes.
pub const SAMPLE_RATE: u32 = 44_100;
pub const CHANNELS: u8 = 2;
/// Bytes of one s16 stereo frame.
pub(crate) const FRAME_BYTES: usize = 4;

/// Bytes of s16 audio to microseconds; `None` for "server default" (`u32::MAX`) or a bad spec.
pub fn bytes_to_us(bytes: u32, sample_rate: u32, channels: u8) -> Option<u64> {
    let bytes_per_s = u64::from(sample_rate) * u64::from(channels) * 2;
    if bytes == u32::MAX || bytes_per_s == 0 {
        return None;
    }
    Some(u64::from(bytes) * 1_000_000 / bytes_per_s)
}

/// Milliseconds of s16 audio to whole frames' bytes (what parec does with `--latency-msec`).
pub fn ms_to_bytes(latency_ms: u32, sample_rate: u32, channels: u8) -> u32 {
    let frames = u64::from(sample_rate) * u64::from(latency_ms) / 1000;
    let bytes = frames * u64::from(channels) * 2;
    u32::try_from(bytes).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ms_bytes_round_trip() {
        assert_eq!(ms_to_bytes(10, 44_100, 2), 1764);
        assert_eq!(bytes_to_us(1764, 44_100, 2), Some(10_000));
        assert_eq!(bytes_to_us(u32::MAX, 44_100, 2), None);
        assert_eq!(bytes_to_us(100, 0, 2), None);
    }
}
