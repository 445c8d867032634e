//! The one way micoff writes files outside its own folder (manifests, `/etc/modprobe.d`,
//! client.conf, capture latency's files, `/run` state), marks them as its own and puts them back.
//! Writes: an exclusively created random temporary file in the target's folder, `fchmod`, sync,
//! rename; through a symlink only where nobody else could have planted it ([`resolve()`]). Module
//! map: [`shown`](mod@shown) (a path as a report prints it); [`read`] (regular files only,
//! bounded); [`resolve`](mod@resolve); [`write`](mod@write) ([`write_atomic`], [`copy_new`],
//! [`restore`], [`remove`], [`write_existing`]); [`ours`] (marker, seal, verdict, backups);
//! [`record`] (what micoff wrote, for uninstall); [`diff`] (dry runs); [`user_dirs`].

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
