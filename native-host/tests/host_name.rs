//! The native messaging host name has one source on each side: `micoff_host::HOST_NAME` (the
//! installer writes it into the manifest) and `HOST_NAME` in `extension/src/shared/protocol.ts`
//! (the extension's `connectNative`, the e2e rig). They must be the same string.

#![allow(clippy::unwrap_used)] // tests may unwrap (house style)

use std::path::Path;

#[test]
fn rust_and_typescript_spell_the_host_name_alike() {
    let ts = Path::new(env!("CARGO_MANIFEST_DIR")).join("../extension/src/shared/protocol.ts");
    let text = std::fs::read_to_string(&ts).unwrap();
    let declared: Vec<&str> = text
        .lines()
        .filter_map(|l| l.trim().strip_prefix("export const HOST_NAME = '"))
        .filter_map(|rest| rest.strip_suffix("';"))
        .collect();
    assert_eq!(
        declared,
        vec![micoff_host::HOST_NAME],
        "{} must declare `export const HOST_NAME = '{}';` exactly once",
        ts.display(),
        micoff_host::HOST_NAME
    );
}
