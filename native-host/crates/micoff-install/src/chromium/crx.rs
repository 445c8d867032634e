//! What a crx (CRX3) says about itself: its extension id, checked against the keys in its header,
//! and its version. Reading only; Chromium checks the signatures when it installs.

use crate::zip;

/// What a crx says about itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CrxInfo {
    /// The extension id (from the signed `crx_id`, checked against a key in the header).
    pub id: String,
    /// `manifest.json` `version`.
    pub version: String,
    /// `manifest.json` `name` (micoff's: [`MICOFF_NAME`]).
    pub name: String,
}

/// The `name` in micoff's extension manifest (manifests/base.json): what a crx signed with another
/// key than micoff's release key must carry to be installed as micoff.
pub const MICOFF_NAME: &str = "micoff";

/// Chrome's id form of hex digits: `0-f` -> `a-p`.
fn id_from_hex(hex: &str) -> String {
    hex.chars()
        .filter_map(|c| c.to_digit(16))
        .filter_map(|d| char::from_u32(u32::from(b'a') + d))
        .collect()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// One protobuf field: (number, bytes) for length-delimited fields; varints are skipped.
fn proto_fields(mut buf: &[u8]) -> Result<Vec<(u64, &[u8])>, String> {
    fn varint(buf: &mut &[u8]) -> Result<u64, String> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let (&b, rest) = buf.split_first().ok_or("truncated varint")?;
            *buf = rest;
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err("varint too long".into())
    }
    let mut out = Vec::new();
    while !buf.is_empty() {
        let key = varint(&mut buf)?;
        match key & 7 {
            0 => {
                varint(&mut buf)?;
            }
            2 => {
                let len = usize::try_from(varint(&mut buf)?).map_err(|e| e.to_string())?;
                if len > buf.len() {
                    return Err("truncated field".into());
                }
                let (field, rest) = buf.split_at(len);
                out.push((key >> 3, field));
                buf = rest;
            }
            w => return Err(format!("unexpected wire type {w}")),
        }
    }
    Ok(out)
}

fn le32(b: &[u8], at: usize) -> Result<usize, String> {
    b.get(at..at + 4)
        .map(|s| u32::from_le_bytes([s[0], s[1], s[2], s[3]]) as usize)
        .ok_or_else(|| "truncated".to_owned())
}

/// A CRX3's extension id and where its zip starts: the header's signed `crx_id`, which must be the
/// hash of one of the header's RSA keys (Chromium checks the signatures themselves when installing).
pub fn crx_id(bytes: &[u8]) -> Result<(String, usize), String> {
    if !bytes.starts_with(b"Cr24") {
        return Err("not a crx (no Cr24 magic)".into());
    }
    if le32(bytes, 4)? != 3 {
        return Err(format!("CRX version {}, not 3", le32(bytes, 4)?));
    }
    let header_len = le32(bytes, 8)?;
    let header = bytes
        .get(12..12 + header_len)
        .ok_or("truncated crx header")?;
    let fields = proto_fields(header)?;
    let signed = fields
        .iter()
        .find(|(n, _)| *n == 10_000)
        .ok_or("no signed header data")?
        .1;
    let crx_id = proto_fields(signed)?
        .into_iter()
        .find(|(n, _)| *n == 1)
        .map(|(_, b)| b)
        .filter(|b| b.len() == 16)
        .ok_or("no 16-byte crx_id")?;
    let want = hex(crx_id);
    let mut key_matches = false;
    for (_, proof) in fields.iter().filter(|(n, _)| *n == 2) {
        for (n, key) in proto_fields(proof)? {
            if n == 1 && micoff_files::sha256_hex(key).get(..32) == Some(want.as_str()) {
                key_matches = true;
            }
        }
    }
    if !key_matches {
        return Err("no RSA key in the crx header has its id".into());
    }
    Ok((id_from_hex(&want), 12 + header_len))
}

/// Reads a CRX3's id ([`crx_id`]), and its manifest's version and name.
pub fn inspect(bytes: &[u8]) -> Result<CrxInfo, String> {
    let (id, zip_at) = crx_id(bytes)?;
    let manifest = zip::entry(&bytes[zip_at..], "manifest.json", zip::MAX_MANIFEST)?
        .ok_or("no manifest.json in the crx")?;
    let manifest: serde_json::Value =
        serde_json::from_slice(&manifest).map_err(|e| format!("manifest.json is not JSON: {e}"))?;
    let version = manifest
        .get("version")
        .and_then(|v| v.as_str())
        .ok_or("manifest.json has no `version`")?
        .to_owned();
    let name = manifest
        .get("name")
        .and_then(|v| v.as_str())
        .unwrap_or_default()
        .to_owned();
    Ok(CrxInfo { id, version, name })
}
