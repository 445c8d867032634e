//! What micoff's record holds: the files and folders micoff wrote, and the parts writers undo by
//! their own rules. Pure: serde types, no I/O.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The record's format; a record of a later format is read as far as it can be and never
/// rewritten by an earlier micoff.
pub const RECORD_FORMAT: u32 = 1;

/// The record file's content.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    pub format: u32,
    /// Folders micoff made to hold the record itself (`~/.local/state` on a fresh account):
    /// removed with it, when empty, once nothing is left in it.
    #[serde(default)]
    pub own_folders: Vec<PathBuf>,
    #[serde(default)]
    pub entries: Vec<Entry>,
}

/// One thing micoff wrote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Entry {
    /// A file micoff wrote, as it wrote it.
    File {
        path: PathBuf,
        /// What it is, for people (`host manifest`, `latency wrapper`).
        role: String,
        /// The command that wrote it (`install`, `latency set`).
        by: String,
        /// sha256 of what was written.
        sha256: String,
    },
    /// A folder micoff made to hold a file of its own.
    Folder { path: PathBuf, by: String },
    /// Something a writer undoes by its own rules: `owner` (`firefox-profile`,
    /// `firefox-policies`, `fix`), `key` (which one: a profile's folder, a fixer's name) and the
    /// writer's own `detail`.
    Part {
        owner: String,
        key: String,
        by: String,
        #[serde(default)]
        detail: serde_json::Value,
    },
}

/// Where an entry is: two entries at one place are one (the later replaces the earlier).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    File(PathBuf),
    Folder(PathBuf),
    Part { owner: String, key: String },
}

impl Entry {
    pub fn place(&self) -> Place {
        match self {
            Entry::File { path, .. } => Place::File(path.clone()),
            Entry::Folder { path, .. } => Place::Folder(path.clone()),
            Entry::Part { owner, key, .. } => Place::Part {
                owner: owner.clone(),
                key: key.clone(),
            },
        }
    }

    /// The file or folder an entry names (a part: none).
    pub fn path(&self) -> Option<&Path> {
        match self {
            Entry::File { path, .. } | Entry::Folder { path, .. } => Some(path),
            Entry::Part { .. } => None,
        }
    }
}

impl Record {
    /// An empty record of this format.
    pub fn new() -> Self {
        Self {
            format: RECORD_FORMAT,
            ..Self::default()
        }
    }

    /// `entry`, in place of any entry at the same place.
    pub fn put(&mut self, entry: Entry) {
        let place = entry.place();
        self.entries.retain(|e| e.place() != place);
        self.entries.push(entry);
    }

    /// Without the entry at `place`.
    pub fn forget(&mut self, place: &Place) {
        self.entries.retain(|e| e.place() != *place);
    }

    /// The parts of `owner`.
    pub fn parts<'a>(&'a self, owner: &'a str) -> impl Iterator<Item = &'a Entry> + 'a {
        self.entries
            .iter()
            .filter(move |e| matches!(e, Entry::Part { owner: o, .. } if o == owner))
    }

    /// The record as micoff writes it (pretty JSON, trailing newline).
    pub fn to_text(&self) -> Result<String, String> {
        serde_json::to_string_pretty(self)
            .map(|t| t + "\n")
            .map_err(|e| e.to_string())
    }

    /// A record file's text, read.
    pub fn parse(text: &str) -> Result<Self, String> {
        serde_json::from_str(text).map_err(|e| format!("not a record micoff can read ({e})"))
    }
}
