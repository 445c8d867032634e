//! Shared by the integration tests: a zip writer (the crx and xpi fixtures, a Firefox `omni.ja`), and
//! the installer's arguments as the command line leaves them by default.

#![allow(dead_code)] // each test binary uses its part

use std::io::Write as _;
use std::path::PathBuf;

use micoff_install::InstallArgs;

/// The micoff-host binary these tests are built with: a real host for `--host-path`, which the
/// installer checks.
pub const HOST: &str = env!("CARGO_BIN_EXE_micoff-host");

/// `micoff-host install` with no option, the host this package built: tests change what they
/// exercise.
pub fn install_args() -> InstallArgs {
    InstallArgs {
        browsers: vec![],
        all_detected: false,
        system: false,
        target_dir: None,
        uninstall: false,
        dry_run: false,
        host_path: Some(PathBuf::from(HOST)),
        packaged_host_path: None,
        firefox_release: false,
        release_delay_ms: 3000,
        firefox_profiles: vec![],
        firefox_xpi: None,
        chromium_crx: None,
        allow_other_key: false,
    }
}

/// A zip of `files`, each deflated or stored.
pub fn zip(files: &[(&str, &[u8])], deflate: bool) -> Vec<u8> {
    let mut out = Vec::new();
    let mut central = Vec::new();
    for (name, data) in files {
        let body = if deflate {
            let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::best());
            e.write_all(data).unwrap();
            e.finish().unwrap()
        } else {
            data.to_vec()
        };
        let offset = out.len() as u32;
        let method: u16 = if deflate { 8 } else { 0 };
        out.extend_from_slice(&0x0403_4b50u32.to_le_bytes());
        out.extend_from_slice(&[20, 0, 0, 0]);
        out.extend_from_slice(&method.to_le_bytes());
        out.extend_from_slice(&[0; 8]); // time, date, crc (not checked)
        out.extend_from_slice(&(body.len() as u32).to_le_bytes());
        out.extend_from_slice(&(data.len() as u32).to_le_bytes());
        out.extend_from_slice(&(name.len() as u16).to_le_bytes());
        out.extend_from_slice(&[0, 0]);
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(&body);
        central.extend_from_slice(&0x0201_4b50u32.to_le_bytes());
        central.extend_from_slice(&[20, 3, 20, 0, 0, 0]);
        central.extend_from_slice(&method.to_le_bytes());
        central.extend_from_slice(&[0; 8]);
        central.extend_from_slice(&(body.len() as u32).to_le_bytes());
        central.extend_from_slice(&(data.len() as u32).to_le_bytes());
        central.extend_from_slice(&(name.len() as u16).to_le_bytes());
        central.extend_from_slice(&[0; 12]);
        central.extend_from_slice(&offset.to_le_bytes());
        central.extend_from_slice(name.as_bytes());
    }
    let cd_offset = out.len() as u32;
    out.extend_from_slice(&central);
    out.extend_from_slice(&0x0605_4b50u32.to_le_bytes());
    out.extend_from_slice(&[0, 0, 0, 0]);
    out.extend_from_slice(&(files.len() as u16).to_le_bytes());
    out.extend_from_slice(&(files.len() as u16).to_le_bytes());
    out.extend_from_slice(&(central.len() as u32).to_le_bytes());
    out.extend_from_slice(&cd_offset.to_le_bytes());
    out.extend_from_slice(&[0, 0]);
    out
}

/// CRX3 files for the installer tests.
pub mod crx {

    fn varint(mut n: usize, out: &mut Vec<u8>) {
        while n >= 0x80 {
            out.push((n as u8 & 0x7f) | 0x80);
            n >>= 7;
        }
        out.push(n as u8);
    }

    fn field(number: usize, bytes: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        varint(number * 8 + 2, &mut out);
        varint(bytes.len(), &mut out);
        out.extend_from_slice(bytes);
        out
    }

    fn base64(text: &str) -> Vec<u8> {
        let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let mut bits = 0u32;
        let mut n = 0;
        let mut out = Vec::new();
        for c in text.bytes().filter(|c| *c != b'=') {
            let v = alphabet.iter().position(|a| *a == c).unwrap() as u32;
            bits = (bits << 6) | v;
            n += 6;
            if n >= 8 {
                n -= 8;
                out.push((bits >> n) as u8);
            }
        }
        out
    }

    /// The public key in manifests/chrome.json: a crx carrying it has micoff's id.
    pub fn micoff_public_key() -> Vec<u8> {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../manifests/chrome.json");
        let manifest: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        base64(manifest["key"].as_str().unwrap())
    }

    /// A CRX3 carrying `public_key`, whose signed crx_id is `id_of` hashed (its own key unless
    /// told otherwise). The signature is filler: micoff reads ids, Chromium checks signatures.
    pub fn crx(public_key: &[u8], id_of: &[u8], version: &str, deflate: bool) -> Vec<u8> {
        let hash = micoff_files::sha256_hex(id_of);
        let crx_id: Vec<u8> = (0..16)
            .map(|i| u8::from_str_radix(&hash[2 * i..2 * i + 2], 16).unwrap())
            .collect();
        let proof = [field(1, public_key), field(2, &[0u8; 256])].concat();
        let header = [field(2, &proof), field(10000, &field(1, &crx_id))].concat();
        let manifest = format!("{{\"name\": \"micoff\", \"version\": \"{version}\"}}");
        let zip = super::zip(
            &[
                ("background.js", b"// code".as_slice()),
                ("manifest.json", manifest.as_bytes()),
            ],
            deflate,
        );
        [
            b"Cr24".as_slice(),
            &3u32.to_le_bytes(),
            &(header.len() as u32).to_le_bytes(),
            &header,
            &zip,
        ]
        .concat()
    }
}

/// A crx of micoff's (its release key's id), of `version`.
pub fn crx_of_micoff(version: &str) -> Vec<u8> {
    let key = crx::micoff_public_key();
    crx::crx(&key, &key, version, true)
}
