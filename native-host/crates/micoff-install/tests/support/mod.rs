//! Shared by the integration tests: a zip writer (the crx and xpi fixtures, a Firefox `omni.ja`), and
//! the installer's arguments as the command line leaves them by default.

#![allow(dead_code)] // each test binary uses its part

use std::io::Write as _;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use micoff_install::{InstallArgs, InstallEnv};

/// A stand-in micoff-host for `--host-path`, which the installer checks without running it: an
/// executable file named `micoff-host`, an ELF header and micoff's ident (one per test process).
pub fn host() -> &'static str {
    static HOST: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    HOST.get_or_init(|| {
        let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("micoff-install-host-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("micoff-host");
        let content = [b"\x7fELF".as_slice(), micoff_native::HOST_IDENT.as_bytes()].concat();
        std::fs::write(&path, content).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path.to_str().unwrap().to_owned()
    })
}

/// The installer's view of a machine in `tmp`: home, root and one `PATH` folder (`<tmp>/bin`).
pub fn env(tmp: &Path) -> InstallEnv {
    let bin = tmp.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    InstallEnv {
        home: tmp.join("home"),
        config_home: None,
        root: tmp.join("root"),
        path_dirs: vec![bin],
        flatpak_apps: vec![],
        data_home: None,
        state_home: None,
    }
}

/// A fresh temp dir and [`env`] in it (the dir lives as long as the returned guard).
pub fn temp_env() -> (tempfile::TempDir, InstallEnv) {
    let tmp = tempfile::tempdir().unwrap();
    let env = env(tmp.path());
    (tmp, env)
}

/// `install`'s exit code, and what it wrote to stdout then to stderr (its error lines).
pub fn install(args: &InstallArgs, env: &InstallEnv) -> (i32, String) {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = micoff_install::run(args, env, &mut out, &mut err);
    out.extend(err);
    (code, String::from_utf8(out).unwrap())
}

/// An empty file at `path`, its folders made.
pub fn touch(path: &Path) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, "").unwrap();
}

/// An executable file (what detection looks for).
pub fn executable(path: &Path) {
    touch(path);
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// `micoff-host install` with no option, the stand-in host: tests change what they exercise.
pub fn install_args() -> InstallArgs {
    InstallArgs {
        browsers: vec![],
        all_detected: false,
        system: false,
        target_dir: None,
        uninstall: false,
        dry_run: false,
        host_path: Some(PathBuf::from(host())),
        packaged_host_path: None,
        firefox_release: false,
        release_delay_ms: 3000,
        firefox_profiles: vec![],
        firefox_xpi: None,
        chromium_crx: None,
    }
}

/// A Firefox profile `p.default` in `home`, listed in its `profiles.ini`: its folder.
pub fn firefox_profile(home: &Path) -> PathBuf {
    let profile = home.join(".mozilla/firefox/p.default");
    std::fs::create_dir_all(&profile).unwrap();
    std::fs::write(
        home.join(".mozilla/firefox/profiles.ini"),
        "[Profile0]\nIsRelative=1\nPath=p.default\n",
    )
    .unwrap();
    profile
}

/// micoff's add-on (its gecko id), version 0.1.0, as an xpi written at `path`.
pub fn write_micoff_xpi(path: &Path) {
    let id = micoff_native::FIREFOX_EXTENSION_ID;
    let manifest = format!(
        r#"{{"manifest_version": 3, "name": "micoff", "version": "0.1.0", "browser_specific_settings": {{"gecko": {{"id": "{id}"}}}}}}"#
    );
    std::fs::write(path, zip(&[("manifest.json", manifest.as_bytes())], true)).unwrap();
}

/// Every path under `dir` (files, folders and links), sorted: "nothing written" is this unchanged.
pub fn tree(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if e.file_type().unwrap().is_dir() {
                stack.push(p.clone());
            }
            out.push(p);
        }
    }
    out.sort();
    out
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
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../../manifests/chrome.json"
        );
        let manifest: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        base64(manifest["key"].as_str().unwrap())
    }

    /// A CRX3 carrying `public_key`, whose signed crx_id is `id_of` hashed (its own key unless
    /// told otherwise). The signature is filler: micoff reads ids, Chromium checks signatures.
    pub fn crx(public_key: &[u8], id_of: &[u8], version: &str, deflate: bool) -> Vec<u8> {
        crx_named(public_key, id_of, version, deflate, "micoff")
    }

    /// A crx as [`crx`], its manifest's `name` being `name`.
    pub fn crx_named(
        public_key: &[u8],
        id_of: &[u8],
        version: &str,
        deflate: bool,
        name: &str,
    ) -> Vec<u8> {
        let hash = micoff_files::sha256_hex(id_of);
        let crx_id: Vec<u8> = (0..16)
            .map(|i| u8::from_str_radix(&hash[2 * i..2 * i + 2], 16).unwrap())
            .collect();
        let proof = [field(1, public_key), field(2, &[0u8; 256])].concat();
        let header = [field(2, &proof), field(10000, &field(1, &crx_id))].concat();
        let manifest = format!("{{\"name\": \"{name}\", \"version\": \"{version}\"}}");
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
