//! Standalone `micoff-bench`: the same bench as `micoff-host bench`, and the child client when
//! re-executed with the hidden `--child` flag (the integration tests run this binary).

use clap::Parser;

#[derive(Parser)]
#[command(
    name = "micoff-bench",
    about = "Audio-path CPU of a libpulse client and the audio server (srbchannel A/B, latency sweep)"
)]
struct Cli {
    #[command(flatten)]
    args: micoff_bench::BenchArgs,
}

fn main() {
    let cli = Cli::parse();
    let stdout = std::io::stdout();
    let stderr = std::io::stderr();
    let code = match micoff_bench::ChildCommand::current_exe(&[]) {
        Ok(child) => {
            micoff_bench::run_with(&cli.args, &child, &mut stdout.lock(), &mut stderr.lock())
        }
        Err(e) => {
            eprintln!("micoff-bench: cannot find own executable: {e}");
            micoff_exit::EXIT_ERROR
        }
    };
    std::process::exit(code);
}
