//! Derives the extension ids this host is built for from the extension manifests, so the host and
//! the TS build (scripts/build.mjs) can never disagree:
//! - Chrome: sha256 of the DER public key in `manifests/chrome.json` `key`, first 32 hex digits
//!   mapped 0-f -> a-p.
//! - Firefox: `manifests/firefox.json` `browser_specific_settings.gecko.id`.
//!
//! Exported as `MICOFF_CHROME_EXTENSION_ID` / `MICOFF_FIREFOX_EXTENSION_ID` for `env!()`.

use std::path::Path;

use base64::Engine as _;
use sha2::{Digest, Sha256};

fn main() {
    let manifests = Path::new(env!("CARGO_MANIFEST_DIR")).join("../manifests");
    let chrome = manifests.join("chrome.json");
    let firefox = manifests.join("firefox.json");
    println!("cargo:rerun-if-changed={}", chrome.display());
    println!("cargo:rerun-if-changed={}", firefox.display());
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
