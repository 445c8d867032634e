//! `micoff-host install --chromium-crx <CRX>`: installs micoff into Chromium from the packed,
//! signed crx through the external extensions Chromium reads on Linux
//! (docs/design/packaging.md, "Chromium without --load-extension"):
//!
//! - per user (default): `<user data dir>/External Extensions/<id>.json`, the user data dir being
//!   `~/.config/chromium` (`$XDG_CONFIG_HOME/chromium`). Chromium-branded builds read that folder
//!   (`chrome::DIR_USER_EXTERNAL_EXTENSIONS`); Google Chrome has no such folder. The crx is copied
//!   to `<data home>/micoff/micoff.crx` (`~/.local/share/micoff`).
//! - system-wide (`--system`): `<Chromium's binary folder>/extensions/<id>.json`
//!   (`chrome::DIR_EXTERNAL_EXTENSIONS`, `/usr/lib/chromium/extensions` on Debian), the crx at
//!   `/usr/local/share/micoff/micoff.crx`. Not `/usr/share/chromium/extensions`: Chromium reads it
//!   too, but Debian's `/usr/bin/chromium` passes every entry there to `--load-extension`, and a
//!   json file there is an error at every start.
//!
//! Chromium installs the crx at its next start, enabled and without a prompt on Linux (the prompt
//! for external extensions is Windows/macOS only), and uninstalls it at the first start after the
//! json is gone. Only a crx with micoff's id (the key of `manifests/chrome.json`, the id this host
//! answers) is installed. Writes go through `micoff-files`; `--uninstall` removes the json only
//! while it is exactly what micoff writes and the crx only while it carries micoff's id.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::install::InstallEnv;
use crate::CHROME_EXTENSION_ID;
use micoff_exit::{EXIT_ERROR, EXIT_OK, EXIT_PARTIAL, EXIT_USAGE};

/// The installed copy's file name (in micoff's data folder).
pub const CRX_NAME: &str = "micoff.crx";
/// Chromium's binary (its folder + `extensions` is `DIR_EXTERNAL_EXTENSIONS`), relative to the root.
const CHROMIUM_BINARIES: [&str; 3] = [
    "usr/lib/chromium/chromium",
    "usr/lib/chromium-browser/chromium-browser",
    "usr/lib64/chromium-browser/chromium-browser",
];
/// Chromium's standalone external extensions folder (`DIR_STANDALONE_EXTERNAL_EXTENSIONS`), used
/// when no Chromium binary folder is found.
const STANDALONE_DIR: &str = "usr/share/chromium/extensions";

/// What a crx says about itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CrxInfo {
    /// The extension id (from the signed `crx_id`, checked against a key in the header).
    pub id: String,
    /// `manifest.json` `version`.
    pub version: String,
}

/// Chrome's id form of hex digits: `0-f` -> `a-p`.
fn id_from_hex(hex: &str) -> String {
    hex.chars()
        .filter_map(|c| c.to_digit(16))
        .filter_map(|d| char::from_u32(u32::from(b'a') + d))
        .collect()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// One protobuf field: (number, bytes) for length-delimited fields; varints are skipped.
fn proto_fields(mut buf: &[u8]) -> Result<Vec<(u64, &[u8])>, String> {
    fn varint(buf: &mut &[u8]) -> Result<u64, String> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let (&b, rest) = buf.split_first().ok_or("truncated varint")?;
            *buf = rest;
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err("varint too long".into())
    }
    let mut out = Vec::new();
    while !buf.is_empty() {
        let key = varint(&mut buf)?;
        match key & 7 {
            0 => {
                varint(&mut buf)?;
            }
            2 => {
                let len = usize::try_from(varint(&mut buf)?).map_err(|e| e.to_string())?;
                if len > buf.len() {
                    return Err("truncated field".into());
                }
                let (field, rest) = buf.split_at(len);
                out.push((key >> 3, field));
                buf = rest;
            }
            w => return Err(format!("unexpected wire type {w}")),
        }
    }
    Ok(out)
}

fn le32(b: &[u8], at: usize) -> Result<usize, String> {
    b.get(at..at + 4)
        .map(|s| u32::from_le_bytes([s[0], s[1], s[2], s[3]]) as usize)
        .ok_or_else(|| "truncated".to_owned())
}

