//! What micoff has configured, read back from its own files on disk (the drop-in, the desktop
//! entry copies, the PATH wrappers): nothing else counts.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::browser::parse_browser_list;
use super::marker::read_meta;
use super::paths::Paths;
use crate::protocol::{Browser, Mechanism};

/// A file of ours on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OurFile {
    pub path: PathBuf,
    pub mechanism: Mechanism,
    pub capture_ms: Option<u32>,
    pub browsers: Vec<Browser>,
    pub modified: Option<SystemTime>,
}

fn our_file(path: &Path, mechanism: Mechanism) -> Option<OurFile> {
    let content = micoff_files::read_regular_text(path, micoff_files::MAX_TEXT_BYTES)
        .ok()
        .flatten()?;
    let meta = read_meta(&content)?;
    let browsers = match mechanism {
        Mechanism::PipewirePulseRule => parse_browser_list(meta.get("browsers")?),
        Mechanism::LaunchEnvironment => vec![Browser::from_name(meta.get("browser")?)?],
    };
    Some(OurFile {
        path: path.to_owned(),
        mechanism,
        capture_ms: meta.get("capture_ms").and_then(|v| v.parse().ok()),
        browsers,
        modified: fs::metadata(path).and_then(|m| m.modified()).ok(),
    })
}

/// Every latency file of ours: the drop-in, the desktop entries in the user's folder and the
/// PATH wrappers.
pub fn our_files(paths: &Paths) -> Vec<OurFile> {
    let mut files: Vec<OurFile> = our_file(&paths.rule_file(), Mechanism::PipewirePulseRule)
        .into_iter()
        .collect();
    let mut ids: Vec<&str> = Browser::ALL
        .iter()
        .flat_map(|b| b.desktop_ids().iter().copied())
        .collect();
    ids.sort_unstable();
    for id in ids {
        if let Some(f) = our_file(
            &paths.user_applications().join(id),
            Mechanism::LaunchEnvironment,
        ) {
            files.push(f);
        }
    }
    for b in Browser::ALL {
        for cmd in b.commands() {
            if let Some(f) = paths
                .wrapper(cmd)
                .and_then(|w| our_file(&w, Mechanism::LaunchEnvironment))
            {
                files.push(f);
            }
        }
    }
    files
}

/// The configuration the files say (the drop-in wins if both kinds are there).
pub fn configured_from(files: &[OurFile]) -> Option<(u32, Mechanism, Vec<Browser>, Vec<String>)> {
    let first = files
        .iter()
        .find(|f| f.mechanism == Mechanism::PipewirePulseRule)
        .or_else(|| files.first())?;
    let ms = first.capture_ms?;
    let mut browsers = BTreeSet::new();
    let mut paths = Vec::new();
    for f in files.iter().filter(|f| f.mechanism == first.mechanism) {
        browsers.extend(f.browsers.iter().copied());
        paths.push(f.path.display().to_string());
    }
    Some((ms, first.mechanism, browsers.into_iter().collect(), paths))
}

/// When the newest file of `mechanism` was written.
pub(super) fn files_modified(files: &[OurFile], mechanism: Mechanism) -> Option<SystemTime> {
    files
        .iter()
        .filter(|f| f.mechanism == mechanism)
        .filter_map(|f| f.modified)
        .max()
}
