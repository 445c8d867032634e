//! The shape of a row of the browser table: what micoff knows of one browser.

use crate::family::BrowserFamily;

/// What micoff knows of one browser. Paths are relative (to the root, or to the folder named).
#[derive(Debug)]
pub struct BrowserFacts {
    /// The stable lowercase name: `--browser`, the wire, micoff's own files.
    pub key: &'static str,
    /// The name people know it by.
    pub name: &'static str,
    pub family: BrowserFamily,
    /// Its folder of per-user data: in the config home (`~/.config/<dir>`) for the Chromium
    /// family, in home (`~/<dir>`) for Firefox. Its manifest folder and profile file are inside.
    pub user_data_dir: &'static str,
    /// Its system-wide native messaging manifest folders (relative to the root), the one written
    /// by default first, then the others it reads; empty when it documents none.
    pub system_manifest_dirs: &'static [&'static str],
    /// Its executables' names, in the order they are looked for, each with what it is.
    pub executables: &'static [Executable],
    /// Executables at the usual install locations (relative to the root), in the order they are
    /// looked for.
    pub install_paths: &'static [InstallPath],
    /// `<dir>*/<name>*` executables under these (relative to the root; `<name>` is the last part),
    /// e.g. Firefox's `/usr/lib/firefox-esr/firefox-esr` or `/usr/lib64/firefox/firefox`.
    pub install_dir_prefixes: &'static [&'static str],
    /// Its snap's name (`/snap/bin/<name>`), when there is one.
    pub snap: Option<&'static str>,
    pub flatpak_id: &'static str,
    /// Desktop entry ids of its stable channel; empty where micoff sets no capture latency.
    pub desktop_ids: &'static [&'static str],
    /// The name of its capture context at the audio server, when it has one of its own
    /// (Chromium's `PRODUCT_STRING " input"`, pulse_util.cc); Firefox has one context for capture
    /// and playback, told by its binary.
    pub capture_client_name: Option<&'static str>,
    /// The name of its playback context at the audio server, when it is a context of its own
    /// (Chromium's `PRODUCT_STRING`, audio_manager_pulse.cc: the far end of a call plays there).
    pub playback_client_name: Option<&'static str>,
}

/// An executable name of a browser, and what it is to micoff.
#[derive(Debug, Clone, Copy)]
pub struct Executable {
    pub name: &'static str,
    /// A command on PATH that starts this browser (any channel).
    pub command: bool,
    /// A command of its stable channel, the one people and its desktop entries run it by.
    pub stable_command: bool,
    /// A name its main process has (comm, or the basename of its exe or argv0).
    pub process: bool,
    /// What libpulse reports as its clients' `application.process.binary`.
    pub pulse_binary: bool,
}

impl Executable {
    /// A name with nothing said of it yet: the builders below say what it is.
    pub const fn named(name: &'static str) -> Self {
        Self {
            name,
            command: false,
            stable_command: false,
            process: false,
            pulse_binary: false,
        }
    }

    pub const fn command(self) -> Self {
        Self {
            command: true,
            ..self
        }
    }

    /// A command of the stable channel (a command, too).
    pub const fn stable_command(self) -> Self {
        Self {
            command: true,
            stable_command: true,
            ..self
        }
    }

    pub const fn process(self) -> Self {
        Self {
            process: true,
            ..self
        }
    }

    pub const fn pulse_binary(self) -> Self {
        Self {
            pulse_binary: true,
            ..self
        }
    }
}

/// An executable at a usual install location.
#[derive(Debug, Clone, Copy)]
pub struct InstallPath {
    /// Relative to the root.
    pub path: &'static str,
    /// The browser's program itself, not a launcher script in front of it.
    pub program: bool,
}

impl InstallPath {
    pub const fn program(path: &'static str) -> Self {
        Self {
            path,
            program: true,
        }
    }

    pub const fn launcher(path: &'static str) -> Self {
        Self {
            path,
            program: false,
        }
    }
}
