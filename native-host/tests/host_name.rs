//! The native messaging host name has one source on each side: `micoff_native::HOST_NAME` (the
//! installer writes it into the manifest) and `HOST_NAME` in `extension/src/shared/protocol/constants.ts`
//! (the extension's `connectNative`, the e2e rig). They must be the same string. The same holds for
//! the stable error codes: `protocol::ErrorCode` here, `ErrorCode` in the same file there.

#![allow(clippy::unwrap_used)] // tests may unwrap (house style)

use micoff_native::protocol::ErrorCode;
use std::path::{Path, PathBuf};

fn protocol_ts() -> (PathBuf, String) {
    let ts =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../extension/src/shared/protocol/constants.ts");
    let text = std::fs::read_to_string(&ts).unwrap();
    (ts, text)
}

#[test]
fn rust_and_typescript_spell_the_host_name_alike() {
    let (ts, text) = protocol_ts();
    let declared: Vec<&str> = text
        .lines()
        .filter_map(|l| l.trim().strip_prefix("export const HOST_NAME = '"))
        .filter_map(|rest| rest.strip_suffix("';"))
        .collect();
    assert_eq!(
        declared,
        vec![micoff_native::HOST_NAME],
        "{} must declare `export const HOST_NAME = '{}';` exactly once",
        ts.display(),
        micoff_native::HOST_NAME
    );
}

#[test]
fn rust_and_typescript_number_the_error_codes_alike() {
    let (ts, text) = protocol_ts();
    let block: Vec<(String, u32)> = text
        .lines()
        .skip_while(|l| !l.starts_with("export const ErrorCode = {"))
        .skip(1)
        .take_while(|l| !l.starts_with('}'))
        .map(|l| {
            let (name, code) = l.trim().trim_end_matches(',').split_once(':').unwrap();
            (name.trim().to_string(), code.trim().parse().unwrap())
        })
        .collect();
    let rust: Vec<(String, u32)> = ErrorCode::ALL
        .iter()
        .map(|c| (format!("{c:?}"), *c as u32))
        .collect();
    assert_eq!(
        block,
        rust,
        "{}'s `ErrorCode` must list the host's codes, in order",
        ts.display()
    );
}
