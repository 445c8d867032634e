//! What micoff writes, as text: the pipewire-pulse drop-in (`pulse.min.frag` for the browsers'
//! capture clients, a minimum quantum for Chromium's playback client), a desktop entry copy and a
//! PATH wrapper that put `PULSE_LATENCY_MSEC` in the browser's launch environment, each marked and
//! sealed (`marker`). Pure: every input is an argument.

use std::path::Path;

use super::browser::browser_list;
use super::marker::{sealed, MARKER, META};
use crate::protocol::Browser;

/// The environment variable libpulse reads (`patch_buffer_attr()` in libpulse's stream.c).
pub const LATENCY_ENV: &str = "PULSE_LATENCY_MSEC";
/// The rate `pulse.min.frag` is written at (the fraction is a duration, any rate works).
const RULE_RATE: u32 = 48_000;

/// `pulse.min.frag` for `ms`: a fraction of [`RULE_RATE`].
pub fn min_frag(ms: u32) -> String {
    format!(
        "{}/{RULE_RATE}",
        u64::from(ms) * u64::from(RULE_RATE) / 1000
    )
}

/// The `pulse.min.req` that goes with a playback minimum of `ms`: a quarter of it, what libpulse
/// asks for a playback stream under `PULSE_LATENCY_MSEC=ms` (its minreq default), so the stream is
/// refilled four times a cycle and its buffer (pipewire-pulse makes it a few minreqs) stays short.
pub fn min_req(ms: u32) -> String {
    format!(
        "{}/{RULE_RATE}",
        u64::from(ms) * u64::from(RULE_RATE) / 4000
    )
}

/// The pipewire-pulse drop-in: `pulse.min.frag` for the browsers' capture clients, and for
/// Chromium's playback client (the far end of a call) `pulse.min.quantum` at the same latency with
/// `pulse.min.req` a quarter of it. Without the playback part the browser's playback stream keeps
/// the graph at its own ~10 ms quantum whenever a call plays on the capture's card
/// (docs/design/capture-latency.md, "Capture latency in a call that plays"). Both are minimums for
/// these streams only: another client asking less still gets less (never a forced quantum).
/// The playback match names the browser's binary too: Electron apps name their context "Chromium".
pub fn rule_content(capture_ms: u32, browsers: &[Browser]) -> String {
    let mut matches = Vec::new();
    let mut playback = Vec::new();
    for b in browsers {
        if let Some(name) = b.capture_client_name() {
            matches.push(format!("            {{ application.name = \"{name}\" }}"));
        } else {
            for bin in b.binaries() {
                matches.push(format!(
                    "            {{ application.process.binary = \"{bin}\" }}"
                ));
            }
        }
        if let Some(name) = b.playback_client_name() {
            for bin in b.binaries() {
                playback.push(format!(
                    "            {{ application.name = \"{name}\" application.process.binary = \"{bin}\" }}"
                ));
            }
        }
    }
    let playback_rule = if playback.is_empty() {
        String::new()
    } else {
        format!(
            "    {{\n        matches = [\n{}\n        ]\n        actions = {{\n            \
update-props = {{\n                pulse.min.quantum = {}\n                pulse.min.req = {}\n            \
}}\n        }}\n    }}\n",
            playback.join("\n"),
            min_frag(capture_ms),
            min_req(capture_ms),
        )
    };
    sealed(&format!(
        "{MARKER}\n{META} capture_ms={capture_ms} browsers={}\n\
# Capture latency for the browsers' record streams: pulse.min.frag raises the record fragment\n\
# pipewire-pulse delivers to them. Chromium's playback stream (a call's far end) gets the same\n\
# latency as a minimum quantum, so it no longer holds the graph at ~10 ms; both are minimums for\n\
# these streams only, a client asking less still gets less.\n\
# Takes effect for clients that connect after pipewire-pulse restarts.\n\
# Remove with `micoff-host latency reset` (this file is micoff's; it rewrites or deletes it).\n\
pulse.rules = [\n    {{\n        matches = [\n{}\n        ]\n        actions = {{\n            \
update-props = {{\n                pulse.min.frag = {}\n            }}\n        }}\n    }}\n{playback_rule}]\n",
        browser_list(browsers),
        matches.join("\n"),
        min_frag(capture_ms),
    ))
}

