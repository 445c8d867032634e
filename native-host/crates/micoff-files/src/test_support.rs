//! What the tests of this crate share.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// The names in `dir`, sorted.
#[allow(clippy::unwrap_used)]
pub fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// The permission bits of `path`.
#[allow(clippy::unwrap_used)]
pub fn mode(path: &Path) -> u32 {
    fs::metadata(path).unwrap().permissions().mode() & 0o7777
}
