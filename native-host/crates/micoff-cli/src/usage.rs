//! clap's usage errors in micoff-host's one error style: `micoff-host <cmd>: <what clap says>,
//! see `micoff-host <cmd> --help``, one line on stderr (clap's own block, `error:` then tips and
//! the usage, reads differently from every other error of the host). Help and version output stay
//! clap's.

use clap::error::ErrorKind;

/// The subcommand path the arguments name (`latency set`, `fix governor`), as far as they name one
/// that exists; empty when they name none.
pub fn command_path(command: &clap::Command, args: &[String]) -> String {
    let mut path: Vec<&str> = Vec::new();
    let mut current = command;
    for arg in args.iter().filter(|a| !a.starts_with('-')) {
        match current.find_subcommand(arg) {
            Some(sub) => {
                path.push(sub.get_name());
                current = sub;
            }
            None => break,
        }
    }
    path.join(" ")
}

/// The error line for clap's `e` (a usage error) of the command line `args` (without the
/// program's name).
pub fn usage_error_line(command: &clap::Command, e: &clap::Error, args: &[String]) -> String {
    let cmd = command_path(command, args);
    let what = clap_message(e);
    let todo = if cmd.is_empty() {
        format!("see `{} --help`", micoff_exit::error_line::PROGRAM)
    } else {
        format!("see `{} {cmd} --help`", micoff_exit::error_line::PROGRAM)
    };
    micoff_exit::error_line(&cmd, &what, &todo)
}

/// clap's message on one line: its text up to the usage, `error: ` and blank lines gone, each
/// tip in parentheses, a list of missing arguments joined with commas.
fn clap_message(e: &clap::Error) -> String {
    let text = e.render().to_string();
    let mut what = String::new();
    let mut tips: Vec<String> = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with("Usage:") || line.starts_with("For more information") {
            break;
        }
        if line.is_empty() {
            continue;
        }
        if let Some(tip) = line.strip_prefix("tip: ") {
            tips.push(tip.to_owned());
        } else if let Some(first) = line.strip_prefix("error: ") {
            what.push_str(first);
        } else {
            // A continuation (the missing arguments, one per line).
            if !what.ends_with(':') {
                what.push(',');
            }
            what.push(' ');
            what.push_str(line);
        }
    }
    if what.is_empty() {
        what = match e.kind() {
            ErrorKind::MissingSubcommand => "a subcommand is needed".to_owned(),
            _ => "the arguments are not understood".to_owned(),
        };
    }
    for tip in tips {
        what.push_str(&format!(" ({tip})"));
    }
    what
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    fn line(args: &[&str]) -> String {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        let mut full = vec!["micoff-host".to_owned()];
        full.extend(args.iter().cloned());
        let e = crate::Cli::command()
            .try_get_matches_from(full)
            .unwrap_err();
        usage_error_line(&crate::Cli::command(), &e, &args)
    }

    #[test]
    fn clap_errors_read_as_the_hosts_own() {
        assert_eq!(
            line(&["sample", "--window", "x"]),
            "micoff-host sample: invalid value 'x' for '--window <S>': not a number; give \
             0.1-600 s, see `micoff-host sample --help`"
        );
        assert_eq!(
            line(&["latency", "set"]),
            "micoff-host latency set: the following required arguments were not provided: \
             --capture-ms <N>, see `micoff-host latency set --help`"
        );
        assert_eq!(
            line(&["sample", "--windw", "3"]),
            "micoff-host sample: unexpected argument '--windw' found (a similar argument exists: \
             '--window'), see `micoff-host sample --help`"
        );
        assert_eq!(
            line(&["samp"]),
            "micoff-host: unrecognized subcommand 'samp' (a similar subcommand exists: \
             'sample'), see `micoff-host --help`"
        );
    }
}
