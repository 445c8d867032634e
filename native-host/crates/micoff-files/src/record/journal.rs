//! Writing through the record: a [`Journal`] writes and removes files the one way micoff does
//! ([`crate::write_atomic_made`], [`crate::remove`]) and notes each change; [`Journal::commit`]
//! puts the notes into the record file at the end of the command.

use std::fs;
use std::io;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

use super::entry::{Entry, Place, Record, RECORD_FORMAT};
use crate::ours::sha256_hex;
use crate::read::{read_regular_text, MAX_TEXT_BYTES};
use crate::shown::shown;
use crate::write::{make_folders, remove, write_atomic, write_atomic_made};

/// One change to the record.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Note {
    Put(Entry),
    Forget(Place),
}

/// What a command wrote, on its way into the record.
#[derive(Debug)]
pub struct Journal {
    /// The record file (`None`: nothing is recorded; a dry run writes nothing anyway).
    record: Option<PathBuf>,
    /// The command, as entries name it (`install`, `latency set`, `fix client-shm`).
    by: String,
    notes: Vec<Note>,
    /// Uninstall's journal: when only folders are left in the record, the record goes and so do
    /// those folders, where empty.
    finishing: bool,
}

impl Journal {
    /// A journal for `record` (a user's [`super::user_record`] or the [`super::system_record`]).
    pub fn at(record: PathBuf, by: &str) -> Self {
        Self {
            record: Some(record),
            by: by.to_owned(),
            notes: Vec::new(),
            finishing: false,
        }
    }

    /// A journal that finishes the record: at [`Journal::commit`], a record with only folders left
    /// in it goes, and those folders with it where they are empty (they held nothing but the
    /// record's own folder until then).
    pub fn finishing(mut self) -> Self {
        self.finishing = true;
        self
    }

    /// A journal that records nothing (a dry run; tests of a writer alone).
    pub fn unrecorded(by: &str) -> Self {
        Self {
            record: None,
            by: by.to_owned(),
            notes: Vec::new(),
            finishing: false,
        }
    }

    /// The record file this journal commits to.
    pub fn record(&self) -> Option<&Path> {
        self.record.as_deref()
    }

    /// Writes `content` to `path` ([`crate::write_atomic`]) and notes it: the file with its role
    /// and sha256, and the folders the write had to make.
    pub fn write(&mut self, path: &Path, content: &[u8], mode: u32, role: &str) -> io::Result<()> {
        let made = write_atomic_made(path, content, mode)?;
        self.made_folders(&made);
        self.wrote(path, content, role);
        Ok(())
    }

    /// Notes a file written another way (a fixer's marked file): `content` is what is there now.
    pub fn wrote(&mut self, path: &Path, content: &[u8], role: &str) {
        self.notes.push(Note::Put(Entry::File {
            path: path.to_path_buf(),
            role: role.to_owned(),
            by: self.by.clone(),
            sha256: sha256_hex(content),
        }));
    }

    /// Notes folders a write made (top down).
    pub fn made_folders(&mut self, folders: &[PathBuf]) {
        for f in folders {
            self.notes.push(Note::Put(Entry::Folder {
                path: f.clone(),
                by: self.by.clone(),
            }));
        }
    }

    /// Removes `path` ([`crate::remove`]) and forgets it.
    pub fn remove(&mut self, path: &Path) -> io::Result<()> {
        remove(path)?;
        self.forget_file(path);
        Ok(())
    }

    /// Forgets the file at `path` (removed, or found to be another's).
    pub fn forget_file(&mut self, path: &Path) {
        self.notes
            .push(Note::Forget(Place::File(path.to_path_buf())));
    }

    /// Forgets the folder at `path` (removed).
    pub fn forget_folder(&mut self, path: &Path) {
        self.notes
            .push(Note::Forget(Place::Folder(path.to_path_buf())));
    }

    /// Notes a part `owner` undoes by its own rules.
    pub fn part(&mut self, owner: &str, key: &str, detail: serde_json::Value) {
        self.notes.push(Note::Put(Entry::Part {
            owner: owner.to_owned(),
            key: key.to_owned(),
            by: self.by.clone(),
            detail,
        }));
    }

    /// Forgets `owner`'s part `key` (undone).
    pub fn forget_part(&mut self, owner: &str, key: &str) {
        self.notes.push(Note::Forget(Place::Part {
            owner: owner.to_owned(),
            key: key.to_owned(),
        }));
    }

    /// Whether there is nothing to commit.
    pub fn is_empty(&self) -> bool {
        self.notes.is_empty()
    }

    /// Puts the notes into the record: under a lock on its folder (other micoff processes commit
    /// too: the browser's host setting capture latency while the user installs), the record as it
    /// is now, the notes applied in order, entries of files and folders that no longer exist left
    /// out; written back, or removed with the folders made for it when nothing is left. A record
    /// that cannot be read is never written over: the error names it.
    pub fn commit(self) -> io::Result<()> {
        let Some(path) = self.record else {
            return Ok(());
        };
        if self.notes.is_empty() {
            return Ok(());
        }
        let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) else {
            return Err(io::Error::other(format!("{} has no folder", shown(&path))));
        };
        let adds = self.notes.iter().any(|n| matches!(n, Note::Put(_)));
        if !adds && !dir.is_dir() {
            return Ok(()); // only forgetting, and no record at all
        }
        let made = make_folders(dir)?;
        let _lock = FolderLock::take(dir)?;
        let mut record = load(&path)?.unwrap_or_else(Record::new);
        if record.format > RECORD_FORMAT {
            return Err(io::Error::other(format!(
                "{} is a record of a later micoff (format {}); not changed by this one",
                shown(&path),
                record.format
            )));
        }
        for f in made {
            if !record.own_folders.contains(&f) {
                record.own_folders.push(f);
            }
        }
        for note in self.notes {
            match note {
                Note::Put(e) => record.put(e),
                Note::Forget(place) => record.forget(&place),
            }
        }
        record.entries.retain(|e| match e {
            Entry::File { path, .. } | Entry::Folder { path, .. } => {
                fs::symlink_metadata(path).is_ok()
            }
            Entry::Part { .. } => true,
        });
        let only_folders = record
            .entries
            .iter()
            .all(|e| matches!(e, Entry::Folder { .. }));
        if record.entries.is_empty() || (self.finishing && only_folders) {
            match fs::remove_file(&path) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(e),
            }
            let mut folders: Vec<&Path> = record.own_folders.iter().map(PathBuf::as_path).collect();
            folders.extend(record.entries.iter().filter_map(Entry::path));
            folders.sort_by_key(|f| std::cmp::Reverse(f.components().count()));
            for f in folders {
                // Only an empty folder goes (anything else put there stays, and so does it).
                let _ = fs::remove_dir(f);
            }
            return Ok(());
        }
        let text = record.to_text().map_err(io::Error::other)?;
        write_atomic(&path, text.as_bytes(), 0o600)
    }
}

/// The record at `path`: `None` when there is none; an error when there is one micoff cannot read.
pub fn load(path: &Path) -> io::Result<Option<Record>> {
    let Some(text) = read_regular_text(path, MAX_TEXT_BYTES)? else {
        return Ok(None);
    };
    Record::parse(&text)
        .map(Some)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, format!("{}: {e}", shown(path))))
}

/// An exclusive `flock` on a folder, released when dropped (the descriptor closes).
struct FolderLock {
    _open: fs::File,
}

impl FolderLock {
    fn take(dir: &Path) -> io::Result<Self> {
        let f = fs::File::open(dir)?;
        // SAFETY: a valid open descriptor; flock has no other preconditions.
        if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Self { _open: f })
    }
}
