//! Every file the doctor reads or the fixers write goes through a [`Root`]: `/` on a real machine,
//! a fixture tree or a temporary directory in tests. Paths handed to it are absolute-looking
//! (`/proc/asound/cards`) and are joined under the root.

use std::ffi::OsString;
use std::fs;
use std::io;
use std::path::{Component, Path, PathBuf};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Root {
    base: PathBuf,
}

impl Root {
    pub fn new(base: impl Into<PathBuf>) -> Self {
        Self { base: base.into() }
    }

    /// The real machine.
    pub fn system() -> Self {
        Self::new("/")
    }

    pub fn base(&self) -> &Path {
        &self.base
    }

    pub fn is_system(&self) -> bool {
        self.base == Path::new("/")
    }

    /// `/etc/x` -> `<root>/etc/x`.
    pub fn path(&self, abs: impl AsRef<Path>) -> PathBuf {
        let abs = abs.as_ref();
        let rel = abs.strip_prefix("/").unwrap_or(abs);
        self.base.join(rel)
    }

    /// The file's text, or `None` when it is missing or unreadable (both are normal in /proc
    /// and /sys: a vanished process, a module that is not loaded, a file only root may read).
    pub fn read(&self, abs: impl AsRef<Path>) -> Option<String> {
        fs::read(self.path(abs))
            .ok()
            .map(|b| String::from_utf8_lossy(&b).into_owned())
    }

    /// Like [`Root::read`], trimmed.
    pub fn read_trim(&self, abs: impl AsRef<Path>) -> Option<String> {
        self.read(abs).map(|s| s.trim().to_owned())
    }

    pub fn read_bytes(&self, abs: impl AsRef<Path>) -> io::Result<Vec<u8>> {
        fs::read(self.path(abs))
    }

    pub fn exists(&self, abs: impl AsRef<Path>) -> bool {
        // symlink_metadata: a device node or a dangling link still "exists".
        fs::symlink_metadata(self.path(abs)).is_ok()
    }

    /// Names in a directory, sorted; empty when the directory is missing.
    pub fn list(&self, abs: impl AsRef<Path>) -> Vec<String> {
        let mut names: Vec<String> = match fs::read_dir(self.path(abs)) {
            Ok(rd) => rd
                .filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect(),
            Err(_) => Vec::new(),
        };
        names.sort_by(|a, b| natural_cmp(a, b));
        names
    }

    /// `abs` with every symlink followed, as an absolute-looking path inside the root (what
    /// `realpath` gives on the real machine; absolute link targets are taken under the root).
    /// `None` when a component is missing or the links loop. sysfs needs this: both
    /// `/sys/class/sound/card1` and its `device` are relative links.
    pub fn canonical(&self, abs: impl AsRef<Path>) -> Option<PathBuf> {
        // Components still to walk, last one first.
        let mut todo: Vec<OsString> = Vec::new();
        push_components(&mut todo, abs.as_ref());
        let mut cur = PathBuf::from("/");
        let mut links = 0;
        while let Some(c) = todo.pop() {
            if c == ".." {
                cur.pop();
                continue;
            }
            let next = cur.join(&c);
            let meta = fs::symlink_metadata(self.path(&next)).ok()?;
            if meta.file_type().is_symlink() {
                links += 1;
                if links > 40 {
                    return None;
                }
                let target = fs::read_link(self.path(&next)).ok()?;
                if target.is_absolute() {
                    cur = PathBuf::from("/");
                }
                push_components(&mut todo, &target);
            } else {
                cur = next;
            }
        }
        Some(cur)
    }

    /// Last component of a symlink's target (`/sys/class/sound/card0/device` -> `0000:00:1f.3`).
    pub fn link_name(&self, abs: impl AsRef<Path>) -> Option<String> {
        let target = fs::read_link(self.path(abs)).ok()?;
        target.file_name().map(|n| n.to_string_lossy().into_owned())
    }
}

/// Pushes `p`'s components onto `todo` so that popping walks them in order (`.` dropped, `..`
/// kept as a step back).
fn push_components(todo: &mut Vec<OsString>, p: &Path) {
    let parts: Vec<OsString> = p
        .components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.to_owned()),
            Component::ParentDir => Some(OsString::from("..")),
            _ => None,
        })
        .collect();
    todo.extend(parts.into_iter().rev());
}

/// `cpu2` < `cpu10`, `card1` < `card12`.
pub fn natural_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    fn split(s: &str) -> (&str, Option<u64>) {
        let idx = s
            .char_indices()
            .rev()
            .take_while(|(_, c)| c.is_ascii_digit())
            .last()
            .map(|(i, _)| i);
        match idx {
            Some(i) => (&s[..i], s[i..].parse().ok()),
            None => (s, None),
        }
    }
    let (pa, na) = split(a);
    let (pb, nb) = split(b);
    pa.cmp(pb).then(na.cmp(&nb)).then(a.cmp(b))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn joins_under_root() {
        let r = Root::new("/tmp/x");
        assert_eq!(r.path("/etc/a"), PathBuf::from("/tmp/x/etc/a"));
        assert_eq!(r.path("etc/a"), PathBuf::from("/tmp/x/etc/a"));
        assert!(Root::system().is_system());
    }

    #[test]
    fn canonical_follows_relative_links_inside_the_root() {
        use std::os::unix::fs::symlink;
        let dir = tempfile::tempdir().unwrap();
        let r = Root::new(dir.path());
        // Like sysfs: the class entry and its `device` are both relative links.
        let dev = dir
            .path()
            .join("sys/devices/pci0000:00/0000:00:14.0/usb1/1-2/1-2:1.0");
        fs::create_dir_all(dev.join("sound/card1")).unwrap();
        fs::create_dir_all(dir.path().join("sys/class/sound")).unwrap();
        symlink(
            "../../devices/pci0000:00/0000:00:14.0/usb1/1-2/1-2:1.0/sound/card1",
            dir.path().join("sys/class/sound/card1"),
        )
        .unwrap();
        symlink("../../../1-2:1.0", dev.join("sound/card1/device")).unwrap();
        assert_eq!(
            r.canonical("/sys/class/sound/card1/device"),
            Some(PathBuf::from(
                "/sys/devices/pci0000:00/0000:00:14.0/usb1/1-2/1-2:1.0"
            ))
        );
        assert_eq!(r.canonical("/sys/class/sound/card9/device"), None);
        // An absolute target stays under the root; a loop ends.
        symlink("/sys/devices", dir.path().join("sys/abs")).unwrap();
        assert_eq!(r.canonical("/sys/abs"), Some(PathBuf::from("/sys/devices")));
        symlink("loop", dir.path().join("sys/loop")).unwrap();
        assert_eq!(r.canonical("/sys/loop"), None);
    }

    #[test]
    fn natural_order() {
        let mut v = vec!["cpu10", "cpu2", "cpu1", "cpufreq"];
        v.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(v, ["cpu1", "cpu2", "cpu10", "cpufreq"]);
    }
}
