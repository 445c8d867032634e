//! client.conf emulation: the bench's `off` client gets shared memory (and so srbchannel) turned
//! off through a client.conf of its own, which must otherwise be what the user's clients read.
//! So it is found the way libpulse finds it, with its `.d` drop-ins, and included around the
//! override.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::error::BenchError;

/// Private client.conf files for the two modes, removed on drop.
pub(crate) struct ClientConfs {
    dir: PathBuf,
    pub(crate) on: PathBuf,
    pub(crate) off: PathBuf,
}

impl ClientConfs {
    pub(crate) fn create(err: &mut dyn Write) -> Result<Self, BenchError> {
        let dir = std::env::temp_dir().join(format!("micoff-bench-{}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|source| BenchError::File {
            path: dir.clone(),
            source,
        })?;
        let (includes, skipped): (Vec<PathBuf>, Vec<PathBuf>) =
            client_conf_chain(&|k| std::env::var(k).ok())
                .into_iter()
                .partition(|p| includable(p));
        for p in skipped {
            writeln!(
                err,
                "warning: cannot .include {} from the bench's client.conf (its path has '#', ';' or is too long); its settings are left out",
                p.display()
            )?;
        }
        let on = dir.join("client-shm-on.conf");
        let off = dir.join("client-shm-off.conf");
        for (path, shm) in [(&on, true), (&off, false)] {
            std::fs::write(path, client_conf_text(&includes, shm)).map_err(|source| {
                BenchError::File {
                    path: path.clone(),
                    source,
                }
            })?;
        }
        Ok(Self { dir, on, off })
    }
}

impl Drop for ClientConfs {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The client.conf libpulse would read for this user, looked up the way libpulse does it
/// (`pa_open_config_file` in PulseAudio 16): `$PULSE_CLIENTCONFIG` (set but unreadable: no file
/// at all); else `$PULSE_CONFIG_PATH/client.conf`, or without it `~/.pulse/client.conf` then
/// `~/.config/pulse/client.conf` (libpulse does not read `$XDG_CONFIG_HOME` here); else
/// `/etc/pulse/client.conf`.
pub fn base_client_conf(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    if let Some(p) = env("PULSE_CLIENTCONFIG") {
        return Some(PathBuf::from(p)).filter(|p| p.is_file());
    }
    let local: Vec<PathBuf> = match (env("PULSE_CONFIG_PATH"), env("HOME")) {
        (Some(dir), _) => vec![Path::new(&dir).join("client.conf")],
        (None, Some(h)) => vec![
            Path::new(&h).join(".pulse/client.conf"),
            Path::new(&h).join(".config/pulse/client.conf"),
        ],
        (None, None) => vec![],
    };
    local
        .into_iter()
        .chain(std::iter::once(PathBuf::from("/etc/pulse/client.conf")))
        .find(|p| p.is_file())
}

/// The `<file>.d/*.conf` drop-ins libpulse reads after `file` (`pa_config_parse` with
/// `use_dot_d`: scandir with alphasort), in that order. Only regular files: libpulse skips a
/// dangling link (Debian ships one, `01-enable-autospawn.conf`), and an unreadable entry would
/// only stop parsing.
pub fn conf_d_files(file: &Path) -> Vec<PathBuf> {
    let mut dir = file.as_os_str().to_owned();
    dir.push(".d");
    let Ok(entries) = std::fs::read_dir(PathBuf::from(dir)) else {
        return Vec::new();
    };
    let mut v: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().ends_with(".conf"))
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .collect();
    // alphasort compares with strcoll; for the ASCII names these folders hold (NN-name.conf)
    // that is byte order in every locale that matters.
    v.sort();
    v
}

/// Everything libpulse would read for this user, in its order: the base client.conf, then its
/// `client.conf.d/` drop-ins. The bench's own client.conf includes them all, so that only shared
/// memory differs from what the user's clients get.
pub fn client_conf_chain(env: &dyn Fn(&str) -> Option<String>) -> Vec<PathBuf> {
    let Some(base) = base_client_conf(env) else {
        return Vec::new();
    };
    let mut v = vec![base.clone()];
    v.extend(conf_d_files(&base));
    v
}

/// Whether a path can go on a `.include` line: libpulse cuts a line at `#` or `;` (comments) and
/// reads lines into a 4096-byte buffer.
fn includable(p: &Path) -> bool {
    let s = p.to_string_lossy();
    !s.contains(['#', ';', '\n']) && s.len() < 4000
}

