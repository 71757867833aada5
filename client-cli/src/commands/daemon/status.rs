//! `berth daemon status`: never starts the daemon.

use berth_proto::client::{self, ClientError, Connection};
use berth_proto::paths;
use berth_proto::text::escaped;

use crate::context::Ctx;
use crate::output::{self, CliError};

/// Runs `berth daemon status`.
pub async fn cmd_daemon_status(ctx: &mut Ctx) -> Result<(), CliError> {
    let socket = paths::socket_path(&ctx.env).map_err(|e| CliError::failed(e.to_string()))?;
    let data_dir = paths::data_dir(&ctx.env)
        .map(|d| d.display().to_string())
        .unwrap_or_default();
    let status = match Connection::open_existing(&ctx.env).await? {
        Some(mut conn) => match conn.status().await {
            Ok(s) => Some(s),
            // A daemon killed a moment ago can still accept a connection it
            // will never answer; with its lock gone, it is not running.
            Err(ClientError::ConnectionLost { .. }) if !client::lock_is_held(&socket) => None,
            Err(e) => return Err(e.into()),
        },
        None => None,
    };
    if ctx.json {
        return output::json(&super::status_json(
            status.as_ref(),
            &socket.display().to_string(),
            &data_dir,
        ));
    }
    match status {
        Some(s) => output::text(&super::status_text(&s)),
        None => output::text(&format!(
            "berthd is not running\nsocket: {}\ndata dir: {}\n",
            escaped(&socket.display().to_string()),
            escaped(&data_dir)
        )),
    }
}