/// A copy of a system desktop entry whose every `Exec=` runs through `env PULSE_LATENCY_MSEC=N`.
/// Only for an entry [`exec_env_would_misread`] finds nothing in.
pub fn desktop_entry_content(
    system: &str,
    source: &Path,
    capture_ms: u32,
    browser: Browser,
) -> String {
    let mut out = format!(
        "{MARKER}\n{META} capture_ms={capture_ms} browser={} source={}\n\
# A copy of the system entry with {LATENCY_ENV}={capture_ms} in the launch environment: libpulse\n\
# then asks {capture_ms} ms for every stream of the browser (capture AND playback).\n\
# Remove with `micoff-host latency reset` (this file is micoff's; it rewrites or deletes it).\n",
        browser.name(),
        source.display(),
    );
    for line in system.lines() {
        match line.strip_prefix("Exec=") {
            Some(cmd) => {
                out.push_str(&format!("Exec=env {LATENCY_ENV}={capture_ms} {cmd}\n"));
            }
            None => {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    sealed(&out)
}

/// The program of an `Exec=` line of `system` that `env VAR=N <program> …` would take for one
/// more assignment (a path holding `=`, which the Desktop Entry spec allows unquoted): `env` would
/// then run the entry's next argument (a file or URL the user opened) as the command. Such an
/// entry gets no copy. `None` when every `Exec=` is safe to prefix.
pub fn exec_env_would_misread(system: &str) -> Option<String> {
    system
        .lines()
        .filter_map(|l| l.strip_prefix("Exec="))
        .map(exec_program)
        .find(|p| p.contains('='))
}

/// The program of an `Exec=` value: its first argument, a quoted one up to its closing quote.
fn exec_program(value: &str) -> String {
    let value = value.trim_start();
    match value.strip_prefix('"') {
        Some(quoted) => {
            let mut program = String::new();
            let mut chars = quoted.chars();
            while let Some(c) = chars.next() {
                match c {
                    '"' => break,
                    '\\' => program.extend(chars.next()),
                    c => program.push(c),
                }
            }
            program
        }
        None => value.split_whitespace().next().unwrap_or("").to_owned(),
    }
}

/// Single-quoted for sh (a path from `$PATH` may hold spaces or quotes).
pub(super) fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// micoff's wrapper of a browser command: runs the browser's own `target` with
/// `PULSE_LATENCY_MSEC=N`, for a browser started by name (a terminal, a launcher's run dialog, a
/// window manager's key binding) rather than from its menu entry. The variable is set and exported
/// by the shell itself, then the target exec'd quoted: never `env VAR=N '<target>'`, where a
/// target path holding `=` (a PATH folder `a=b`) is taken by `env` for one more assignment and the
/// user's first argument is run as the command. `target` is absolute and holds no control
/// character ([`super::paths::Paths`]'s `real_command` sees to both).
pub fn wrapper_content(capture_ms: u32, browser: Browser, command: &str, target: &Path) -> String {
    sealed(&format!(
        "#!/bin/sh\n{MARKER}\n{META} capture_ms={capture_ms} browser={} command={command}\n\
# `{command}` with {LATENCY_ENV}={capture_ms} in its environment: libpulse then asks\n\
# {capture_ms} ms for every stream of the browser (capture AND playback). It runs the browser's own\n\
# command, {}, found in PATH after this folder.\n\
# Remove with `micoff-host latency reset` (this file is micoff's; it rewrites or deletes it).\n\
{LATENCY_ENV}={capture_ms}\n\
export {LATENCY_ENV}\n\
exec {} \"$@\"\n",
        browser.name(),
        target.display(),
        sh_quote(&target.to_string_lossy()),
    ))
}
