//! The shell commands the doctor offers and the fixers print (apply, revert, reload a module,
//! ...), and [`shell_word`] for the words put into them. One home for each: the findings, the
//! fixers and the CLI import them from here.

pub const FIX_HDA: &str = "sudo micoff-host fix hda --apply";
pub const FIX_CLIENT_SHM: &str = "micoff-host fix client-shm --apply";
pub const FIX_GOVERNOR: &str = "sudo micoff-host fix governor --apply";
pub const REVERT_HDA: &str = "sudo micoff-host fix hda --revert";
pub const RELOAD_HDA: &str = "sudo modprobe -r snd_hda_intel && sudo modprobe snd_hda_intel";
pub const LARGER_LATENCY: &str = "PULSE_LATENCY_MSEC=60 chromium";
pub const PIPEWIRE_QUANTUM: &str = "pw-metadata -n settings 0 clock.min-quantum 1024";
pub const SMT_OFF: &str = "echo off | sudo tee /sys/devices/system/cpu/smt/control";

/// `s` as one shell word (single-quoted unless it is plainly safe).
pub fn shell_word(s: &str) -> String {
    let safe = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_@%+=:,./-".contains(&b));
    if safe {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_words() {
        assert_eq!(shell_word("tommi"), "tommi");
        assert_eq!(shell_word("/tmp/a b"), "'/tmp/a b'");
        assert_eq!(shell_word("it's"), "'it'\\''s'");
        assert_eq!(shell_word(""), "''");
    }
}
