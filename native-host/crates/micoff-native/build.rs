//! Derives from the sources what the host must agree on with the TS build (scripts/build.mjs): the
//! Chrome extension id (sha256 of the DER key in `manifests/chrome.json` `key`, first 32 hex digits
//! mapped 0-f -> a-p), the Firefox one (`manifests/firefox.json` gecko id), the version
//! (`package.json`), and for `--version --verbose` the commit (git, else `unknown`) and target.
//! Exported as `MICOFF_CHROME_EXTENSION_ID` / `MICOFF_FIREFOX_EXTENSION_ID` / `MICOFF_VERSION` /
//! `MICOFF_COMMIT` / `MICOFF_TARGET` for `env!()`.

use std::path::{Path, PathBuf};
use std::process::Command;

use base64::Engine as _;
use sha2::{Digest, Sha256};

fn main() {
    let manifests = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../manifests");
    let chrome = manifests.join("chrome.json");
    let firefox = manifests.join("firefox.json");
    println!("cargo:rerun-if-changed={}", chrome.display());
    println!("cargo:rerun-if-changed={}", firefox.display());
    let package = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../package.json");
    println!("cargo:rerun-if-changed={}", package.display());
    println!("cargo:rerun-if-changed=build.rs");

    let chrome_id = match chrome_id(&chrome) {
        Ok(id) => id,
        Err(e) => fail(&format!("{}: {e}", chrome.display())),
    };
    let firefox_id = match firefox_id(&firefox) {
        Ok(id) => id,
        Err(e) => fail(&format!("{}: {e}", firefox.display())),
    };
    println!("cargo:rustc-env=MICOFF_CHROME_EXTENSION_ID={chrome_id}");
    println!("cargo:rustc-env=MICOFF_FIREFOX_EXTENSION_ID={firefox_id}");
    match version(&package) {
        Ok(v) => println!("cargo:rustc-env=MICOFF_VERSION={v}"),
        Err(e) => fail(&format!("{}: {e}", package.display())),
    }
    let commit = commit(Path::new(env!("CARGO_MANIFEST_DIR")));
    println!(
        "cargo:rustc-env=MICOFF_COMMIT={}",
        commit.as_deref().unwrap_or("unknown")
    );
    let target = std::env::var("TARGET").unwrap_or_else(|_| "unknown".to_owned());
    println!("cargo:rustc-env=MICOFF_TARGET={target}");
}

/// `git <args>` in `dir`, its output trimmed; `None` when git is missing or fails.
fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    (out.status.success() && !text.trim().is_empty()).then(|| text.trim().to_owned())
}

/// The commit checked out (12 hex digits), and the build script runs again when it changes (the
/// checkout's HEAD, the branch it points to, packed refs). `None` outside a git checkout.
fn commit(dir: &Path) -> Option<String> {
    let hash = git(dir, &["rev-parse", "--short=12", "HEAD"])?;
    let abs = |p: String| {
        let p = PathBuf::from(p);
        if p.is_absolute() {
            p
        } else {
            dir.join(p)
        }
    };
    let git_dir = git(dir, &["rev-parse", "--git-dir"]).map(abs);
    let common = git(dir, &["rev-parse", "--git-common-dir"]).map(abs);
    let branch = git(dir, &["symbolic-ref", "-q", "HEAD"]);
    let watched = [
        git_dir.as_ref().map(|d| d.join("HEAD")),
        common.as_ref().zip(branch.as_ref()).map(|(c, b)| c.join(b)),
        common.as_ref().map(|c| c.join("packed-refs")),
    ];
    // Only files that exist: cargo reruns a script on every build for a missing one.
    for file in watched.into_iter().flatten().filter(|f| f.is_file()) {
        println!("cargo:rerun-if-changed={}", file.display());
    }
    Some(hash)
}

/// `package.json` `version`: dotted numbers only (what Chrome's manifest `version` accepts:
/// one to four parts, each 0-65535), so the host and both manifests carry the same string.
fn version(path: &Path) -> Result<String, String> {
    let json = read_json(path)?;
    let v = json
        .get("version")
        .and_then(|v| v.as_str())
        .ok_or("no string `version`")?;
    let parts: Vec<&str> = v.split('.').collect();
    let valid = (1..=4).contains(&parts.len())
        && parts.iter().all(|p| {
            !p.is_empty()
                && p.bytes().all(|b| b.is_ascii_digit())
                && (p.len() == 1 || !p.starts_with('0'))
                && p.parse::<u32>().is_ok_and(|n| n <= 65535)
        });
    if !valid {
        return Err(format!(
            "`version` {v:?} is not 1-4 dot-separated numbers 0-65535 (what browser manifests accept)"
        ));
    }
    Ok(v.to_owned())
}

fn fail(message: &str) -> ! {
    // A build script reports errors through stderr and a non-zero exit.
    eprintln!("micoff-host build.rs: {message}");
    std::process::exit(1);
}

fn read_json(path: &Path) -> Result<serde_json::Value, String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    serde_json::from_str(&text).map_err(|e| e.to_string())
}

fn chrome_id(path: &Path) -> Result<String, String> {
    let json = read_json(path)?;
    let key = json
        .get("key")
        .and_then(|k| k.as_str())
        .ok_or("no string `key`")?;
    let der = base64::engine::general_purpose::STANDARD
        .decode(key.trim())
        .map_err(|e| format!("`key` is not base64: {e}"))?;
    let digest = Sha256::digest(&der);
    let id: String = digest
        .iter()
        .take(16)
        .flat_map(|byte| [byte >> 4, byte & 0x0f])
        .map(|nibble| char::from(b'a' + nibble))
        .collect();
    Ok(id)
}

fn firefox_id(path: &Path) -> Result<String, String> {
    let json = read_json(path)?;
    json.pointer("/browser_specific_settings/gecko/id")
        .and_then(|id| id.as_str())
        .map(str::to_owned)
        .ok_or_else(|| "no string `browser_specific_settings.gecko.id`".to_owned())
}
