//! The one way micoff writes files outside its own folder (browser manifests, `/etc/modprobe.d`,
//! `~/.config/pulse/client.conf`, capture latency's files, `/run` state), marks them as its own,
//! and puts them back.
//!
//! - Writes go to a randomly named temporary file created exclusively (`O_CREAT|O_EXCL`, so a
//!   symlink or file planted at that name is never followed or reused) in the folder of the file
//!   written, get their mode with `fchmod` (whatever the umask), are synced, then renamed over the
//!   target: readers see the old file or the new one, never half of one.
//! - A target that is a symlink (dotfiles setups) is written THROUGH the link: the file it points
//!   to gets the new content and the link stays a link pointing where it pointed. Only a link
//!   nobody else could have planted or redirected is followed ([`resolve()`]): every link of the
//!   chain and the file it ends at belong to the user running micoff or to root, and sit in
//!   [safe folders](resolve()); anything else is refused with a message and nothing is written.
//! - Backups are created exclusively too (never through a link planted at the backup's name) and
//!   keep the mode of the file they copy; [`restore`] puts one back exactly, through the link
//!   when the target is one.
//! - Every file micoff writes is known as its own one way ([`ours`]): a marker and a seal (the
//!   sha256 of what was written) in the file, or for a file that cannot carry one a record micoff
//!   recomputes; one verdict, [`ours::Ownership`]: not ours, edited, as written.
//!
//! - Files micoff only reads where it writes (an existing manifest, a user.js) or is pointed at (a
//!   crx) are read only when they are regular files, and only up to a bound ([`read`]).
//! - Everything micoff writes is noted in its [`record`], from which `micoff-host uninstall`
//!   undoes it all.
//!
//! Module map:
//! - [`shown`](mod@shown): a path as a report line prints it (control characters escaped).
//! - [`read`]: [`read_regular`], [`read_regular_text`], [`read_with_mode`]: regular files only,
//!   bounded.
//! - [`resolve`](mod@resolve): which symlinks are followed ([`resolve()`]), at the file and in the
//!   folders on its way, and the trust it rests on.
//! - [`write`](mod@write): [`write_atomic`], [`copy_new`], [`restore`], [`remove`],
//!   [`write_existing`] (a kernel setting, in place).
//! - [`ours`]: the marker, the seal and the verdict; the old forms; writing over a foreign file
//!   with a backup and putting it back.
//! - [`record`]: micoff's record of what it wrote ([`record::Journal`]), and putting a recorded
//!   file or folder away.
//! - [`diff`]: what a write would change, as a line diff (dry runs).
//! - [`user_dirs`]: the user's folders from the environment, not believed blindly as root.

pub mod diff;
pub mod ours;
pub mod read;
pub mod record;
pub mod resolve;
pub mod shown;
pub mod user_dirs;
pub mod write;

#[cfg(test)]
mod test_support;

pub use ours::sha256_hex;
pub use read::{read_regular, read_regular_text, read_with_mode, MAX_FILE_BYTES, MAX_TEXT_BYTES};
pub use resolve::resolve;
pub use shown::{shown, shown_text};
pub use write::{
    copy_new, is_symlink, make_folders, remove, restore, write_atomic, write_atomic_made,
    write_existing, TMP_SUFFIX,
};
