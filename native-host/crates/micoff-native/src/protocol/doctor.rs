//! `doctor`: the result is micoff-doctor's `Report` (serialize-only there), carried as JSON; here
//! only the check of the fields the extension reads.

use serde_json::Value;

/// Checks the fields of a `doctor` result that the extension reads.
pub(super) fn check_doctor_report(v: &Value) -> Result<(), String> {
    let str_field = |o: &Value, k: &str| o.get(k).and_then(Value::as_str).map(|_| ());
    v.get("schema_version")
        .and_then(Value::as_u64)
        .ok_or("`schema_version` must be an integer")?;
    str_field(v, "kernel_release").ok_or("`kernel_release` must be a string")?;
    let findings = v
        .get("findings")
        .and_then(Value::as_array)
        .ok_or("`findings` must be an array")?;
    for f in findings {
        for k in ["id", "category", "title", "status", "current", "why"] {
            str_field(f, k).ok_or_else(|| format!("finding `{k}` must be a string: {f}"))?;
        }
        if !f.get("fix").is_some_and(|x| x.is_null() || x.is_string()) {
            return Err(format!("finding `fix` must be a string or null: {f}"));
        }
    }
    Ok(())
}
