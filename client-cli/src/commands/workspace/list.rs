//! `berth workspace list`

use berth_proto::pb;

use crate::context::Ctx;
use crate::output::{self, CliError};

/// Runs `berth workspace list`.
pub async fn cmd_workspace_list(ctx: &mut Ctx) -> Result<(), CliError> {
    let reply = ctx
        .conn()
        .await?
        .call(|mut c| async move { c.list_workspaces(pb::ListWorkspacesRequest {}).await })
        .await?;
    if ctx.json {
        return output::json(&serde_json::json!({
            "active": reply.active,
            "workspaces": reply.workspaces.iter().map(super::info_json).collect::<Vec<_>>(),
        }));
    }
    output::text(
        &reply
            .workspaces
            .iter()
            .map(super::info_text)
            .collect::<String>(),
    )
}
