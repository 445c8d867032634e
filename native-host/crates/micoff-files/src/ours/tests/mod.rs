//! The scheme's tests: the mark and the verdict (marked.rs), the old forms on literal samples from
//! users' files (old_forms.rs), writing over a foreign file and putting it back (backup.rs).

mod backup;
mod marked;
mod old_forms;

use super::sha256_hex;

#[test]
fn sha256_of_known_input() {
    assert_eq!(
        sha256_hex(b"abc"),
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
}
