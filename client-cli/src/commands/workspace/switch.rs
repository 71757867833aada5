//! `berth workspace switch W`

use berth_proto::pb;

use super::NameArg;
use crate::context::Ctx;
use crate::output::{self, CliError};

/// Runs `berth workspace switch`.
pub async fn cmd_workspace_switch(ctx: &mut Ctx, args: NameArg) -> Result<(), CliError> {
    let req = pb::SwitchWorkspaceRequest { name: args.name };
    let w = ctx
        .unary(req, |mut c, r| async move { c.switch_workspace(r).await })
        .await?;
    if ctx.json {
        output::json(&super::info_json(&w))
    } else {
        output::text(&format!("switched to workspace {}\n", w.name))
    }
}
