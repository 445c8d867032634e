//! The host executable the manifests name: `--host-path`, else this binary; checked to be a
//! micoff-host WITHOUT running it (as root, `install --system` would run whatever it was handed; a
//! host for another architecture could not answer; a hanging file would hang the installer): a
//! regular, executable file named `micoff-host` (an older micoff's manifest is known by that name),
//! an ELF binary, carrying micoff's ident ([`micoff_native::HOST_IDENT`], kept by every build).

use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use micoff_files::read::open_regular;
use micoff_files::{shown, MAX_FILE_BYTES};

use micoff_native::{HOST_IDENT, VERSION};

/// The file name every manifest's host has.
pub const HOST_FILE_NAME: &str = "micoff-host";

/// The host the manifests name: `--host-path` (made absolute), else this binary.
pub fn host_path(given: Option<&Path>) -> Result<PathBuf, String> {
    let path = match given {
        Some(p) => p.to_path_buf(),
        None => std::env::current_exe().map_err(|e| format!("cannot find this binary: {e}"))?,
    };
    if path.is_absolute() {
        return Ok(path);
    }
    std::path::absolute(&path).map_err(|e| format!("{}: {e}", shown(&path)))
}

/// `Ok` with the version it carries when `path` is a micoff-host: a regular executable file named
/// `micoff-host`, an ELF binary with micoff's ident; else why not.
pub fn check_host(path: &Path) -> Result<String, String> {
    let p = shown(path);
    if path.file_name().and_then(|n| n.to_str()) != Some(HOST_FILE_NAME) {
        return Err(format!(
            "{p} is not named {HOST_FILE_NAME}: give the path of the micoff-host binary itself \
             (renamed, the manifests it names could not be told from another program's)"
        ));
    }
    let (mut file, meta) = match open_regular(path) {
        Ok(Some(f)) => f,
        Ok(None) => {
            return Err(format!(
                "{p} does not exist (moved or renamed?): the browsers would find no host there"
            ))
        }
        Err(e) => return Err(e.to_string()),
    };
    if meta.permissions().mode() & 0o111 == 0 {
        return Err(format!("{p} is not executable (chmod 755 it)"));
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(format!("{p} is larger than any micoff-host"));
    }
    let mut content = Vec::new();
    file.by_ref()
        .take(MAX_FILE_BYTES)
        .read_to_end(&mut content)
        .map_err(|e| format!("{p}: {e}"))?;
    if !content.starts_with(b"\x7fELF") {
        return Err(format!(
            "{p} is not a program binary (no ELF header): a script or another file"
        ));
    }
    ident_version(&content).ok_or_else(|| {
        format!("{p} is a program, but not micoff-host (it carries no micoff-host ident)")
    })
}

/// The version in micoff's ident inside `binary`, if it carries one.
fn ident_version(binary: &[u8]) -> Option<String> {
    let prefix = &HOST_IDENT.as_bytes()[..HOST_IDENT.find(' ').map_or(0, |i| i + 1)];
    let mut from = 0;
    while let Some(at) = find(&binary[from..], prefix) {
        let rest = &binary[from + at + prefix.len()..];
        let end = rest.iter().take(33).position(|b| *b == 0);
        if let Some(end) = end {
            let v = &rest[..end];
            if !v.is_empty()
                && v.iter()
                    .all(|b| b.is_ascii_alphanumeric() || b".-+".contains(b))
            {
                return Some(String::from_utf8_lossy(v).into_owned());
            }
        }
        from += at + 1;
    }
    None
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() || haystack.len() < needle.len() {
        return None;
    }
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// A note when the host found is another version than this installer (its manifest is the same;
/// the extension and the host are released together).
pub fn version_note(found: &str) -> Option<String> {
    (found != VERSION).then(|| {
        format!(
            "the host is micoff-host {found}, this installer is {VERSION}: install the host and \
             the extension of one release"
        )
    })
}

/// The temporary folder `path` is in (`/tmp`, `/var/tmp`, `$TMPDIR`), if any: a host there may be
/// cleaned away at the next boot, and anyone who can write there could replace it.
pub fn temporary_folder(path: &Path, tmpdir: Option<&Path>) -> Option<PathBuf> {
    let mut folders = vec![PathBuf::from("/tmp"), PathBuf::from("/var/tmp")];
    folders.extend(tmpdir.filter(|t| t.is_absolute()).map(Path::to_path_buf));
    let real = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    folders.into_iter().find(|t| {
        let t_real = std::fs::canonicalize(t).unwrap_or_else(|_| t.clone());
        path.starts_with(t) || real.starts_with(&t_real)
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_ident_is_found_with_its_version() {
        let mut bin = b"\x7fELF junk".to_vec();
        bin.extend_from_slice(HOST_IDENT.as_bytes());
        bin.extend_from_slice(b"more");
        assert_eq!(ident_version(&bin).as_deref(), Some(VERSION));
        // The prefix alone (the checker's own literal), followed by no version: not an ident.
        let prefix = &HOST_IDENT[..HOST_IDENT.find(' ').unwrap() + 1];
        let lone = format!("\x7fELF{prefix}\u{1}\u{2}xyz");
        assert_eq!(ident_version(lone.as_bytes()), None);
    }

    #[test]
    fn temporary_folders_are_told() {
        assert_eq!(
            temporary_folder(Path::new("/tmp/x/micoff-host"), None),
            Some(PathBuf::from("/tmp"))
        );
        assert_eq!(
            temporary_folder(
                Path::new("/home/u/scratch/micoff-host"),
                Some(Path::new("/home/u/scratch"))
            ),
            Some(PathBuf::from("/home/u/scratch"))
        );
        assert_eq!(
            temporary_folder(Path::new("/usr/bin/micoff-host"), None),
            None
        );
    }
}
