//! `berth-mcp`: the MCP stdio server each editor spawns (SPEC §5).
//!
//! It only translates. It registers one agent session with `berthd` (which
//! resolves and pins the session's workspace), holds that registration open
//! for its whole life, and forwards every tool call to the daemon. stdout
//! carries only MCP; logs go to stderr (`BERTH_LOG` filter).

mod args;
mod link;
mod server;

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use berth_proto::pb;
use clap::Parser;

/// berth's MCP server: tells an agent session which workspace it belongs to
/// and gives it file tools confined to berth's folders.
#[derive(Debug, Parser)]
#[command(name = "berth-mcp", version)]
struct Cli {
    /// The session's directory (registrations may pass `${workspaceFolder}`).
    /// Else BERTH_CWD, else CLAUDE_PROJECT_DIR, else the working directory.
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging();
    let caller = match caller(cli.cwd) {
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
    let client_session_id = env_string("CLAUDE_CODE_SESSION_ID").unwrap_or_default();
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

/// A non-empty environment variable.
fn env_os(key: &str) -> Option<OsString> {
    std::env::var_os(key).filter(|v| !v.is_empty())
}

fn env_string(key: &str) -> Option<String> {
    env_os(key).map(|v| v.to_string_lossy().into_owned())
}

/// A registration template left unexpanded by a client that does not know
/// it (`${workspaceFolder}` taken literally) names no directory.
fn unexpanded(p: &std::ffi::OsStr) -> bool {
    p.to_string_lossy().contains("${")
}

/// The caller forwarded to the daemon: the session's directory, first found
/// of `--cwd`, `BERTH_CWD`, `CLAUDE_PROJECT_DIR` and the working directory,
/// made absolute; and the `BERTH_WORKSPACE` / `BERTH_EXTRA_HOME` pins.
fn caller(cli_cwd: Option<PathBuf>) -> Result<pb::Caller, String> {
    let mut candidates: Vec<(&str, OsString)> = Vec::new();
    if let Some(c) = cli_cwd {
        candidates.push(("--cwd", c.into_os_string()));
    }
    for key in ["BERTH_CWD", "CLAUDE_PROJECT_DIR"] {
        if let Some(v) = env_os(key) {
            candidates.push((key, v));
        }
    }
    let mut chosen = None;
    for (source, value) in candidates {
        if value.is_empty() {
            continue;
        }
        if unexpanded(&value) {
            tracing::warn!(
                "{source} is {:?}, an unexpanded template; ignoring it",
                value.to_string_lossy()
            );
            continue;
        }
        tracing::debug!(source, dir = %value.to_string_lossy(), "session directory");
        chosen = Some(PathBuf::from(value));
        break;
    }
    let here = std::env::current_dir();
    let dir = match (chosen, here) {
        (Some(d), _) if d.is_absolute() => d,
        (Some(d), Ok(here)) => here.join(d),
        (Some(d), Err(e)) => {
            return Err(format!(
                "{} is relative and the working directory is unreadable: {e}",
                d.display()
            ));
        }
        (None, Ok(here)) => here,
        (None, Err(e)) => return Err(format!("cannot read the working directory: {e}")),
    };
    let utf8 = |v: OsString, what: &str| {
        v.into_string().map_err(|v| {
            format!(
                "{what} ({}) is not valid UTF-8; berth handles UTF-8 paths and names only",
                v.to_string_lossy()
            )
        })
    };
    Ok(pb::Caller {
        cwd: utf8(dir.into_os_string(), "the session's directory")?,
        env_workspace: env_os("BERTH_WORKSPACE")
            .map(|v| utf8(v, "BERTH_WORKSPACE"))
            .transpose()?
            .unwrap_or_default(),
        extra_home: env_os("BERTH_EXTRA_HOME")
            .map(|v| utf8(v, "BERTH_EXTRA_HOME"))
            .transpose()?
            .unwrap_or_default(),
    })
}
