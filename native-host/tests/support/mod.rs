//! Shared by the integration tests: a zip writer (the crx and xpi fixtures, a Firefox `omni.ja`), and
//! the installer's arguments as the command line leaves them by default.

#![allow(dead_code)] // each test binary uses its part

use std::io::Write as _;
use std::path::PathBuf;

use micoff_core::install::InstallArgs;

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
