//! `micoff-dist <OUT_DIR>`: writes micoff-host's man pages (`OUT_DIR/man1/`) and shell completions
//! (`OUT_DIR/completions/`), one path per line on stdout. Run by `npm run package`.

use std::io::Write;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    let [out] = args.as_slice() else {
        let _ = writeln!(std::io::stderr(), "usage: micoff-dist <OUT_DIR>");
        return ExitCode::from(2);
    };
    match micoff_dist::write_all(std::path::Path::new(out)) {
        Ok(files) => {
            let mut stdout = std::io::stdout().lock();
            for f in files {
                let _ = writeln!(stdout, "{}", f.display());
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "micoff-dist: {e}");
            ExitCode::FAILURE
        }
    }
}
