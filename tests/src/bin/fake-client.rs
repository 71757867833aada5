//! `fake-client PROGRAM [ARGS...]`: runs PROGRAM as its child, with this process's standard
//! input, output and error, and exits as it did. It plays a coding client of its own for the
//! tests of the link between a session-start hook and an MCP session through their client
//! process: its name is no shell's and no berth program's, so the walk up a hook's parents
//! stops at it.

fn main() {
    let mut args = std::env::args_os().skip(1);
    let Some(program) = args.next() else {
        eprintln!("usage: fake-client PROGRAM [ARGS...]");
        std::process::exit(2);
    };
    match std::process::Command::new(&program).args(args).status() {
        Ok(status) => std::process::exit(status.code().unwrap_or(1)),
        Err(e) => {
            eprintln!("fake-client: {}: {e}", program.to_string_lossy());
            std::process::exit(127);
        }
    }
}
