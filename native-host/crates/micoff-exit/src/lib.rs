//! How every micoff-host subcommand ends and speaks to its caller: its exit code, its error line,
//! the bounds of a message, its options' ranges; here, below `bench`, `doctor` and `fix` too.
//!
//! Module map: here, the exit codes (docs/cli.md and `--help`, [`EXIT_CODES_HELP`], list the same);
//! [`error_line`]: the one error style, `micoff-host <cmd>: <what>, <what to do>`; [`message`]: a
//! message's bounds (256 characters, 64 of any one value), kept by native messaging errors too;
//! [`range`]: a numeric option's range and unit, read by its check and its `--help` alike.

pub mod error_line;
pub mod message;
pub mod range;

pub use error_line::{error_line, report};
pub use message::{bound_message, bounded, quote, MAX_MESSAGE_CHARS, MAX_QUOTED_CHARS};
pub use range::{Range, PID};

pub const EXIT_OK: i32 = 0;
pub const EXIT_ERROR: i32 = 1;
/// A usage error: bad arguments, nothing was done. clap exits with the same code.
pub const EXIT_USAGE: i32 = 2;
/// Partial: some of the work failed, or (`fix`) it was applied but does not have its effect yet.
pub const EXIT_PARTIAL: i32 = 3;
/// Nothing found: no matching browser, process, audio server or device.
pub const EXIT_NOT_FOUND: i32 = 4;

pub const EXIT_CODES_HELP: &str =
    "Exit codes: 0 ok, 1 error, 2 usage error, 3 partial (some of the \
work failed), 4 nothing found (no matching browser, process or audio server).";

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn clap_usage_errors_use_our_usage_code() {
        #[derive(clap::Parser, Debug)]
        struct Cli {
            #[arg(long)]
            n: u32,
        }
        let e = <Cli as clap::Parser>::try_parse_from(["x", "--n", "no"]).unwrap_err();
        assert_eq!(e.exit_code(), EXIT_USAGE);
    }

    #[test]
    fn help_names_every_code() {
        for code in [
            EXIT_OK,
            EXIT_ERROR,
            EXIT_USAGE,
            EXIT_PARTIAL,
            EXIT_NOT_FOUND,
        ] {
            assert!(EXIT_CODES_HELP.contains(&format!("{code} ")), "{code}");
        }
    }
}
