//! `berth`: the admin command line. It parses, forwards the caller's cwd and
//! environment to berthd, and prints what comes back; it never resolves
//! anything itself.
// Tests write files freely; the product code replaces one only through `atomic` (clippy.toml).
#![cfg_attr(test, allow(clippy::disallowed_methods))]
#![cfg_attr(all(unix, not(test)), no_main)]

mod cli;
mod code_words;
mod commands;
mod context;
mod dispatch;
mod output;
mod parse;
mod placeholders;
#[cfg(test)]
mod reference;
mod relay;

use std::ffi::OsString;

/// The C entry point: `berth` skips Rust's standard start-up, see
/// `berth_entry` for why and what it keeps. A panic exits 101, as with the
/// standard start-up.
#[cfg(all(unix, not(test)))]
#[unsafe(no_mangle)]
extern "C" fn main(argc: std::ffi::c_int, argv: *const *const std::ffi::c_char) -> std::ffi::c_int {
    // SAFETY: the C runtime passes `argc` valid C strings in `argv`.
    unsafe { berth_entry::run(argc, argv, "berth", berth_entry::PANIC_EXIT, run) }
}

#[cfg(not(unix))]
fn main() -> std::process::ExitCode {
    #[cfg(windows)]
    berth_entry::keep_standard_handles();
    std::process::ExitCode::from(run(std::env::args_os().collect()))
}

/// Parses, runs the command on a current-thread runtime, and gives the exit code.
#[cfg_attr(test, allow(dead_code))]
fn run(args: Vec<OsString>) -> u8 {
    let cli = parse::parse(args);
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("Error: starting the runtime: {e}");
            return 1;
        }
    };
    match runtime.block_on(dispatch::run(cli)) {
        Ok(()) => 0,
        Err(e) => e.report(),
    }
}
