//! Writing or removing one manifest file ([`apply`]), and what came of it ([`Outcome`]).

use std::path::Path;

use crate::install::manifest::content::{manifest_json, ownership_of, Ownership};
use crate::install::manifest::plan::Target;

/// What happened to one target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Wrote,
    Updated,
    Unchanged,
    Removed,
    Absent,
    /// (uninstall) A file of that name that is not ours: left alone.
    NotOurs(String),
    /// (uninstall) Ours, but edited since micoff wrote it: left alone.
    Edited(String),
    Failed(String),
}

/// Applies one target (write or remove), honouring `dry_run`. Removes only manifests that are ours
/// and unedited ([`ownership_of`]); a symlinked manifest is written
/// through the link, and on removal the link goes (what it points to is left alone).
pub fn apply(target: &Target, host_path: &Path, uninstall: bool, dry_run: bool) -> Outcome {
    let existing = std::fs::read(&target.path).ok();
    if uninstall {
        return match existing {
            None => Outcome::Absent,
            Some(text) => match ownership_of(&text) {
                Ownership::NotOurs(why) => Outcome::NotOurs(why),
                Ownership::Edited(why) => Outcome::Edited(why),
                Ownership::AsWritten if dry_run => Outcome::Removed,
                Ownership::AsWritten => match std::fs::remove_file(&target.path) {
                    Ok(()) => Outcome::Removed,
                    Err(e) => Outcome::Failed(e.to_string()),
                },
            },
        };
    }
    let content = manifest_json(target.firefox, host_path);
    let outcome = match &existing {
        Some(old) if old == content.as_bytes() => return Outcome::Unchanged,
        Some(_) => Outcome::Updated,
        None => Outcome::Wrote,
    };
    if dry_run {
        return outcome;
    }
    // 0644: browsers run as the user, system folders are read by everyone.
    match micoff_files::write_atomic(&target.path, content.as_bytes(), 0o644) {
        Ok(()) => outcome,
        Err(e) => Outcome::Failed(e.to_string()),
    }
}
