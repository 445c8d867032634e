//! Native messaging frames: a 4-byte length in native byte order, then that many bytes of JSON.
//!
//! [`FrameCodec`] is the one place that knows about bytes: a pure decoder over a buffer (no I/O, so
//! the fuzz target and the tests drive it directly) and an encoder that enforces the 1 MiB limit the
//! browser puts on host -> browser messages. [`FrameReader`] / [`FrameWriter`] put it on top of
//! tokio's `AsyncRead` / `AsyncWrite`.

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// Host -> browser: the browser closes the port above this.
pub const MAX_OUTGOING_BYTES: usize = 1024 * 1024;
/// Browser -> host: the largest request micoff sends is a `cpu_sample` or `subscribe` with 256 pids
/// (under 3 KiB); 64 KiB leaves a wide margin. A longer frame is refused from its header (PROTOCOL.md,
/// "Transport"), so no request is ever buffered beyond this.
pub const MAX_INCOMING_BYTES: usize = 64 * 1024;
/// A read buffer grown past this by a large frame is given back once the frame is taken.
const KEEP_BUFFER_BYTES: usize = 64 * 1024;
/// Size of the length prefix.
pub const HEADER_BYTES: usize = 4;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum FrameError {
    #[error("incoming frame of {length} bytes exceeds the request limit of {limit} bytes")]
    BadLength { length: u64, limit: usize },
    #[error("input ended inside a frame header ({have} of 4 bytes)")]
    TruncatedHeader { have: usize },
    #[error("input ended inside a frame body ({have} of {length} bytes)")]
    TruncatedBody { have: usize, length: usize },
    #[error("outgoing message of {length} bytes exceeds the limit of {limit} bytes")]
    TooLarge { length: usize, limit: usize },
}

/// Errors of the async reader/writer: framing or the underlying pipe.
#[derive(Debug, thiserror::Error)]
pub enum TransportError {
    #[error(transparent)]
    Frame(#[from] FrameError),
    #[error("i/o error on the native messaging pipe: {0}")]
    Io(#[from] std::io::Error),
}

/// The frame codec. Limits are fields so tests can shrink them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameCodec {
    pub max_incoming_bytes: usize,
    pub max_outgoing_bytes: usize,
}

impl Default for FrameCodec {
    fn default() -> Self {
        Self {
            max_incoming_bytes: MAX_INCOMING_BYTES,
            max_outgoing_bytes: MAX_OUTGOING_BYTES,
        }
    }
}

impl FrameCodec {
    /// Takes one complete frame body off the front of `buf`, if there is one. `Ok(None)` means
    /// more bytes are needed. A zero-length frame yields an empty body (the request decoder then
    /// rejects it as invalid JSON).
    pub fn decode(&self, buf: &mut Vec<u8>) -> Result<Option<Vec<u8>>, FrameError> {
        let Some(header) = buf.first_chunk::<HEADER_BYTES>() else {
            return Ok(None);
        };
        let length = u32::from_ne_bytes(*header);
        let length_usize = usize::try_from(length).unwrap_or(usize::MAX);
        if length_usize > self.max_incoming_bytes {
            return Err(FrameError::BadLength {
                length: u64::from(length),
                limit: self.max_incoming_bytes,
            });
        }
        let end = HEADER_BYTES + length_usize;
        if buf.len() < end {
            return Ok(None);
        }
        let body = buf[HEADER_BYTES..end].to_vec();
        buf.drain(..end);
        Ok(Some(body))
    }

    /// Called at end of input with what is left in the buffer: nothing left is a clean end, anything
    /// else a truncated frame.
    pub fn decode_eof(&self, buf: &mut Vec<u8>) -> Result<Option<Vec<u8>>, FrameError> {
        if let Some(body) = self.decode(buf)? {
            return Ok(Some(body));
        }
        match buf.first_chunk::<HEADER_BYTES>() {
            None if buf.is_empty() => Ok(None),
            None => Err(FrameError::TruncatedHeader { have: buf.len() }),
            Some(header) => Err(FrameError::TruncatedBody {
                have: buf.len() - HEADER_BYTES,
                length: u32::from_ne_bytes(*header) as usize,
            }),
        }
    }

