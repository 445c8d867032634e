//! Stand-alone `doctor` / `fix` for trying the crate before the host wires it:
//! `cargo run -p micoff-doctor --example doctor -- doctor --json`.

use clap::{Parser, Subcommand};

#[derive(Parser)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    Doctor(micoff_doctor::DoctorArgs),
    Fix(micoff_doctor::FixArgs),
}

fn main() {
    let cli = Cli::parse();
    let code = match &cli.cmd {
        Cmd::Doctor(a) => micoff_doctor::run_doctor(
            a,
            None,
            &mut std::io::stdout().lock(),
            &mut std::io::stderr().lock(),
        ),
        Cmd::Fix(a) => micoff_doctor::run_fix(
            a,
            &mut std::io::stdout().lock(),
            &mut std::io::stderr().lock(),
        ),
    };
    std::process::exit(code);
}