/// Our client.conf: shared memory on or off, the user's files (`.include`, in libpulse's order),
/// then shared memory again. The first setting is a guard: a file that fails to parse makes
/// libpulse stop reading the file that included it, which would drop the last lines.
pub fn client_conf_text(includes: &[PathBuf], shm: bool) -> String {
    let v = if shm { "yes" } else { "no" };
    let set = format!("enable-shm = {v}\nenable-memfd = {v}\n");
    let mut s = String::from("# written by micoff-host bench; removed when it ends\n");
    s.push_str(&set);
    for b in includes {
        s.push_str(&format!(".include {}\n", b.display()));
    }
    s.push_str(&set);
    s
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// An empty file at `path`, with its directories.
    fn touch(path: &Path) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "").unwrap();
    }

    #[test]
    fn client_conf_overrides_shm_around_the_users_files() {
        let inc = [
            PathBuf::from("/etc/pulse/client.conf"),
            PathBuf::from("/etc/pulse/client.conf.d/50-x.conf"),
        ];
        let t = client_conf_text(&inc, false);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(
            lines[1..],
            [
                "enable-shm = no",
                "enable-memfd = no",
                ".include /etc/pulse/client.conf",
                ".include /etc/pulse/client.conf.d/50-x.conf",
                "enable-shm = no",
                "enable-memfd = no",
            ]
        );
        let t = client_conf_text(&[], true);
        assert!(!t.contains(".include"));
        assert!(t.ends_with("enable-shm = yes\nenable-memfd = yes\n"));
        assert!(!includable(Path::new("/home/a#b/client.conf")));
        assert!(includable(Path::new("/home/a b/client.conf")));
    }

    #[test]
    fn base_conf_is_found_the_way_libpulse_finds_it() {
        let dir = tempfile::tempdir().unwrap();
        let own = dir.path().join("own.conf");
        std::fs::write(&own, "").unwrap();
        let own_s = own.display().to_string();
        let env = move |k: &str| (k == "PULSE_CLIENTCONFIG").then(|| own_s.clone());
        assert_eq!(base_client_conf(&env), Some(own.clone()));
        // Set but missing: libpulse reads no file at all.
        let env = |k: &str| (k == "PULSE_CLIENTCONFIG").then(|| "/nonexistent/x.conf".into());
        assert_eq!(base_client_conf(&env), None);

        // The same HOME for both looks: only the files under it change.
        let home = dir.path().display().to_string();
        let env = move |k: &str| (k == "HOME").then(|| home.clone());
        touch(&dir.path().join(".config/pulse/client.conf"));
        assert_eq!(
            base_client_conf(&env),
            Some(dir.path().join(".config/pulse/client.conf"))
        );
        // ~/.pulse/client.conf comes first.
        touch(&dir.path().join(".pulse/client.conf"));
        assert_eq!(
            base_client_conf(&env),
            Some(dir.path().join(".pulse/client.conf"))
        );
        // XDG_CONFIG_HOME is not where libpulse looks.
        let xdg = tempfile::tempdir().unwrap();
        touch(&xdg.path().join("pulse/client.conf"));
        let x = xdg.path().display().to_string();
        let env = move |k: &str| match k {
            "XDG_CONFIG_HOME" => Some(x.clone()),
            "HOME" => Some("/nonexistent".into()),
            _ => None,
        };
        assert_ne!(
            base_client_conf(&env),
            Some(xdg.path().join("pulse/client.conf"))
        );
    }

    #[test]
    fn conf_chain_adds_the_drop_ins_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().join("client.conf");
        std::fs::write(&base, "").unwrap();
        let d = dir.path().join("client.conf.d");
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("50-b.conf"), "").unwrap();
        std::fs::write(d.join("10-a.conf"), "").unwrap();
        std::fs::write(d.join("README"), "").unwrap();
        std::fs::create_dir_all(d.join("20-dir.conf")).unwrap();
        std::os::unix::fs::symlink("/nonexistent", d.join("01-dangling.conf")).unwrap();
        let b = base.display().to_string();
        let env = move |k: &str| (k == "PULSE_CLIENTCONFIG").then(|| b.clone());
        assert_eq!(
            client_conf_chain(&env),
            vec![base.clone(), d.join("10-a.conf"), d.join("50-b.conf")]
        );
    }
}