    /// Appends one frame carrying `body` to `out`.
    pub fn encode(&self, body: &[u8], out: &mut Vec<u8>) -> Result<(), FrameError> {
        let too_large = FrameError::TooLarge {
            length: body.len(),
            limit: self.max_outgoing_bytes,
        };
        if body.len() > self.max_outgoing_bytes {
            return Err(too_large);
        }
        let length = u32::try_from(body.len()).map_err(|_| too_large)?;
        out.reserve(HEADER_BYTES + body.len());
        out.extend_from_slice(&length.to_ne_bytes());
        out.extend_from_slice(body);
        Ok(())
    }
}

/// Reads frames from an `AsyncRead` (stdin in production, a duplex pipe in tests).
pub struct FrameReader<R> {
    reader: R,
    codec: FrameCodec,
    buf: Vec<u8>,
    eof: bool,
}

impl<R: AsyncRead + Unpin> FrameReader<R> {
    pub fn new(reader: R, codec: FrameCodec) -> Self {
        Self {
            reader,
            codec,
            buf: Vec::new(),
            eof: false,
        }
    }

    /// The next frame body; `Ok(None)` at a clean end of input (between frames).
    pub async fn next_frame(&mut self) -> Result<Option<Vec<u8>>, TransportError> {
        let mut chunk = [0u8; 16 * 1024];
        loop {
            if let Some(body) = self.codec.decode(&mut self.buf)? {
                if self.buf.capacity() > KEEP_BUFFER_BYTES {
                    self.buf.shrink_to(KEEP_BUFFER_BYTES);
                }
                return Ok(Some(body));
            }
            if self.eof {
                return Ok(self.codec.decode_eof(&mut self.buf)?);
            }
            let n = self.reader.read(&mut chunk).await?;
            if n == 0 {
                self.eof = true;
            } else {
                self.buf.extend_from_slice(&chunk[..n]);
            }
        }
    }
}

/// Writes frames to an `AsyncWrite`, one flush per frame (the browser reads them as they come).
pub struct FrameWriter<W> {
    writer: W,
    codec: FrameCodec,
    buf: Vec<u8>,
}

impl<W: AsyncWrite + Unpin> FrameWriter<W> {
    pub fn new(writer: W, codec: FrameCodec) -> Self {
        Self {
            writer,
            codec,
            buf: Vec::new(),
        }
    }

    pub async fn write_frame(&mut self, body: &[u8]) -> Result<(), TransportError> {
        self.buf.clear();
        self.codec.encode(body, &mut self.buf)?;
        self.writer.write_all(&self.buf).await?;
        self.writer.flush().await?;
        // A 1 MiB reply does not pin 1 MiB for the life of the connection.
        if self.buf.capacity() > KEEP_BUFFER_BYTES {
            self.buf = Vec::new();
        }
        Ok(())
    }

