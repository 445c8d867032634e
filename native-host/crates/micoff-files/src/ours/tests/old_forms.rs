//! The forms micoff wrote before every file of its own carried a seal, as literal samples of what
//! sits in users' files: each is still micoff's (never "not ours"), none passes as unedited; and the
//! fixers' sealed files written before the scheme moved here read as written, byte for byte.

use crate::ours::marked::{ownership_of, Marked};
use crate::ours::Ownership;

/// `latency set --capture-ms 40` on PulseAudio: a PATH wrapper, up to this version (capture
/// latency's tests hold its other files, and read this one from here too).
const OLD_LATENCY_WRAPPER: &str = include_str!("samples/old-latency-wrapper.txt");

/// The explanation `fix hda` wrote in both forms below (a macro, so that `concat!` takes it).
macro_rules! hda_explanation {
    () => {
        r#"# Intel Skylake+ HD-audio: read the stream position from LPIB (position_fix=1) instead
# of azx_get_pos_skl(), which spins udelay(20) on every capture position query on
# kernels before 5.16 and before the November 2021 stable updates.
# One value per controller in snd_hda_intel's probe order (not the ALSA card number),
# -1 = driver default. The order can change when devices are added; run
# `micoff-host doctor` after hardware changes.
"#
    };
}

/// `fix hda` before the sha256 record (no seal line), over a file it kept as a backup.
const OLD_FIX_HDA_UNSEALED: &str = concat!(
    r#"# Written by micoff-host fix hda (micoff). Undo with: micoff-host fix hda --revert
# micoff: the file this replaced is kept as micoff-hda.conf.micoff-backup
"#,
    hda_explanation!(),
    r#"# entry 0: card0 PCH: 8086:9d71 Sunrise Point-LP
options snd_hda_intel position_fix=1
"#
);

/// `fix hda` with its sha256 record, as the fixers wrote it before the scheme moved to micoff-files.
const FIX_HDA_SEALED: &str = concat!(
    r#"# Written by micoff-host fix hda (micoff). Undo with: micoff-host fix hda --revert
# micoff: the file this replaced is kept as micoff-hda.conf.micoff-backup
# micoff: sha256 5d30b77561f543e936f34799287d19741978bd4fc9348e793ff9adeb8ecb326a (of this file without this line; --revert keeps your edits when it no longer matches)
"#,
    hda_explanation!(),
    r#"options snd_hda_intel position_fix=-1
"#
);

/// `fix client-shm` with its sha256 record, likewise.
const FIX_CLIENT_SHM_SEALED: &str = r#"# Written by micoff-host fix client-shm (micoff). Undo with: micoff-host fix client-shm --revert
# micoff: sha256 41ffe442141d4f3e63706746724112a831484f34897a8d8373eaa6bad74da2ee (of this file without this line; --revert keeps your edits when it no longer matches)
# Based on /etc/pulse/client.conf; shared memory re-enabled so clients can use srbchannel.
; micoff: was `enable-shm = no`
enable-shm = yes
"#;

fn is_unsealed_verdict(o: &Ownership) -> bool {
    matches!(o, Ownership::Edited(why) if why.contains("no sha256 record"))
}

/// `text` read as micoff's, unsealed (never as written): its mark.
fn unsealed(text: &str) -> Marked<'_> {
    let o = ownership_of(text);
    assert!(is_unsealed_verdict(&o), "{o:?}");
    Marked::read(text).unwrap()
}

#[test]
fn an_old_latency_wrapper_is_ours_and_its_meta_line_reads() {
    let marked = unsealed(OLD_LATENCY_WRAPPER);
    assert_eq!(
        marked.header().collect::<Vec<_>>(),
        ["# micoff-latency: capture_ms=40 browser=firefox command=firefox"]
    );
    assert!(marked
        .body()
        .starts_with("# `firefox` with PULSE_LATENCY_MSEC=40"));
}

#[test]
fn an_old_unsealed_fixer_file_is_ours_but_never_as_written() {
    let marked = unsealed(OLD_FIX_HDA_UNSEALED);
    assert_eq!(
        marked.header().collect::<Vec<_>>(),
        ["# micoff: the file this replaced is kept as micoff-hda.conf.micoff-backup"]
    );
}

#[test]
fn the_fixers_sealed_files_read_as_written() {
    for text in [FIX_HDA_SEALED, FIX_CLIENT_SHM_SEALED] {
        assert_eq!(ownership_of(text), Ownership::AsWritten, "{text}");
        let edited = text
            .replace("enable-shm = yes", "enable-shm = no")
            .replace("=-1", "=1");
        assert!(matches!(ownership_of(&edited), Ownership::Edited(_)));
    }
}
