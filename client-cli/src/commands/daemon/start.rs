//! `berth daemon start`

use crate::context::Ctx;
use crate::output::{self, CliError};

/// Runs `berth daemon start`: starts berthd unless it runs, and shows it.
pub async fn cmd_daemon_start(ctx: &mut Ctx) -> Result<(), CliError> {
    let status = ctx.conn().await?.status().await?;
    let fallback = super::fallback(&ctx.env, Some(&status));
    if ctx.json {
        output::json(&super::status_json(
            Some(&status),
            "",
            "",
            fallback.as_ref(),
        ))
    } else {
        output::text(&super::status_text(&status, fallback.as_ref()))
    }
}
