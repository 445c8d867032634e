//! What micoff-host's own Debian package owns (scripts/host-package/deb.mjs): its system-wide
//! manifests (links under `/etc/chromium/` and `/etc/opt/chrome/native-messaging-hosts/` to its
//! copies in `/usr/share/micoff-host/`, a file in `/usr/lib/mozilla/native-messaging-hosts/`).
//! `install --system` and `uninstall --system` never write over or remove them: dpkg does. Owned
//! means: a link into the package's folder, or a path in `/var/lib/dpkg/info/micoff-host.list`.

use std::path::{Path, PathBuf};

use micoff_files::{read_regular_text, MAX_TEXT_BYTES};

/// The Debian package's name (scripts/host-package/deb.mjs `DEB_PACKAGE`).
pub const PACKAGE: &str = "micoff-host";
/// The package's own copies of the manifests, relative to the root.
pub const PACKAGE_DATA_DIR: &str = "usr/share/micoff-host";
/// dpkg's lists of each package's files, relative to the root.
const DPKG_INFO: &str = "var/lib/dpkg/info";

/// `Some(why)` when the file at `path` (under `root`) is micoff-host's package's.
pub fn owned_by_package(root: &Path, path: &Path) -> Option<String> {
    if let Ok(target) = std::fs::read_link(path) {
        let target = if target.is_absolute() {
            target
        } else {
            path.parent().unwrap_or(Path::new("/")).join(target)
        };
        let data = Path::new("/").join(PACKAGE_DATA_DIR);
        if target.starts_with(&data) || target.starts_with(root.join(PACKAGE_DATA_DIR)) {
            return Some(format!(
                "a link into {} (the {PACKAGE} package's)",
                data.display()
            ));
        }
    }
    let listed = Path::new("/").join(path.strip_prefix(root).ok()?);
    for list in [format!("{PACKAGE}.list"), format!("{PACKAGE}:amd64.list")] {
        let file: PathBuf = root.join(DPKG_INFO).join(list);
        let Ok(Some(text)) = read_regular_text(&file, MAX_TEXT_BYTES) else {
            continue;
        };
        if text.lines().any(|l| Path::new(l) == listed) {
            return Some(format!("installed by the {PACKAGE} package (dpkg)"));
        }
    }
    None
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_link_into_the_package_or_a_file_dpkg_lists_is_the_packages() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        let etc = root.join("etc/chromium/native-messaging-hosts");
        std::fs::create_dir_all(&etc).unwrap();
        let link = etc.join("org.micoff.host.json");
        std::os::unix::fs::symlink(
            "/usr/share/micoff-host/native-messaging-hosts/chromium/org.micoff.host.json",
            &link,
        )
        .unwrap();
        assert!(owned_by_package(root, &link)
            .unwrap()
            .contains("a link into"));
        let ff = root.join("usr/lib/mozilla/native-messaging-hosts/org.micoff.host.json");
        std::fs::create_dir_all(ff.parent().unwrap()).unwrap();
        std::fs::write(&ff, "{}").unwrap();
        assert_eq!(owned_by_package(root, &ff), None);
        std::fs::create_dir_all(root.join(DPKG_INFO)).unwrap();
        std::fs::write(
            root.join(DPKG_INFO).join("micoff-host.list"),
            "/.\n/usr\n/usr/lib/mozilla/native-messaging-hosts/org.micoff.host.json\n",
        )
        .unwrap();
        assert!(owned_by_package(root, &ff).unwrap().contains("dpkg"));
    }
}
