//! Files micoff wrote before every file of its own carried a seal: marked, so they stay micoff's
//! and removable by their writer's rules, but never taken as unedited. Capture latency's files (the
//! marker line, then `# micoff-latency: …`): `latency reset` removes them, `latency set` rewrites
//! them sealed. The fixers' older files (`# Written by micoff-host fix <name> …`, maybe a backup
//! line): `fix … --revert` takes them as changed (client-shm takes out only its own lines, hda
//! leaves the file alone). A marked file whose seal was deleted by hand reads the same way.

use super::Ownership;

/// The verdict on a marked file without a seal.
pub fn unsealed() -> Ownership {
    Ownership::Edited(
        "no sha256 record (written by an older micoff, or the record line was removed): whether \
         it was edited since cannot be told"
            .to_owned(),
    )
}
