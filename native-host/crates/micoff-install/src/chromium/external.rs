//! Chromium's external extensions as micoff uses them: where the entry and micoff's copy of the crx
//! go (per user or system-wide), the entry micoff writes and whether one found is micoff's, and what
//! on the machine keeps Chromium from taking it up (a blocking policy, a sandboxed Chromium).

use std::path::{Path, PathBuf};

use crate::env::{InstallEnv, SYSTEM_DATA_DIR};
use micoff_browsers::Browser;

/// The installed copy's file name (in micoff's data folder).
pub const CRX_NAME: &str = "micoff.crx";
/// Chromium's standalone external extensions folder (`DIR_STANDALONE_EXTERNAL_EXTENSIONS`), used
/// when no Chromium binary folder is found.
const STANDALONE_DIR: &str = "usr/share/chromium/extensions";

/// Chromium's default user data dir (`~/.config/chromium`): the folder above its
/// `NativeMessagingHosts`.
pub fn user_data_dir(env: &InstallEnv) -> PathBuf {
    let manifests = env
        .config_home()
        .join(Browser::Chromium.user_manifest_dir());
    manifests
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or(manifests)
}

/// Where the external entry and the crx copy go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Paths {
    /// `<folder>/<id>.json`.
    pub json: PathBuf,
    pub crx: PathBuf,
}

/// The per-user or system-wide places for extension `id`.
pub fn paths(env: &InstallEnv, system: bool, id: &str) -> Paths {
    let file = format!("{id}.json");
    if system {
        // Chromium's program (not its launcher): its folder + `extensions` is
        // `DIR_EXTERNAL_EXTENSIONS`.
        let folder = Browser::Chromium
            .program_paths()
            .map(|b| env.root.join(b))
            .find(|b| b.is_file())
            .and_then(|b| b.parent().map(|d| d.join("extensions")))
            .unwrap_or_else(|| env.root.join(STANDALONE_DIR));
        return Paths {
            json: folder.join(file),
            crx: copy_path(&env.data_home(), &env.root, true),
        };
    }
    Paths {
        json: user_data_dir(env).join("External Extensions").join(file),
        crx: copy_path(&env.data_home(), &env.root, false),
    }
}

/// micoff's copy of the crx (per user under `data_home`, or the system's under `root`).
pub fn copy_path(data_home: &Path, root: &Path, system: bool) -> PathBuf {
    if system {
        root.join(SYSTEM_DATA_DIR).join(CRX_NAME)
    } else {
        data_home.join("micoff").join(CRX_NAME)
    }
}

/// The id of micoff's crx copy there, when it is not micoff's release id: a crx signed with another
/// key (this machine's local key, a fork's) that `install --chromium-crx` checked and put in place.
pub fn local_id(copy: &Path) -> Option<String> {
    let bytes = micoff_files::read_regular(copy, micoff_files::MAX_FILE_BYTES).ok()??;
    let (id, _) = crate::chromium::crx::crx_id(&bytes).ok()?;
    (id != micoff_native::CHROME_EXTENSION_ID).then_some(id)
}

/// The Chromium extension ids micoff answers beside its release id: those of the crx copies
/// `install --chromium-crx` put in place, the user's (under `data_home`) and the system's (under
/// `root`). Their one home is those copies: `install` writes the host manifests' `allowed_origins`
/// from them and the host's caller check reads them (docs/security.md).
pub fn local_ids(data_home: &Path, root: &Path) -> Vec<String> {
    let mut ids: Vec<String> = [false, true]
        .into_iter()
        .filter_map(|system| local_id(&copy_path(data_home, root, system)))
        .collect();
    ids.dedup();
    ids
}

/// [`local_ids`] of this process's user (`$XDG_DATA_HOME`, else `~/.local/share`) and of the
/// machine (`/`): what micoff-host answers from Chromium beside micoff's release id. No home in
/// the environment: the system's copy only.
pub fn local_ids_here() -> Vec<String> {
    let root = Path::new("/");
    match micoff_files::user_dirs::from_env(
        &|name| std::env::var_os(name),
        u32::MAX, // only read
        "micoff-host",
    ) {
        Ok(dirs) => {
            let data_home = dirs
                .data_home
                .unwrap_or_else(|| dirs.home.join(".local/share"));
            local_ids(&data_home, root)
        }
        Err(_) => local_id(&copy_path(Path::new(""), root, true))
            .into_iter()
            .collect(),
    }
}

/// The external entry, as written (pretty JSON, trailing newline).
pub fn external_json(crx: &Path, version: &str) -> String {
    let mut text = serde_json::to_string_pretty(&serde_json::json!({
        "external_crx": crx.to_string_lossy(),
        "external_version": version,
    }))
    .unwrap_or_default();
    text.push('\n');
    text
}

/// Whether an external entry is what micoff writes for `crx`: exactly `external_crx` = `crx` and a
/// string `external_version` (any version: an older install is still ours).
pub fn is_ours(text: &[u8], crx: &Path) -> bool {
    let Ok(serde_json::Value::Object(o)) = serde_json::from_slice(text) else {
        return false;
    };
    o.len() == 2
        && o.get("external_crx").and_then(|v| v.as_str()) == Some(&*crx.to_string_lossy())
        && o.get("external_version").is_some_and(|v| v.is_string())
}

/// A managed Chromium policy file that sets `BlockExternalExtensions` to true.
pub fn blocking_policy(env: &InstallEnv) -> Option<PathBuf> {
    let dir = env.root.join("etc/chromium/policies/managed");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    files.into_iter().find(|p| {
        std::fs::read(p)
            .ok()
            .and_then(|t| serde_json::from_slice::<serde_json::Value>(&t).ok())
            .and_then(|v| v.get("BlockExternalExtensions").and_then(|b| b.as_bool()))
            == Some(true)
    })
}

/// A snap or Flatpak Chromium keeps its user data dir elsewhere (its own `External Extensions`),
/// which this install does not write: said, not guessed at.
pub fn sandboxed_note(env: &InstallEnv) -> Option<String> {
    let snap = env.snap(Browser::Chromium).is_some();
    let flatpak = env.flatpak(Browser::Chromium);
    let dir = match (snap, flatpak) {
        (true, _) => env.home.join("snap/chromium/common/chromium"),
        (false, Some(app)) => app.join("config/chromium"),
        (false, None) => return None,
    };
    Some(format!(
        "a {} Chromium reads {}/External Extensions instead, and from inside its sandbox (the crx \
         must be readable there): not written by this install, untested",
        if snap { "snap" } else { "Flatpak" },
        dir.display()
    ))
}
