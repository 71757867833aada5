//! `berth`: the admin command line. It parses, forwards the caller's cwd and
//! environment to berthd, and prints what comes back; it never resolves
//! anything itself.

mod cli;
mod commands;
mod context;
mod install;
mod output;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("Error: starting the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(commands::run(cli)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => e.report(),
    }
}
