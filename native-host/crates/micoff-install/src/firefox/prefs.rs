//! Firefox's prefs as micoff sets them: the names (the release of a disabled microphone, and what
//! lets Firefox take up an unsigned add-on dropped into a profile), micoff's release delay range,
//! and the one parser of pref lines (`pref(...)`, `user_pref(...)`) for `user.js`, `prefs.js` and
//! a build's defaults. One home for these facts: `user_js`, `policies`, `build` and the command
//! line (the delay range) import them from here.

/// The pref that turns Firefox's native release on.
pub const PREF_ENABLED: &str = "media.getusermedia.microphone.off_while_disabled.enabled";
/// Its delay (ms), Firefox's default 3000.
pub const PREF_DELAY: &str = "media.getusermedia.microphone.off_while_disabled.delay_ms";
/// micoff's default release delay (extension/src/shared/settings.ts `DEFAULT_SETTINGS`).
pub const DEFAULT_DELAY_MS: u32 = 3000;
/// micoff's release delay range (extension/src/shared/settings.ts `RELEASE_DELAY_*_MS`).
pub const MAX_DELAY_MS: u32 = 10_000;
/// Unsigned add-ons: honoured only by builds that do not require signing (`MOZ_REQUIRE_SIGNING`
/// off: ESR, Developer Edition, Nightly), in `user.js` as in the `Preferences` policy.
pub const PREF_SIGNATURES: &str = "xpinstall.signatures.required";
/// Install scopes whose dropped-in add-ons come disabled until the user confirms them.
pub const PREF_AUTO_DISABLE: &str = "extensions.autoDisableScopes";
/// Install scopes scanned for new or changed add-ons at every start (else only after an update).
pub const PREF_STARTUP_SCAN: &str = "extensions.startupScanScopes";

/// `(function, name, value)` of a pref line: `user_pref("a.b", 3);` is `("user_pref", "a.b",
/// "3")`. The value is its text as written (`true`, `3`, `"text"` with its quotes); a trailing
/// `locked` / `sticky` argument is dropped. `None` for anything else (comments, blank lines).
pub fn parse_pref_line(line: &str) -> Option<(&str, String, String)> {
    let t = line.trim();
    let open = t.find('(')?;
    let func = t[..open].trim();
    if !matches!(func, "pref" | "user_pref" | "sticky_pref" | "lock_pref") {
        return None;
    }
    let rest = t[open + 1..].trim_start();
    let (name, rest) = read_string(rest)?;
    let rest = rest.trim_start().strip_prefix(',')?.trim_start();
    let (value, rest) = if rest.starts_with('"') {
        let end = string_end(rest)?;
        (rest[..end].to_owned(), &rest[end..])
    } else {
        let end = rest.find([',', ')'])?;
        (rest[..end].trim().to_owned(), &rest[end..])
    };
    rest.contains(')').then_some((func, name, value))
}

/// The byte index just past the closing quote of the string `s` starts with.
fn string_end(s: &str) -> Option<usize> {
    let mut escaped = false;
    for (i, c) in s.char_indices().skip(1) {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '"' => return Some(i + 1),
            _ => {}
        }
    }
    None
}

/// A quoted string at the start of `s` (its text, unescaped for `\"` and `\\`) and what follows.
fn read_string(s: &str) -> Option<(String, &str)> {
    if !s.starts_with('"') {
        return None;
    }
    let end = string_end(s)?;
    let name = s[1..end - 1].replace("\\\"", "\"").replace("\\\\", "\\");
    Some((name, &s[end..]))
}

/// `user_pref("name", value);`, the line Firefox itself writes to `prefs.js`.
pub fn user_pref_line(name: &str, value: &str) -> String {
    format!("user_pref(\"{name}\", {value});")
}

/// The last value `text` gives `name` through `function(...)` lines.
pub fn last_value(text: &str, function: &str, name: &str) -> Option<String> {
    text.lines()
        .rev()
        .filter_map(parse_pref_line)
        .find(|(f, n, _)| *f == function && n == name)
        .map(|(_, _, v)| v)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn pref_lines_parse_as_firefox_writes_them() {
        assert_eq!(
            parse_pref_line("user_pref(\"a.b\", 3);"),
            Some(("user_pref", "a.b".to_owned(), "3".to_owned()))
        );
        assert_eq!(
            parse_pref_line("  pref(\"x\",true, locked);"),
            Some(("pref", "x".to_owned(), "true".to_owned()))
        );
        assert_eq!(
            parse_pref_line(r#"user_pref("s", "a, \"b\")");"#),
            Some(("user_pref", "s".to_owned(), r#""a, \"b\")""#.to_owned()))
        );
        assert_eq!(parse_pref_line("// user_pref(\"a\", 1);"), None);
        assert_eq!(parse_pref_line("user_pref(\"a\", 1"), None);
        assert_eq!(parse_pref_line(""), None);
        let text = "user_pref(\"a\", 1);\nuser_pref(\"a\", 2);\npref(\"a\", 9);\n";
        assert_eq!(last_value(text, "user_pref", "a").as_deref(), Some("2"));
        assert_eq!(user_pref_line("a", "2"), "user_pref(\"a\", 2);");
    }
}
