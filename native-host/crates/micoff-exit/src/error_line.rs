//! The one error style of every subcommand, on stderr:
//! `micoff-host <cmd>: <what went wrong>, <what to do>`, one line, held to the bounds of
//! [`crate::message`] (no log formatting, no level, no colour: a person and a script read the
//! same line).

use std::fmt::Display;
use std::io::Write;

use crate::message::bound_message;

/// The program's name as the error lines start.
pub const PROGRAM: &str = "micoff-host";

/// `micoff-host <cmd>: <what>, <todo>` (`todo` empty: `micoff-host <cmd>: <what>`; `cmd` empty:
/// `micoff-host: …`), bounded.
pub fn error_line(cmd: &str, what: &dyn Display, todo: &str) -> String {
    let who = if cmd.is_empty() {
        PROGRAM.to_owned()
    } else {
        format!("{PROGRAM} {cmd}")
    };
    let line = if todo.is_empty() {
        format!("{who}: {what}")
    } else {
        format!("{who}: {what}, {todo}")
    };
    // One line: a message that brought its own line breaks (an I/O error's text) keeps them as
    // spaces.
    bound_message(&line.replace(['\n', '\r'], " "))
}

/// Writes [`error_line`] to `err` (a failed write to stderr has nowhere else to go).
pub fn report(err: &mut dyn Write, cmd: &str, what: impl Display, todo: &str) {
    let _ = writeln!(err, "{}", error_line(cmd, &what, todo));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::{MAX_MESSAGE_CHARS, MAX_QUOTED_CHARS};

    #[test]
    fn one_line_in_the_one_style() {
        assert_eq!(
            error_line("sample", &"no process 7", "give a running process's id"),
            "micoff-host sample: no process 7, give a running process's id"
        );
        assert_eq!(
            error_line("top", &"cannot write: broken pipe", ""),
            "micoff-host top: cannot write: broken pipe"
        );
        assert_eq!(error_line("", &"a", "b"), "micoff-host: a, b");
        assert_eq!(
            error_line("fix hda", &"a\nb", "c"),
            "micoff-host fix hda: a b, c"
        );
    }

    #[test]
    fn a_long_value_is_cut() {
        let long = "x".repeat(10_000);
        let line = error_line(
            "install",
            &format!("--firefox-xpi {long}: No such file"),
            "give the xpi npm run package writes",
        );
        assert!(line.chars().count() <= MAX_MESSAGE_CHARS, "{line}");
        assert!(!line.contains(&"x".repeat(MAX_QUOTED_CHARS)), "{line}");
        assert!(
            line.ends_with("give the xpi npm run package writes"),
            "{line}"
        );
    }
}
