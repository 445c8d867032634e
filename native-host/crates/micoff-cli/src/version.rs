//! `micoff-host --version [--verbose]`: the version as clap printed it (`micoff-host 0.1.0`), and
//! with `--verbose` what a bug report needs besides: the commit it was built from, the libpulse it
//! runs with, the target it was built for.

use std::io::Write;

use crate::{EXIT_ERROR, EXIT_OK};

/// The lines `--version` (`verbose`: `--version --verbose`) prints.
pub fn text(verbose: bool, libpulse: &str) -> String {
    let mut s = format!("micoff-host {}\n", micoff_native::VERSION);
    if verbose {
        s.push_str(&format!("commit: {}\n", micoff_native::COMMIT));
        s.push_str(&format!("libpulse: {libpulse}\n"));
        s.push_str(&format!("target: {}\n", micoff_native::TARGET));
    }
    s
}

/// Prints [`text`] with the libpulse loaded now; returns the exit code.
pub fn print(verbose: bool, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let libpulse = if verbose {
        micoff_pulse::library_version()
    } else {
        String::new()
    };
    match write!(out, "{}", text(verbose, &libpulse)).and_then(|()| out.flush()) {
        Ok(()) => EXIT_OK,
        Err(e) => {
            micoff_exit::report(
                err,
                "--version",
                format!("cannot write: {e}"),
                "check where the output goes",
            );
            EXIT_ERROR
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verbose_adds_commit_libpulse_and_target() {
        assert_eq!(
            text(false, ""),
            format!("micoff-host {}\n", micoff_native::VERSION)
        );
        let v = text(true, "16.1.0");
        let lines: Vec<&str> = v.lines().collect();
        assert_eq!(lines.len(), 4, "{v}");
        assert!(lines[1].starts_with("commit: "), "{v}");
        let commit = &lines[1]["commit: ".len()..];
        assert!(
            commit == "unknown"
                || (commit.len() == 12 && commit.bytes().all(|b| b.is_ascii_hexdigit())),
            "{v}"
        );
        assert_eq!(lines[2], "libpulse: 16.1.0");
        assert!(
            lines[3].starts_with("target: ") && lines[3].contains("linux"),
            "{v}"
        );
    }
}
