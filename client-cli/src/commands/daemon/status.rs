//! `berth daemon status`: never starts the daemon.

use berth_client::client::{self, ClientError, Connection};
use berth_client::paths;
use berth_vocab::text::escaped;

use crate::context::Ctx;
use crate::output::{self, CliError};

/// Runs `berth daemon status`.
pub async fn cmd_daemon_status(ctx: &mut Ctx) -> Result<(), CliError> {
    let socket = paths::socket_path(&ctx.env).map_err(|e| CliError::failed(e.to_string()))?;
    let data_dir = paths::data_dir(&ctx.env)
        .map(|d| d.display().to_string())
        .unwrap_or_default();
    let answer = match Connection::open_existing(&ctx.env).await {
        Ok(Some(mut conn)) => conn.status().await.map(Some),
        Ok(None) => Ok(None),
        Err(e) => Err(e),
    };
    // Never the lock in a refused folder: the record's socket then (ADR 0042).
    let locked = client::lock_socket(&ctx.env).filter(|s| client::lock_is_held(s));
    let status = match answer {
        Ok(Some(s)) => Some(s),
        // No answer, but the lock is held: a process still runs (stopping,
        // starting, or stuck), and saying "not running" would invite a second
        // daemon or a wrong conclusion.
        _ if locked.is_some() => {
            let locked = locked.unwrap_or_default();
            return silent(ctx, client::daemon_pid(&locked), &locked, &data_dir);
        }
        // A daemon killed a moment ago can still accept a connection it
        // will never answer; with its lock gone, it is not running.
        Ok(None) | Err(ClientError::ConnectionLost { .. }) => None,
        Err(e) => return Err(e.into()),
    };
    let fallback = super::fallback(&ctx.env, status.as_ref());
    if ctx.json {
        return output::json(&super::status_json(
            status.as_ref(),
            &socket.display().to_string(),
            &data_dir,
            fallback.as_ref(),
        ));
    }
    match status {
        Some(s) => output::text(&super::status_text(&s, fallback.as_ref())),
        None => output::text(&format!(
            "berthd is not running\nsocket: {}\n{}data dir: {}\n",
            escaped(&socket.display().to_string()),
            fallback
                .map(|f| super::fallback_line(&f, false))
                .unwrap_or_default(),
            escaped(&data_dir)
        )),
    }
}

/// A daemon that holds its lock but gave no status.
fn silent(
    ctx: &Ctx,
    pid: Option<u32>,
    socket: &std::path::Path,
    data_dir: &str,
) -> Result<(), CliError> {
    if ctx.json {
        return output::json(&serde_json::json!({
            "running": true,
            "answering": false,
            "pid": pid,
            "version": null,
            "socket": socket.display().to_string(),
            "data_dir": data_dir,
        }));
    }
    let pid = pid.map(|p| format!(" (pid {p})")).unwrap_or_default();
    output::text(&format!(
        "berthd{pid} is running but does not answer (it may be stopping or starting); if it stays so: berth daemon stop --force\nsocket: {}\ndata dir: {data_dir}\n",
        socket.display()
    ))
}
