//! `berth-mcp`: the MCP stdio server each editor spawns (docs/reference.md, "Agent sessions").
//!
//! It only translates. It registers one agent session with `berthd` (which
//! resolves and pins the session's workspace), holds that registration open
//! for its whole life, and forwards every tool call to the daemon. stdout
//! carries only MCP; logs go to stderr (`BERTH_LOG` filter).

// Tests write files freely; the product code replaces one only through `atomic` (clippy.toml).
#![cfg_attr(test, allow(clippy::disallowed_methods))]
mod ask;
mod caller;
mod link;
mod scan;
mod server;
mod stdio;
mod tool_list;
mod triage;

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
    #[cfg(windows)]
    berth_entry::keep_standard_handles();
    // Most clients start the server without arguments; clap's parser is only
    // built when there are some to read (or help to give).
    let cwd = if std::env::args_os().len() > 1 {
        Cli::parse().cwd
    } else {
        None
    };
    init_logging();
    let caller = match caller::caller(cwd) {
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
    let fmt = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false);
    // A bare level (or nothing) needs no directive parser: building an
    // `EnvFilter` is a tenth of a millisecond of every session's start.
    let _ = match bare_level(std::env::var_os("BERTH_LOG"), std::env::var_os("RUST_LOG")) {
        Some(level) => fmt.with_max_level(level).try_init(),
        None => {
            let filter = tracing_subscriber::EnvFilter::try_from_env("BERTH_LOG")
                .or_else(|_| tracing_subscriber::EnvFilter::try_from_default_env())
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
            fmt.with_env_filter(filter).try_init()
        }
    };
}

/// The level `BERTH_LOG` (else `RUST_LOG`) asks for when it is a bare level
/// name, or warnings when neither is set; `None` for anything a directive
/// parser must read.
fn bare_level(
    berth_log: Option<std::ffi::OsString>,
    rust_log: Option<std::ffi::OsString>,
) -> Option<tracing_subscriber::filter::LevelFilter> {
    let Some(spec) = berth_log.or(rust_log) else {
        return Some(tracing_subscriber::filter::LevelFilter::WARN);
    };
    match spec.to_str()? {
        "" => None,
        spec => spec.parse().ok(),
    }
}

fn env_string(key: &str) -> Option<String> {
    caller::env_os(key).map(|v| v.to_string_lossy().into_owned())
}

#[cfg(test)]
mod tests {
    use super::bare_level;
    use tracing_subscriber::filter::LevelFilter;

    #[test]
    fn a_bare_level_or_none_needs_no_directive_parser() {
        let v = |s: &str| Some(std::ffi::OsString::from(s));
        assert_eq!(bare_level(None, None), Some(LevelFilter::WARN));
        assert_eq!(bare_level(v("info"), None), Some(LevelFilter::INFO));
        assert_eq!(bare_level(v("DEBUG"), None), Some(LevelFilter::DEBUG));
        assert_eq!(bare_level(None, v("trace")), Some(LevelFilter::TRACE));
        assert_eq!(bare_level(v("off"), v("trace")), Some(LevelFilter::OFF));
        // Directives, an empty value and a broken BERTH_LOG (which falls back
        // to RUST_LOG) stay with the directive parser, as before.
        assert_eq!(bare_level(v("berth_mcp=debug"), None), None);
        assert_eq!(bare_level(v("warn,rmcp=info"), None), None);
        assert_eq!(bare_level(v(""), None), None);
        assert_eq!(bare_level(v("nonsense"), v("info")), None);
    }
}
