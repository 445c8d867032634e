//! Reading a file micoff finds where it writes or is pointed at (an existing manifest, a user.js,
//! a policy file, a crx given on the command line): only a regular file, and only up to a bound.
//! Whatever sits at a name is opened without blocking (`O_NONBLOCK`: a FIFO planted there does not
//! hang the reader), then judged by what the open file is (`fstat`), so a link to `/dev/zero`, a
//! FIFO, a socket or a folder is refused with a message instead of hanging micoff or growing it
//! without bound. Links are followed (dotfiles); what the link may be written through is
//! [`resolve`](crate::resolve())'s rule, for writes.

use std::fs;
use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

use crate::shown::shown;

/// The most micoff reads of a text file it edits or inspects (a `prefs.js` of years of use is a
/// few hundred KiB).
pub const MAX_TEXT_BYTES: u64 = 16 << 20;

/// The most micoff reads of any other file (an add-on package, a backup, the host binary).
pub const MAX_FILE_BYTES: u64 = 512 << 20;

/// The regular file `path` stands for, open for reading, with its metadata; `Ok(None)` when there
/// is no file at that name (nor a folder on the way). Anything but a regular file is an
/// `InvalidData` error that says what it is.
pub fn open_regular(path: &Path) -> io::Result<Option<(fs::File, fs::Metadata)>> {
    let file = match fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
    {
        Ok(f) => f,
        Err(e)
            if e.kind() == io::ErrorKind::NotFound || e.raw_os_error() == Some(libc::ENOTDIR) =>
        {
            return Ok(None)
        }
        Err(e) => return Err(e),
    };
    let meta = file.metadata()?;
    let kind = meta.file_type();
    let what = if kind.is_file() {
        None
    } else if kind.is_dir() {
        Some("a folder")
    } else if kind.is_fifo() {
        Some("a FIFO")
    } else if kind.is_socket() {
        Some("a socket")
    } else if kind.is_char_device() {
        Some("a character device")
    } else if kind.is_block_device() {
        Some("a block device")
    } else {
        Some("not a file")
    };
    if let Some(what) = what {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "{} is {what}, not a regular file (micoff reads only regular files there)",
                shown(path)
            ),
        ));
    }
    Ok(Some((file, meta)))
}

/// The bytes of the regular file `path` stands for, at most `max_bytes` of them (more is an
/// `InvalidData` error); `Ok(None)` when there is none.
pub fn read_regular(path: &Path, max_bytes: u64) -> io::Result<Option<Vec<u8>>> {
    let Some((file, meta)) = open_regular(path)? else {
        return Ok(None);
    };
    read_bounded(path, file, meta.len(), max_bytes).map(Some)
}

/// [`read_regular`] as UTF-8 text (not UTF-8: `InvalidData`).
pub fn read_regular_text(path: &Path, max_bytes: u64) -> io::Result<Option<String>> {
    let Some(bytes) = read_regular(path, max_bytes)? else {
        return Ok(None);
    };
    String::from_utf8(bytes).map(Some).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{} is not UTF-8 text", shown(path)),
        )
    })
}

/// The content and permission bits of the regular file `path` stands for (through links), at most
/// [`MAX_FILE_BYTES`]; a missing file is a `NotFound` error.
pub fn read_with_mode(path: &Path) -> io::Result<(Vec<u8>, u32)> {
    let Some((file, meta)) = open_regular(path)? else {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!("{} does not exist", shown(path)),
        ));
    };
    let mode = meta.permissions().mode() & 0o7777;
    Ok((read_bounded(path, file, meta.len(), MAX_FILE_BYTES)?, mode))
}

/// Up to `max_bytes` of `file` (the size `fstat` gave is only a hint: a file may grow while read).
fn read_bounded(path: &Path, file: fs::File, len: u64, max_bytes: u64) -> io::Result<Vec<u8>> {
    let too_big = || {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{} is larger than {max_bytes} bytes", shown(path)),
        )
    };
    if len > max_bytes {
        return Err(too_big());
    }
    let mut content = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    file.take(max_bytes + 1).read_to_end(&mut content)?;
    if content.len() as u64 > max_bytes {
        return Err(too_big());
    }
    Ok(content)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