/// Reads a CRX3's id and version. The id is the header's signed `crx_id`, which must be the hash
/// of one of the header's RSA keys (Chromium checks the signatures themselves when installing).
pub fn inspect(bytes: &[u8]) -> Result<CrxInfo, String> {
    if !bytes.starts_with(b"Cr24") {
        return Err("not a crx (no Cr24 magic)".into());
    }
    if le32(bytes, 4)? != 3 {
        return Err(format!("CRX version {}, not 3", le32(bytes, 4)?));
    }
    let header_len = le32(bytes, 8)?;
    let header = bytes
        .get(12..12 + header_len)
        .ok_or("truncated crx header")?;
    let zip = &bytes[12 + header_len..];
    let fields = proto_fields(header)?;
    let signed = fields
        .iter()
        .find(|(n, _)| *n == 10_000)
        .ok_or("no signed header data")?
        .1;
    let crx_id = proto_fields(signed)?
        .into_iter()
        .find(|(n, _)| *n == 1)
        .map(|(_, b)| b)
        .filter(|b| b.len() == 16)
        .ok_or("no 16-byte crx_id")?;
    let want = hex(crx_id);
    let mut key_matches = false;
    for (_, proof) in fields.iter().filter(|(n, _)| *n == 2) {
        for (n, key) in proto_fields(proof)? {
            if n == 1 && micoff_files::sha256_hex(key).get(..32) == Some(want.as_str()) {
                key_matches = true;
            }
        }
    }
    if !key_matches {
        return Err("no RSA key in the crx header has its id".into());
    }
    let manifest =
        crate::install::zip::entry(zip, "manifest.json", crate::install::zip::MAX_MANIFEST)?
            .ok_or("no manifest.json in the crx")?;
    let manifest: serde_json::Value =
        serde_json::from_slice(&manifest).map_err(|e| format!("manifest.json is not JSON: {e}"))?;
    let version = manifest
        .get("version")
        .and_then(|v| v.as_str())
        .ok_or("manifest.json has no `version`")?
        .to_owned();
    Ok(CrxInfo {
        id: id_from_hex(&want),
        version,
    })
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
        let folder = CHROMIUM_BINARIES
            .iter()
            .map(|b| env.root.join(b))
            .find(|b| b.is_file())
            .and_then(|b| b.parent().map(|d| d.join("extensions")))
            .unwrap_or_else(|| env.root.join(STANDALONE_DIR));
        return Paths {
            json: folder.join(file),
            crx: env
                .root
                .join(crate::install::SYSTEM_DATA_DIR)
                .join(CRX_NAME),
        };
    }
    Paths {
        json: env
            .chromium_user_data_dir()
            .join("External Extensions")
            .join(file),
        crx: env.data_home().join("micoff").join(CRX_NAME),
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

/// What to do.
pub struct Request<'a> {
    /// The crx to install (install only).
    pub crx: Option<&'a Path>,
    /// Install a crx signed with another key than micoff's release key (its own id).
    pub allow_other_key: bool,
    pub system: bool,
    pub uninstall: bool,
    pub dry_run: bool,
}

/// Applies the request, one line per file. Returns the exit code.
pub fn run(req: &Request<'_>, env: &InstallEnv, out: &mut dyn Write) -> i32 {
    if req.uninstall {
        return uninstall(req, env, out);
    }
    let Some(source) = req.crx else {
        let _ = writeln!(
            out,
            "error: --chromium-crx needs the crx to install (npm run package with the release key \
             writes dist/micoff-<version>.crx)"
        );
        return EXIT_USAGE;
    };
    let bytes = match std::fs::read(source) {
        Ok(b) => b,
        Err(e) => {
            let _ = writeln!(out, "error: --chromium-crx {}: {e}", source.display());
            return EXIT_USAGE;
        }
    };
    let info = match inspect(&bytes) {
        Ok(i) => i,
        Err(e) => {
            let _ = writeln!(out, "error: --chromium-crx {}: {e}", source.display());
            return EXIT_USAGE;
        }
    };
    if info.id != CHROME_EXTENSION_ID {
        let why = format!(
            "{}: extension id {}, but this micoff-host answers only {} (the key in \
             manifests/chrome.json it was built from): the crx was signed with another key than \
             micoff's release key, so Chromium installs it as another extension, which this host \
             refuses",
            source.display(),
            info.id,
            CHROME_EXTENSION_ID
        );
        if !req.allow_other_key {
            let _ = writeln!(
                out,
                "error: --chromium-crx {why}. Use the crx `npm run package` signs with the release \
                 key (or --allow-other-key for a fork's own key, with a host built from it)."
            );
            return EXIT_USAGE;
        }
        let _ = writeln!(out, "warning: --allow-other-key: {why}");
    }
    let places = paths(env, req.system, &info.id);
    let would = if req.dry_run { "would be " } else { "" };
    let write = |path: &Path, content: &[u8]| -> Result<String, String> {
        let existing = std::fs::read(path).ok();
        if existing.as_deref() == Some(content) {
            return Ok("unchanged".into());
        }
        if !req.dry_run {
            micoff_files::write_atomic(path, content, 0o644).map_err(|e| e.to_string())?;
        }
        Ok(format!(
            "{would}{}",
            if existing.is_some() {
                "updated"
            } else {
                "written"
            }
        ))
    };
    let crx_result = write(&places.crx, &bytes);
    let _ = match &crx_result {
        Ok(what) => writeln!(
            out,
            "Chromium extension: {} {what} (micoff {}, id {})",
            places.crx.display(),
            info.version,
            info.id
        ),
        Err(e) => writeln!(
            out,
            "Chromium extension: {} FAILED: {e}",
            places.crx.display()
        ),
    };
    if crx_result.is_err() {
        return EXIT_ERROR;
    }
    let json = external_json(&places.crx, &info.version);
    let json_result = match std::fs::read(&places.json) {
        Ok(old) if old != json.as_bytes() && !is_ours(&old, &places.crx) => Err(
            "left alone: an entry for micoff's id that micoff did not write (remove it yourself \
             to install this way)"
                .to_owned(),
        ),
        _ => write(&places.json, json.as_bytes()),
    };
    let _ = match &json_result {
        Ok(what) => writeln!(out, "Chromium extension: {} {what}", places.json.display()),
        Err(e) => writeln!(out, "Chromium extension: {} {e}", places.json.display()),
    };
    if json_result.is_err() {
        return EXIT_PARTIAL;
    }
    let whose = if req.system {
        "for every user (Chromium's external extensions folder; system-wide needs root)".to_owned()
    } else {
        format!(
            "in every profile of {} (a Chromium started with --user-data-dir=DIR reads \
             DIR/External Extensions instead; --system installs it for every user)",
            env.chromium_user_data_dir().display()
        )
    };
    let _ = writeln!(
        out,
        "Chromium: micoff {} (id {}) {} at Chromium's next start, enabled, no prompt, {whose}; \
         not for Google Chrome, which installs from the Chrome Web Store only",
        info.version,
        info.id,
        if req.dry_run {
            "would be installed"
        } else {
            "is installed"
        }
    );
    if !req.system {
        if let Some(note) = sandboxed_note(env) {
            let _ = writeln!(out, "note: {note}");
        }
    }
    if let Some(policy) = blocking_policy(env) {
        let _ = writeln!(
            out,
            "warning: {} sets BlockExternalExtensions: Chromium ignores this install while it does",
            policy.display()
        );
    }
    EXIT_OK
}

