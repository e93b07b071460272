//! The `podsim` binary: a thin wrapper over [`podsim::cli`].

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = match podsim::cli::Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    podsim::cli::main_with(cli)
}
