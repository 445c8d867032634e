//! Which folders are Firefox profiles micoff may change: those a user's `profiles.ini` files list
//! (in each of [`InstallEnv::firefox_profile_roots`]: where Firefox keeps them, docs/design/firefox-install.md#where-
//! firefox-keeps-profiles-and-manifests), and folders named with `--firefox-profile`. Contained: a
//! relative `Path=` must stay inside the folder of its `profiles.ini` (`Path=../../../x` is
//! refused), and any profile must be a folder of the user running micoff that looks like a Firefox
//! profile (or is still empty: a new one), so neither a forged `profiles.ini` nor a mistyped
//! `--firefox-profile ~` has micoff write a `user.js` and an `extensions/` folder somewhere else.

use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};

use micoff_files::{read_regular_text, shown, MAX_TEXT_BYTES};

use crate::env::InstallEnv;

/// The `profiles.ini` of each of [`InstallEnv::firefox_profile_roots`] (`~/` for the home): what the installer says
/// it looked in.
pub fn profiles_ini_shown(env: &InstallEnv) -> String {
    env.firefox_profile_roots()
        .iter()
        .map(|r| {
            let ini = r.join("profiles.ini");
            match ini.strip_prefix(&env.home) {
                Ok(rel) => format!("~/{}", shown(rel)),
                Err(_) => shown(&ini),
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Files only a Firefox profile has (one is enough).
const PROFILE_FILES: [&str; 4] = ["prefs.js", "user.js", "times.json", "compatibility.ini"];

/// The profiles the user's `profiles.ini` files list (existing folders), and a note for each entry
/// refused (out of its folder, not a profile).
pub fn profiles(env: &InstallEnv) -> (Vec<PathBuf>, Vec<String>) {
    let mut found = Vec::new();
    let mut notes = Vec::new();
    for base in env.firefox_profile_roots() {
        let ini = base.join("profiles.ini");
        let text = match read_regular_text(&ini, MAX_TEXT_BYTES) {
            Ok(Some(t)) => t,
            Ok(None) => continue,
            Err(e) => {
                notes.push(format!("{e}: its profiles are not changed"));
                continue;
            }
        };
        for (relative, path) in listed(&text) {
            match contained(&base, relative, &path) {
                Ok(Some(dir)) => {
                    if !found.contains(&dir) {
                        found.push(dir);
                    }
                }
                Ok(None) => {}
                Err(why) => notes.push(format!("{} lists {why}: left alone", shown(&ini))),
            }
        }
    }
    (found, notes)
}

/// `(relative, Path=)` of each profile section of a `profiles.ini`.
fn listed(ini: &str) -> Vec<(bool, String)> {
    let mut out = Vec::new();
    let mut relative = true;
    let mut path: Option<String> = None;
    for line in ini.lines().map(str::trim) {
        if line.starts_with('[') {
            out.extend(path.take().map(|p| (relative, p)));
            relative = true;
        } else if let Some(v) = line.strip_prefix("IsRelative=") {
            relative = v != "0";
        } else if let Some(v) = line.strip_prefix("Path=") {
            path = Some(v.to_owned());
        }
    }
    out.extend(path.map(|p| (relative, p)));
    out
}

/// The profile folder a `Path=` names, when it is one micoff may change: `Ok(None)` when there is
/// no such folder (a profile since deleted), `Err` with what it names when it is refused.
fn contained(base: &Path, relative: bool, path: &str) -> Result<Option<PathBuf>, String> {
    let named = Path::new(path);
    let dir = if relative {
        let escapes = named.is_absolute()
            || named
                .components()
                .any(|c| matches!(c, Component::ParentDir | Component::RootDir));
        if escapes {
            return Err(format!(
                "a profile outside its folder ({})",
                shown(&base.join(named))
            ));
        }
        base.join(named)
    } else {
        named.to_path_buf()
    };
    if !dir.is_dir() {
        return Ok(None);
    }
    if relative {
        // Through links, still inside.
        let (Ok(real), Ok(real_base)) = (dir.canonicalize(), base.canonicalize()) else {
            return Ok(None);
        };
        if !real.starts_with(&real_base) {
            return Err(format!(
                "a profile that leads outside its folder ({} is {})",
                shown(&dir),
                shown(&real)
            ));
        }
    }
    check_profile(&dir)
        .map(|()| Some(dir.clone()))
        .map_err(|why| format!("{}: {why}", shown(&dir)))
}

/// `Ok` when `dir` may be changed as a Firefox profile: a folder of the user running micoff with
/// one of a profile's own files in it, or empty (a new profile); else why not.
pub fn check_profile(dir: &Path) -> Result<(), String> {
    let meta = std::fs::metadata(dir).map_err(|e| format!("not a folder ({e})"))?;
    if !meta.is_dir() {
        return Err("not a folder".to_owned());
    }
    // SAFETY: geteuid has no preconditions and cannot fail.
    let euid = unsafe { libc::geteuid() };
    if meta.uid() != euid {
        return Err(format!(
            "a folder of uid {}, not yours (uid {euid}): run this as its user",
            meta.uid()
        ));
    }
    let empty = std::fs::read_dir(dir).is_ok_and(|mut d| d.next().is_none());
    if empty || PROFILE_FILES.iter().any(|f| dir.join(f).is_file()) {
        return Ok(());
    }
    Err(format!(
        "not a Firefox profile (none of {} in it, and not empty)",
        PROFILE_FILES.join(", ")
    ))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// The installer's view of a user whose home is `home` (`$XDG_CONFIG_HOME` unset).
    fn user(home: &Path) -> InstallEnv {
        InstallEnv {
            home: home.to_path_buf(),
            config_home: None,
            root: home.join("root"),
            path_dirs: vec![],
            flatpak_apps: vec![],
            data_home: None,
            state_home: None,
        }
    }

    /// A profile folder Firefox made (`times.json` in it) at `root/name`, listed in `root`'s
    /// `profiles.ini`.
    fn made(root: &Path, name: &str) -> PathBuf {
        let dir = root.join(name);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("times.json"), "{}").unwrap();
        let ini = root.join("profiles.ini");
        let before = std::fs::read_to_string(&ini).unwrap_or_default();
        let n = before.matches("[Profile").count();
        std::fs::write(
            ini,
            format!("{before}[Profile{n}]\nName={name}\nIsRelative=1\nPath={name}\n\n"),
        )
        .unwrap();
        dir
    }

    #[test]
    fn a_new_users_profile_under_the_config_home_is_found() {
        // Firefox 147+ on a fresh home: ~/.config/mozilla/firefox, no ~/.mozilla/firefox.
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path();
        let p = made(&home.join(".config/mozilla/firefox"), "x.default-esr");
        let (found, notes) = profiles(&user(home));
        assert_eq!(found, vec![p]);
        assert!(notes.is_empty(), "{notes:?}");
    }

    #[test]
    fn a_legacy_profile_is_found() {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path();
        let p = made(&home.join(".mozilla/firefox"), "y.default-esr");
        assert_eq!(profiles(&user(home)).0, vec![p]);
    }

    #[test]
    fn with_both_roots_the_legacy_ones_come_first_and_all_count() {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path();
        let xdg = made(&home.join(".config/mozilla/firefox"), "x.default-esr");
        let legacy = made(&home.join(".mozilla/firefox"), "y.default-esr");
        assert_eq!(profiles(&user(home)).0, vec![legacy, xdg]);
    }

    #[test]
    fn xdg_config_home_moves_the_xdg_root() {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path();
        // Under ~/.config, but XDG_CONFIG_HOME says elsewhere: Firefox does not look there.
        made(&home.join(".config/mozilla/firefox"), "stale.default");
        let p = made(&home.join("cfg/mozilla/firefox"), "x.default-esr");
        let env = InstallEnv {
            config_home: Some(home.join("cfg")),
            ..user(home)
        };
        assert_eq!(profiles(&env).0, vec![p]);
        assert_eq!(
            env.firefox_profile_roots()[1],
            home.join("cfg/mozilla/firefox")
        );
    }

    #[test]
    fn no_profiles_ini_anywhere_finds_none() {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path();
        // Folders alone (the installer's own manifest folder, an empty root) are not profiles.
        std::fs::create_dir_all(home.join(".mozilla/native-messaging-hosts")).unwrap();
        std::fs::create_dir_all(home.join(".config/mozilla/firefox")).unwrap();
        let (found, notes) = profiles(&user(home));
        assert!(found.is_empty() && notes.is_empty(), "{found:?} {notes:?}");
    }

    fn ini(home: &Path, base: &str, sections: &[(&str, &str)]) {
        let dir = home.join(base);
        std::fs::create_dir_all(&dir).unwrap();
        let text: String = sections
            .iter()
            .enumerate()
            .map(|(i, (rel, path))| format!("[Profile{i}]\nIsRelative={rel}\nPath={path}\n\n"))
            .collect();
        std::fs::write(dir.join("profiles.ini"), text).unwrap();
    }

    #[test]
    fn a_relative_path_out_of_its_folder_is_refused() {
        // Before: Path=../../../x was joined as it came, and micoff wrote user.js there.
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path();
        std::fs::create_dir_all(home.join("x")).unwrap();
        std::fs::write(home.join("x/prefs.js"), "").unwrap();
        std::fs::create_dir_all(home.join(".mozilla/firefox/good")).unwrap();
        ini(home, ".mozilla/firefox", &[("1", "../../x"), ("1", "good")]);
        let (found, notes) = profiles(&user(home));
        assert_eq!(found, vec![home.join(".mozilla/firefox/good")]);
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(
            notes[0].contains("a profile outside its folder"),
            "{notes:?}"
        );
        // A link inside the folder that leads out of it.
        std::os::unix::fs::symlink(home.join("x"), home.join(".mozilla/firefox/out")).unwrap();
        ini(home, ".mozilla/firefox", &[("1", "out")]);
        let (found, notes) = profiles(&user(home));
        assert!(found.is_empty());
        assert!(notes[0].contains("leads outside its folder"), "{notes:?}");
    }

    #[test]
    fn an_absolute_path_must_be_a_profile_and_the_snaps_list_counts() {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path();
        let elsewhere = home.join("data/ff");
        std::fs::create_dir_all(&elsewhere).unwrap();
        std::fs::write(elsewhere.join("times.json"), "{}").unwrap();
        let not_a_profile = home.join("etc");
        std::fs::create_dir_all(&not_a_profile).unwrap();
        std::fs::write(not_a_profile.join("passwd"), "").unwrap();
        ini(
            home,
            ".mozilla/firefox",
            &[
                ("0", elsewhere.to_str().unwrap()),
                ("0", not_a_profile.to_str().unwrap()),
            ],
        );
        std::fs::create_dir_all(home.join("snap/firefox/common/.mozilla/firefox/s.default"))
            .unwrap();
        ini(
            home,
            "snap/firefox/common/.mozilla/firefox",
            &[("1", "s.default")],
        );
        let (found, notes) = profiles(&user(home));
        assert_eq!(
            found,
            vec![
                elsewhere.clone(),
                home.join("snap/firefox/common/.mozilla/firefox/s.default")
            ]
        );
        assert!(notes[0].contains("not a Firefox profile"), "{notes:?}");
    }

    #[test]
    fn any_existing_folder_is_not_a_profile() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join(".bashrc"), "").unwrap();
        let e = check_profile(tmp.path()).unwrap_err();
        assert!(e.contains("not a Firefox profile"), "{e}");
        let fresh = tmp.path().join("new");
        std::fs::create_dir(&fresh).unwrap();
        check_profile(&fresh).unwrap();
        std::fs::write(fresh.join("user.js"), "").unwrap();
        check_profile(&fresh).unwrap();
        assert!(check_profile(&tmp.path().join("none")).is_err());
    }
}