/// Removes micoff's entry (micoff's id, and the id of micoff's crx copy when that differs: an
/// --allow-other-key install) and the crx copy.
fn uninstall(req: &Request<'_>, env: &InstallEnv, out: &mut dyn Write) -> i32 {
    let mut ids = vec![CHROME_EXTENSION_ID.to_owned()];
    let copy = paths(env, req.system, CHROME_EXTENSION_ID).crx;
    if let Some(info) = std::fs::read(&copy).ok().and_then(|b| inspect(&b).ok()) {
        if !ids.contains(&info.id) {
            ids.push(info.id);
        }
    }
    let would = if req.dry_run { "would be " } else { "" };
    let remove = |path: &Path| -> Result<String, String> {
        if !req.dry_run {
            micoff_files::remove(path).map_err(|e| e.to_string())?;
        }
        Ok(format!("{would}removed"))
    };
    let mut lines: Vec<(PathBuf, Result<String, String>)> = Vec::new();
    for id in &ids {
        let places = paths(env, req.system, id);
        if let Ok(text) = std::fs::read(&places.json) {
            let r = if is_ours(&text, &places.crx) {
                remove(&places.json)
            } else {
                Ok("left alone: not what micoff writes".to_owned())
            };
            lines.push((places.json.clone(), r));
        }
    }
    if let Ok(bytes) = std::fs::read(&copy) {
        // micoff's own folder; a file there that is not a crx is left alone all the same.
        let r = match inspect(&bytes) {
            Ok(_) => remove(&copy),
            Err(e) => Ok(format!("left alone: {e}")),
        };
        lines.push((copy.clone(), r));
    }
    if lines.is_empty() {
        let _ = writeln!(out, "Chromium extension: nothing of micoff's found");
        return EXIT_OK;
    }
    let mut failed = 0;
    for (path, r) in &lines {
        let _ = match r {
            Ok(what) => writeln!(out, "Chromium extension: {} {what}", path.display()),
            Err(e) => {
                failed += 1;
                writeln!(out, "Chromium extension: {} FAILED: {e}", path.display())
            }
        };
    }
    if failed == 0 && !req.dry_run {
        let _ = writeln!(
            out,
            "Chromium: removes micoff at its next start (its external entry is gone)"
        );
    }
    match failed {
        0 => EXIT_OK,
        n if n == lines.len() => EXIT_ERROR,
        _ => EXIT_PARTIAL,
    }
}

/// A managed Chromium policy file that sets `BlockExternalExtensions` to true.
fn blocking_policy(env: &InstallEnv) -> Option<PathBuf> {
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
fn sandboxed_note(env: &InstallEnv) -> Option<String> {
    let snap = std::fs::symlink_metadata(env.root.join("snap/bin/chromium")).is_ok();
    let flatpak = env.flatpak(crate::install::Browser::Chromium);
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
