//! Files micoff wrote before every file of its own carried a seal. They are marked, so they stay
//! micoff's and removable by the rules of whoever wrote them, but hold no record of what was
//! written, so they are never taken as unedited. The forms found in users' files:
//!
//! - capture latency's files (the pipewire-pulse drop-in, desktop entry copies, `#!/bin/sh` PATH
//!   wrappers) up to this version: the marker line alone, then a `# micoff-latency: …` header line.
//!   `latency reset` removes them, `latency set` rewrites them sealed (its rule for any file of its
//!   own, edited or not).
//! - the fixers' files from before the sha256 record: `# Written by micoff-host fix <name> …`, maybe
//!   the backup line. `fix … --revert` takes them as changed, as it always did: client-shm takes out
//!   only its own lines, hda leaves the file alone.
//!
//! A marked file whose seal line was deleted by hand reads the same way. The tests hold literal
//! samples of each form.

use super::Ownership;

/// The verdict on a marked file without a seal.
pub fn unsealed() -> Ownership {
    Ownership::Edited(
        "no sha256 record (written by an older micoff, or the record line was removed): whether \
         it was edited since cannot be told"
            .to_owned(),
    )
}
