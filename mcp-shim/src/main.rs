//! `berth-mcp`: the MCP stdio server each editor spawns (docs/reference.md, "Agent sessions").
//!
//! It only translates. It registers one agent session with `berthd` (which
//! resolves and pins the session's workspace), holds that registration open
//! for its whole life, and forwards every tool call to the daemon. stdout
//! carries only MCP; logs go to stderr (`BERTH_LOG` filter).

mod caller;
mod link;
mod server;
mod tool_list;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

/// berth's MCP server: tells an agent session which workspace it belongs to
/// and gives it file tools confined to berth's folders.
#[derive(Debug, Parser)]
#[command(name = "berth-mcp", version)]
struct Cli {
    /// The session's directory (registrations may pass `${workspaceFolder}`).
    /// Else BERTH_CWD, else CLAUDE_PROJECT_DIR, else the working directory;
    /// one that is not an existing directory is skipped, with a warning.
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging();
    let caller = match caller::caller(cli.cwd) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("berth-mcp: {e}");
            return ExitCode::FAILURE;
        }
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("berth-mcp: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    // The client's own session id, equal to its hooks' `session_id`, so a
    // question asked by the session-start hook is not asked again here.
    let client_session_id = env_string("CLAUDE_CODE_SESSION_ID")
        .or_else(|| env_string("COPILOT_AGENT_SESSION_ID"))
        .unwrap_or_default();
    match runtime.block_on(server::serve(caller, client_session_id)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!("{e}");
            eprintln!("berth-mcp: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Logs to stderr only (stdout is the protocol), filtered by `BERTH_LOG`, else `RUST_LOG`.
fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("BERTH_LOG")
        .or_else(|_| tracing_subscriber::EnvFilter::try_from_default_env())
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .try_init();
}

fn env_string(key: &str) -> Option<String> {
    caller::env_os(key).map(|v| v.to_string_lossy().into_owned())
}
