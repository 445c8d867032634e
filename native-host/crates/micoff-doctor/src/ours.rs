//! What the doctor and the fixers both know about micoff's own files: how a file says it is
//! micoff's (micoff-files' one scheme: [`ownership_of`]), and where `fix hda` writes its file
//! ([`HDA_CONF_PATH`]). The facts read them (is our file there?), the findings name them, the
//! fixers write them; so they live below all three.

pub use micoff_files::ours::{ownership_of, Ownership};

/// The modprobe.d file of `fix hda`.
pub const HDA_CONF_PATH: &str = "/etc/modprobe.d/micoff-hda.conf";
