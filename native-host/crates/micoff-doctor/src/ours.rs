//! What the doctor and the fixers both know about micoff's own files: the line every file a fixer
//! writes starts with ([`MARKER`]), and where `fix hda` writes its file ([`HDA_CONF_PATH`]). The
//! facts read them (is our file there?), the findings name them, the fixers write them; so they
//! live below all three.

/// First line of every file we write; revert never touches a file without it.
pub const MARKER: &str = "# Written by micoff-host";

/// The modprobe.d file of `fix hda`.
pub const HDA_CONF_PATH: &str = "/etc/modprobe.d/micoff-hda.conf";
