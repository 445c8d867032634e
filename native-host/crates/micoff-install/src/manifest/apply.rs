//! Writing or removing one manifest file ([`apply`]), and what came of it ([`Outcome`]).

use std::path::Path;

use micoff_files::record::Journal;
use micoff_files::{read_regular, MAX_TEXT_BYTES};

use crate::manifest::content::{manifest_json, ownership_of, Ownership};
use crate::manifest::plan::Target;
use crate::package::owned_by_package;

/// The role micoff's record gives the file.
pub const ROLE: &str = "host manifest";

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
    /// micoff-host's Debian package owns it: never written over or removed.
    Package(String),
    Failed(String),
}

/// How one target is to be changed.
pub struct Change<'a> {
    /// The host the manifest names (install).
    pub host: Option<&'a Path>,
    pub uninstall: bool,
    pub dry_run: bool,
    /// The filesystem root, where micoff-host's package keeps its files.
    pub root: &'a Path,
    /// The local extension ids a Chromium manifest allows beside micoff's ([`manifest_json`]).
    pub local_ids: &'a [String],
}

/// Applies one target (write or remove), honouring `dry_run`; the text there before (a dry run
/// shows the difference). Removes only manifests that are ours and unedited ([`ownership_of`]);
/// a symlinked manifest is written through the link, and on removal the link goes (what it
/// points to is left alone); a file micoff-host's package owns is left alone either way. Every write and
/// removal goes through `journal` (micoff's record).
pub fn apply(
    target: &Target,
    change: &Change<'_>,
    journal: &mut Journal,
) -> (Outcome, Option<Vec<u8>>) {
    let existing = match read_regular(&target.path, MAX_TEXT_BYTES) {
        Ok(e) => e,
        Err(e) => return (Outcome::Failed(e.to_string()), None),
    };
    if let Some(why) = existing
        .as_ref()
        .and_then(|_| owned_by_package(change.root, &target.path))
    {
        return (Outcome::Package(why), existing);
    }
    let outcome = if change.uninstall {
        match &existing {
            None => Outcome::Absent,
            Some(text) => match ownership_of(text, change.local_ids) {
                Ownership::NotOurs(why) => Outcome::NotOurs(why),
                Ownership::Edited(why) => Outcome::Edited(why),
                Ownership::AsWritten if change.dry_run => Outcome::Removed,
                // The entry the browser reads goes (a link itself, not what it points to).
                Ownership::AsWritten => match std::fs::remove_file(&target.path) {
                    Ok(()) => {
                        journal.forget_file(&target.path);
                        Outcome::Removed
                    }
                    Err(e) => Outcome::Failed(e.to_string()),
                },
            },
        }
    } else {
        let Some(host) = change.host else {
            return (Outcome::Failed("no host to name".to_owned()), existing);
        };
        let content = manifest_json(target.firefox, host, change.local_ids);
        write(
            target,
            &content,
            existing.as_deref(),
            change.dry_run,
            journal,
        )
    };
    (outcome, existing)
}

/// Writes the manifest `content` (unless it is there already, or a dry run).
fn write(
    target: &Target,
    content: &str,
    existing: Option<&[u8]>,
    dry_run: bool,
    journal: &mut Journal,
) -> Outcome {
    let outcome = match existing {
        Some(old) if old == content.as_bytes() => {
            // Written by an older micoff before it kept a record: recorded now.
            journal.wrote(&target.path, content.as_bytes(), ROLE);
            return Outcome::Unchanged;
        }
        Some(_) => Outcome::Updated,
        None => Outcome::Wrote,
    };
    if dry_run {
        return outcome;
    }
    // 0644: browsers run as the user, system folders are read by everyone.
    match journal.write(&target.path, content.as_bytes(), 0o644, ROLE) {
        Ok(()) => outcome,
        Err(e) => Outcome::Failed(e.to_string()),
    }
}
