//! Everything `install` is given, checked before anything is written: the host the manifests
//! name ([`host`]: an executable micoff-host, where it says), the packages ([`packages`]: a crx or
//! xpi that is micoff's), the Firefox profiles named (micoff's own folder rules,
//! `firefox::profiles`) and a policy file `--system` would have to refuse. One refused input and
//! nothing at all is written (exit 2, or 3 for the policy file, as before).
//!
//! Also the warnings worth a line before anything is done (and in a dry run): a host in a
//! temporary folder, add-on signatures switched off in Firefox.

pub mod host;
pub mod packages;

use std::ffi::OsStr;
use std::io::Write;
use std::path::PathBuf;

use crate::args::{InstallArgs, CMD};
use crate::chromium::crx::CrxInfo;
use micoff_exit::{EXIT_ERROR, EXIT_USAGE};
use micoff_files::shown;

/// What to do about a crx that cannot be installed.
const CRX_TODO: &str = "give the crx `npm run package` writes (dist/micoff-<version>.crx)";

/// What passed the checks, for the parts to write.
pub struct Checked {
    /// The host the manifests name (an uninstall names none).
    pub host: Option<PathBuf>,
    /// The crx to install, read.
    pub crx: Option<(Vec<u8>, CrxInfo)>,
}

/// Checks the host and the crx of `args` (the xpi and profiles: Firefox's request), saying what
/// it refuses on `err` (micoff-exit's one error line) and the warnings to `out`. `Err`: the exit
/// code, nothing written.
pub fn check(args: &InstallArgs, out: &mut dyn Write, err: &mut dyn Write) -> Result<Checked, i32> {
    if args.uninstall {
        return Ok(Checked {
            host: None,
            crx: None,
        });
    }
    let host = match host::host_path(args.host_path.as_deref()) {
        Ok(p) => p,
        Err(e) => {
            micoff_exit::report(err, CMD, e, "give the host with --host-path");
            return Err(EXIT_ERROR);
        }
    };
    match host::check_host(&host) {
        Ok(version) => {
            if let Some(note) = host::version_note(&version) {
                let _ = writeln!(out, "note: {note}");
            }
        }
        Err(why) => {
            micoff_exit::report(
                err,
                CMD,
                format!("--host-path {why}; nothing written"),
                "give an executable micoff-host (the manifests point the browsers at it)",
            );
            return Err(EXIT_USAGE);
        }
    }
    // A packager's manifests name where the package will put the host (checked above: the host
    // being packaged); the name is micoff-host's all the same.
    let host = match &args.packaged_host_path {
        None => host,
        Some(p) if p.is_absolute() && p.file_name() == Some(OsStr::new(host::HOST_FILE_NAME)) => {
            p.clone()
        }
        Some(p) => {
            micoff_exit::report(
                err,
                CMD,
                format!("--packaged-host-path {}: nothing written", shown(p)),
                &format!("give an absolute path ending in {}", host::HOST_FILE_NAME),
            );
            return Err(EXIT_USAGE);
        }
    };
    let tmpdir = std::env::var_os("TMPDIR").map(PathBuf::from);
    if let Some(tmp) = host::temporary_folder(&host, tmpdir.as_deref()) {
        let _ = writeln!(
            out,
            "warning: the host {} is in a temporary folder ({}): it may be cleaned away (the \
             browsers then find no host), and whoever can write there could replace it; copy it \
             somewhere stable first (e.g. ~/.local/bin) and run this from there",
            shown(&host),
            shown(&tmp)
        );
    }
    let crx = match &args.chromium_crx {
        Some(Some(path)) => match packages::read_crx(path) {
            Ok((bytes, info, note)) => {
                if let Some(n) = note {
                    let _ = writeln!(out, "note: {n}");
                }
                Some((bytes, info))
            }
            Err(e) => {
                micoff_exit::report(err, CMD, e, CRX_TODO);
                return Err(EXIT_USAGE);
            }
        },
        Some(None) => {
            micoff_exit::report(
                err,
                CMD,
                "--chromium-crx needs the crx to install",
                CRX_TODO,
            );
            return Err(EXIT_USAGE);
        }
        None => None,
    };
    Ok(Checked {
        host: Some(host),
        crx,
    })
}