    pub async fn shutdown(&mut self) -> Result<(), TransportError> {
        self.writer.shutdown().await?;
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn frame(body: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        FrameCodec::default().encode(body, &mut out).unwrap();
        out
    }

    #[test]
    fn decodes_one_frame_and_keeps_the_rest() {
        let codec = FrameCodec::default();
        let mut buf = frame(b"{\"a\":1}");
        buf.extend_from_slice(&frame(b"[]"));
        buf.extend_from_slice(&[1, 0]);
        assert_eq!(codec.decode(&mut buf).unwrap(), Some(b"{\"a\":1}".to_vec()));
        assert_eq!(codec.decode(&mut buf).unwrap(), Some(b"[]".to_vec()));
        assert_eq!(codec.decode(&mut buf).unwrap(), None);
        assert_eq!(buf, vec![1, 0]);
    }

    #[test]
    fn zero_length_frame_is_an_empty_body() {
        let mut buf = frame(b"");
        assert_eq!(buf.len(), 4);
        assert_eq!(
            FrameCodec::default().decode(&mut buf).unwrap(),
            Some(Vec::new())
        );
        assert!(buf.is_empty());
    }

    #[test]
    fn length_over_the_limit_is_a_bad_length() {
        let codec = FrameCodec::default();
        let mut buf = ((MAX_INCOMING_BYTES + 1) as u32).to_ne_bytes().to_vec();
        assert!(matches!(
            codec.decode(&mut buf),
            Err(FrameError::BadLength { .. })
        ));
        let mut buf = u32::MAX.to_ne_bytes().to_vec();
        assert!(matches!(
            codec.decode(&mut buf),
            Err(FrameError::BadLength { .. })
        ));
        // Exactly at the limit is fine (just incomplete).
        let mut buf = (MAX_INCOMING_BYTES as u32).to_ne_bytes().to_vec();
        assert_eq!(codec.decode(&mut buf), Ok(None));
    }

    #[test]
    fn eof_inside_header_or_body_is_truncation() {
        let codec = FrameCodec::default();
        assert_eq!(codec.decode_eof(&mut Vec::new()), Ok(None));
        assert_eq!(
            codec.decode_eof(&mut vec![5, 0]),
            Err(FrameError::TruncatedHeader { have: 2 })
        );
        let mut buf = frame(b"hello");
        buf.truncate(6);
        assert_eq!(
            codec.decode_eof(&mut buf),
            Err(FrameError::TruncatedBody { have: 2, length: 5 })
        );
    }

    #[test]
    fn header_is_native_endian() {
        let out = frame(b"abc");
        assert_eq!(out[..4], 3u32.to_ne_bytes());
        assert_eq!(&out[4..], b"abc");
    }

    #[test]
    fn outgoing_limit_is_exactly_one_mebibyte() {
        let codec = FrameCodec::default();
        let mut out = Vec::new();
        let body = vec![b' '; MAX_OUTGOING_BYTES];
        codec.encode(&body, &mut out).unwrap();
        assert_eq!(out.len(), MAX_OUTGOING_BYTES + 4);
        let body = vec![b' '; MAX_OUTGOING_BYTES + 1];
        let mut out = Vec::new();
        assert_eq!(
            codec.encode(&body, &mut out),
            Err(FrameError::TooLarge {
                length: MAX_OUTGOING_BYTES + 1,
                limit: MAX_OUTGOING_BYTES
            })
        );
        assert!(out.is_empty());
    }

    #[test]
    fn non_utf8_body_passes_framing() {
        // Framing does not look inside; the request decoder rejects it.
        let mut buf = frame(&[0xff, 0xfe, 0x00]);
        assert_eq!(
            FrameCodec::default().decode(&mut buf).unwrap(),
            Some(vec![0xff, 0xfe, 0x00])
        );
    }

    #[tokio::test]
    async fn reader_handles_two_frames_in_one_read_and_frames_split_across_reads() {
        let mut bytes = frame(b"one");
        bytes.extend_from_slice(&frame(b"two"));
        bytes.extend_from_slice(&frame(b"three"));
        // One read carries the first two frames and half the third; the rest trickles in.
        let (mut tx, rx) = tokio::io::duplex(64);
        let writer = tokio::spawn(async move {
            use tokio::io::AsyncWriteExt;
            let split = bytes.len() - 4;
            tx.write_all(&bytes[..split]).await.unwrap();
            for b in &bytes[split..] {
                tx.write_all(&[*b]).await.unwrap();
                tx.flush().await.unwrap();
            }
        });
        let mut reader = FrameReader::new(rx, FrameCodec::default());
        assert_eq!(reader.next_frame().await.unwrap(), Some(b"one".to_vec()));
        assert_eq!(reader.next_frame().await.unwrap(), Some(b"two".to_vec()));
        assert_eq!(reader.next_frame().await.unwrap(), Some(b"three".to_vec()));
        writer.await.unwrap();
        assert_eq!(reader.next_frame().await.unwrap(), None);
    }

    #[tokio::test]
    async fn reader_reports_truncated_body_at_eof() {
        let mut bytes = frame(b"truncated");
        bytes.truncate(7);
        let mut reader = FrameReader::new(&bytes[..], FrameCodec::default());
        assert!(matches!(
            reader.next_frame().await,
            Err(TransportError::Frame(FrameError::TruncatedBody {
                have: 3,
                length: 9
            }))
        ));
    }

    #[tokio::test]
    async fn writer_refuses_oversized_frames_without_writing() {
        let mut out = Vec::new();
        let codec = FrameCodec {
            max_outgoing_bytes: 8,
            ..FrameCodec::default()
        };
        let mut writer = FrameWriter::new(&mut out, codec);
        writer.write_frame(b"12345678").await.unwrap();
        assert!(writer.write_frame(b"123456789").await.is_err());
        assert_eq!(out.len(), 12);
    }
}
