//! The stream's data callbacks, one wakeup of ours each: recording drains what is readable,
//! playback writes a quiet tone; both count what they move in [`Counters`].

use std::cell::{Cell, RefCell};
use std::f64::consts::PI;
use std::rc::Rc;

use libpulse_binding as pulse;
use pulse::stream::{PeekResult, Stream};

use crate::client::stream_format::{FRAME_BYTES, SAMPLE_RATE};

const TONE_HZ: f64 = 440.0;

/// What the callbacks counted since the stream started.
#[derive(Default)]
pub(crate) struct Counters {
    pub(crate) bytes: Cell<u64>,
    pub(crate) callbacks: Cell<u64>,
    pub(crate) overflows: Cell<u64>,
    pub(crate) underflows: Cell<u64>,
}

/// A data callback for `stream`: counts the wakeup, then runs `work` on the stream with the
/// callback's byte count (not once the stream is gone or while it is borrowed elsewhere).
fn counted(
    stream: &Rc<RefCell<Stream>>,
    counters: &Rc<Counters>,
    mut work: impl FnMut(&mut Stream, &Counters, usize) + 'static,
) -> Box<dyn FnMut(usize) + 'static> {
    // The callback runs inside `iterate`, while no other borrow of the stream is held.
    let weak = Rc::downgrade(stream);
    let c = Rc::clone(counters);
    Box::new(move |n| {
        let Some(stream) = weak.upgrade() else {
            return;
        };
        c.callbacks.set(c.callbacks.get() + 1);
        let Ok(mut s) = stream.try_borrow_mut() else {
            return;
        };
        work(&mut s, &c, n);
    })
}

pub(crate) fn install_record_callback(stream: &Rc<RefCell<Stream>>, counters: &Rc<Counters>) {
    let callback = counted(stream, counters, |s, c, _readable| {
        // Drain everything that is readable; this is what a capture client does per wakeup.
        loop {
            match s.peek() {
                Ok(PeekResult::Data(data)) => {
                    let n = data.len() as u64;
                    c.bytes.set(c.bytes.get() + n);
                    if s.discard().is_err() {
                        break;
                    }
                }
                Ok(PeekResult::Hole(n)) => {
                    c.bytes.set(c.bytes.get() + n as u64);
                    if s.discard().is_err() {
                        break;
                    }
                }
                Ok(PeekResult::Empty) | Err(_) => break,
            }
        }
    });
    stream.borrow_mut().set_read_callback(Some(callback));
}

pub(crate) fn install_playback_callback(stream: &Rc<RefCell<Stream>>, counters: &Rc<Counters>) {
    let phase = Cell::new(0.0f64);
    let mut buf: Vec<u8> = Vec::new();
    let callback = counted(stream, counters, move |s, c, nbytes| {
        let frames = nbytes / FRAME_BYTES;
        if frames == 0 {
            return;
        }
        fill_tone(&mut buf, frames, &phase);
        if s.write_copy(&buf, 0, pulse::stream::SeekMode::Relative)
            .is_ok()
        {
            c.bytes.set(c.bytes.get() + buf.len() as u64);
        }
    });
    stream.borrow_mut().set_write_callback(Some(callback));
}

/// A quiet 440 Hz sine, s16 stereo, continuing from `phase`.
fn fill_tone(buf: &mut Vec<u8>, frames: usize, phase: &Cell<f64>) {
    buf.clear();
    buf.reserve(frames * FRAME_BYTES);
    let step = 2.0 * PI * TONE_HZ / f64::from(SAMPLE_RATE);
    let mut p = phase.get();
    for _ in 0..frames {
        // 0.1 of full scale: a clear level without clipping anything downstream.
        let v = (p.sin() * 0.1 * f64::from(i16::MAX)) as i16;
        let b = v.to_ne_bytes();
        buf.extend_from_slice(&b);
        buf.extend_from_slice(&b);
        p += step;
        if p > 2.0 * PI {
            p -= 2.0 * PI;
        }
    }
    phase.set(p);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tone_is_continuous_and_sized() {
        let phase = Cell::new(0.0);
        let mut buf = Vec::new();
        fill_tone(&mut buf, 441, &phase);
        assert_eq!(buf.len(), 441 * FRAME_BYTES);
        // 441 frames of 440 Hz at 44.1 kHz = 4.4 periods; phase stays within one period.
        assert!(phase.get() >= 0.0 && phase.get() <= 2.0 * PI);
    }
}
