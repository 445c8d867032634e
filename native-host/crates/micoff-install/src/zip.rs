//! One file out of a zip, through its central directory (stored or deflated entries): the
//! `manifest.json` of a crx or an xpi, and the two files of Firefox's `omni.ja` the installer reads
//! (the build's constants, its default prefs). Nothing is extracted to disk; a file source is read
//! in small pieces at offsets (an `omni.ja` is tens of megabytes).

use std::io::Read;
use std::os::unix::fs::FileExt;
use std::path::Path;

/// Bytes at offsets: a slice in memory, or a file.
pub trait Source {
    fn size(&self) -> u64;
    /// Exactly `len` bytes at `at`, or an error.
    fn read_at(&self, at: u64, len: usize) -> Result<Vec<u8>, String>;
}

impl Source for [u8] {
    fn size(&self) -> u64 {
        self.len() as u64
    }

    fn read_at(&self, at: u64, len: usize) -> Result<Vec<u8>, String> {
        let at = usize::try_from(at).map_err(|e| e.to_string())?;
        self.get(at..at.saturating_add(len))
            .filter(|s| s.len() == len)
            .map(<[u8]>::to_vec)
            .ok_or_else(|| "truncated zip".to_owned())
    }
}

/// A zip file on disk.
pub struct FileSource {
    file: std::fs::File,
    size: u64,
}

impl FileSource {
    pub fn open(path: &Path) -> Result<Self, String> {
        let file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let size = file.metadata().map_err(|e| e.to_string())?.len();
        Ok(Self { file, size })
    }
}

impl Source for FileSource {
    fn size(&self) -> u64 {
        self.size
    }

    fn read_at(&self, at: u64, len: usize) -> Result<Vec<u8>, String> {
        let mut buf = vec![0; len];
        self.file
            .read_exact_at(&mut buf, at)
            .map_err(|e| format!("reading the zip: {e}"))?;
        Ok(buf)
    }
}

fn le16(b: &[u8], at: usize) -> Result<usize, String> {
    b.get(at..at + 2)
        .map(|s| usize::from(u16::from_le_bytes([s[0], s[1]])))
        .ok_or_else(|| "truncated zip".to_owned())
}

fn le32(b: &[u8], at: usize) -> Result<u64, String> {
    b.get(at..at + 4)
        .map(|s| u64::from(u32::from_le_bytes([s[0], s[1], s[2], s[3]])))
        .ok_or_else(|| "truncated zip".to_owned())
}

/// A `manifest.json` larger than this is not an extension's.
pub const MAX_MANIFEST: u64 = 1 << 20;

/// The end record and its comment fit in the last 64 KiB + 22 bytes.
const TAIL: u64 = 65_536 + 22;
/// A central directory larger than this is not a zip we read.
const MAX_DIRECTORY: u64 = 16 << 20;

/// The content of `name` (at most `max` bytes once inflated), `None` when the zip has no such file.
pub fn entry<S: Source + ?Sized>(zip: &S, name: &str, max: u64) -> Result<Option<Vec<u8>>, String> {
    let tail_len = zip.size().min(TAIL);
    let tail_at = zip.size() - tail_len;
    let tail = zip.read_at(
        tail_at,
        usize::try_from(tail_len).map_err(|e| e.to_string())?,
    )?;
    let eocd = (0..tail.len().saturating_sub(21))
        .rev()
        .find(|&i| tail[i..].starts_with(&[0x50, 0x4b, 0x05, 0x06]))
        .ok_or("not a zip (no end record)")?;
    let entries = le16(&tail, eocd + 10)?;
    let dir_len = le32(&tail, eocd + 12)?;
    let dir_at = le32(&tail, eocd + 16)?;
    if dir_len > MAX_DIRECTORY {
        return Err("zip central directory too large".into());
    }
    let dir = zip.read_at(dir_at, usize::try_from(dir_len).map_err(|e| e.to_string())?)?;
    let mut at = 0usize;
    for _ in 0..entries {
        if !dir
            .get(at..)
            .is_some_and(|s| s.starts_with(&[0x50, 0x4b, 0x01, 0x02]))
        {
            return Err("bad zip central directory".into());
        }
        let method = le16(&dir, at + 10)?;
        let size = le32(&dir, at + 20)?;
        let (name_len, extra_len, comment_len) = (
            le16(&dir, at + 28)?,
            le16(&dir, at + 30)?,
            le16(&dir, at + 32)?,
        );
        let local = le32(&dir, at + 42)?;
        let this = dir
            .get(at + 46..at + 46 + name_len)
            .ok_or("truncated zip")?;
        at += 46 + name_len + extra_len + comment_len;
        if this != name.as_bytes() {
            continue;
        }
        let header = zip.read_at(local, 30)?;
        if !header.starts_with(&[0x50, 0x4b, 0x03, 0x04]) {
            return Err("bad zip local header".into());
        }
        let start = local + 30 + (le16(&header, 26)? + le16(&header, 28)?) as u64;
        if method == 0 && size > max {
            return Err(format!("{name} is larger than {max} bytes"));
        }
        let data = zip.read_at(start, usize::try_from(size).map_err(|e| e.to_string())?)?;
        return match method {
            0 => Ok(Some(data)),
            8 => {
                let mut out = Vec::new();
                flate2::read::DeflateDecoder::new(data.as_slice())
                    .take(max)
                    .read_to_end(&mut out)
                    .map_err(|e| format!("{name}: {e}"))?;
                Ok(Some(out))
            }
            m => Err(format!("{name} compressed with method {m}")),
        };
    }
    Ok(None)
}
