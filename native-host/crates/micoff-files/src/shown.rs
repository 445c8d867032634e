//! A path as micoff prints it in a report line: control characters (a newline above all) written
//! as escapes, so a file or folder name cannot start a line of its own in micoff's output and forge
//! one ("... removed"). Everything else is printed as it is.

use std::path::Path;

/// `path` for a report line: as `Path::display`, with every control character escaped (`\n`,
/// `\t`, `\u{1b}`) and a backslash doubled only when something was escaped.
pub fn shown(path: &Path) -> String {
    shown_text(&path.to_string_lossy())
}

/// [`shown`] for a name or value that is not a path (a profile name, a pref value).
pub fn shown_text(text: &str) -> String {
    if !text.chars().any(char::is_control) {
        return text.to_owned();
    }
    text.chars()
        .map(|c| {
            if c.is_control() || c == '\\' {
                c.escape_default().collect()
            } else {
                c.to_string()
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_cannot_start_a_line() {
        assert_eq!(shown(Path::new("/home/u/x.default")), "/home/u/x.default");
        let forged = Path::new("/home/u/p\nFirefox: /etc/passwd removed");
        let s = shown(forged);
        assert!(!s.contains('\n'), "{s}");
        assert_eq!(s, "/home/u/p\\nFirefox: /etc/passwd removed");
        assert_eq!(shown_text("a\\b\tc"), "a\\\\b\\tc");
        assert_eq!(shown_text("a\\b"), "a\\b");
    }
}
