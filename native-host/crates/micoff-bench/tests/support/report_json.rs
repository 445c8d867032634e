//! Reading the bench's `--json` report in tests: shared by this crate's rig.rs and the host's
//! bench_cli.rs (each includes it with `#[path]`). The tests assert on the JSON as written (its
//! spellings, its nulls), so they read it as a `serde_json::Value`.

use serde_json::Value;

/// The summary row of `mode` (as spelled in the JSON, e.g. `srbchannel_on`); panics with the
/// report when there is none.
pub fn summary<'a>(report: &'a Value, mode: &str) -> &'a Value {
    report["summaries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["mode"] == mode)
        .unwrap_or_else(|| panic!("no {mode} summary in {report}"))
}
