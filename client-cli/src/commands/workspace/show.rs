//! `berth workspace show W`

use berth_proto::pb;

use super::NameArg;
use crate::context::Ctx;
use crate::output::{self, CliError};

/// Runs `berth workspace show`.
pub async fn cmd_workspace_show(ctx: &mut Ctx, args: NameArg) -> Result<(), CliError> {
    let reply = ctx
        .conn()
        .await?
        .call(|mut c| async move { c.list_workspaces(pb::ListWorkspacesRequest {}).await })
        .await?;
    let Some(w) = reply.workspaces.iter().find(|w| w.name == args.name) else {
        let names: Vec<&str> = reply.workspaces.iter().map(|w| w.name.as_str()).collect();
        return Err(CliError::failed(berth_vocab::text::no_workspace(
            &args.name, &names,
        )));
    };
    // Its home cannot be used: this workspace fails, with its own message and the way out.
    if !w.error.is_empty() {
        return Err(CliError::failed(w.error.clone()));
    }
    if ctx.json {
        output::json(&super::info_json(w))
    } else {
        output::text(&super::info_text(w))
    }
}
