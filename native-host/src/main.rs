//! micoff-host: thin entry point. Browser arguments -> native messaging on stdin/stdout (logs on
//! stderr); otherwise the subcommands, whose errors are one line each on stderr
//! (`micoff-host <cmd>: <what>, <what to do>`), with logs only when RUST_LOG asks for them.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use clap::error::ErrorKind;
use clap::{CommandFactory, Parser};
use micoff_cli::{self as cli, Cli, EXIT_ERROR, EXIT_OK};
use micoff_native::deps::Launch;

fn main() -> ExitCode {
    // micoff's ident stays in the binary: `install --host-path` recognises a micoff-host by it.
    std::hint::black_box(micoff_native::HOST_IDENT);
    let args: Vec<String> = std::env::args().skip(1).collect();
    let native = Launch::from_args(&args);
    init_tracing(native.is_some());
    let code = match native {
        Some(launch) => native_messaging(launch),
        None => match Cli::try_parse() {
            // --help / --version (clap prints them to stdout), and the help shown for a
            // command line with no subcommand (on stderr, exit 2).
            Err(e)
                if !e.use_stderr()
                    || e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand =>
            {
                let _ = e.print();
                e.exit_code()
            }
            // Usage errors: one line in the host's own style.
            Err(e) => {
                let line = cli::usage::usage_error_line(&Cli::command(), &e, &args);
                let _ = writeln!(std::io::stderr().lock(), "{line}");
                e.exit_code()
            }
            Ok(cli) => cli::run(
                cli,
                &mut std::io::stdout().lock(),
                &mut std::io::stderr().lock(),
            ),
        },
    };
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}

fn init_tracing(native: bool) {
    // Subcommands say what went wrong in their own error lines: logs only on request (RUST_LOG).
    let default = if native {
        "micoff_host=info,micoff_native=info,micoff_backend=info"
    } else {
        "off"
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    // Colour only for a person at a terminal: the browser, `2>file` and test harnesses get plain
    // text (NO_COLOR, https://no-color.org, turns it off everywhere).
    let ansi = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(ansi)
        .with_target(false)
        .init();
}

fn native_messaging(launch: Launch) -> i32 {
    tracing::info!(origin = ?launch.origin, extension = ?launch.extension_id, "native messaging mode");
    // One runtime thread: the host's work is small and mostly waiting (blocking /proc reads and
    // stdio go to tokio's blocking pool, libpulse has its own thread), and fewer threads mean fewer
    // cross-thread wakeups per `cpu` tick (docs/design/host-cost.md).
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            tracing::error!("cannot start the runtime: {e}");
            return EXIT_ERROR;
        }
    };
    let local_ids = match launch.browser_family {
        Some(micoff_native::protocol::BrowserFamily::Chromium) => cli::local_chrome_ids(),
        _ => Vec::new(),
    };
    if let Err(why) = launch.check_caller(&local_ids) {
        tracing::error!("refusing the caller: {why}");
        let refused = runtime.block_on(micoff_native::server::refuse(
            tokio::io::stdout(),
            micoff_native::framing::FrameCodec::default(),
            &why,
        ));
        if let Err(e) = refused {
            tracing::error!("{e}");
        }
        runtime.shutdown_timeout(std::time::Duration::from_millis(100));
        return EXIT_ERROR;
    }
    let result = runtime.block_on(async {
        // The sink waker lives as long as the connection to the extension.
        let (deps, _waker) = micoff_backend::native(launch);
        micoff_native::server::run(tokio::io::stdin(), tokio::io::stdout(), deps).await
    });
    // Blocking stdin reads would otherwise keep the runtime alive at shutdown.
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
    match result {
        Ok(()) => EXIT_OK,
        Err(e) => {
            tracing::error!("{e}");
            EXIT_ERROR
        }
    }
}
