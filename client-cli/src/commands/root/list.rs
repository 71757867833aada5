//! `berth root list [W]`

use berth_proto::pb;
use clap::Args;

use crate::context::Ctx;
use crate::output::{self, CliError};

/// Arguments of `berth root list`.
#[derive(Args, Debug)]
pub struct ListArgs {
    /// Only this workspace's roots.
    pub workspace: Option<String>,
}

/// Runs `berth root list`.
pub async fn cmd_root_list(ctx: &mut Ctx, args: ListArgs) -> Result<(), CliError> {
    let req = pb::ListRootsRequest {
        workspace: args.workspace.unwrap_or_default(),
    };
    let reply = ctx
        .unary(req, |mut c, r| async move { c.list_roots(r).await })
        .await?;
    if ctx.json {
        let roots: Vec<_> = reply
            .roots
            .iter()
            .map(|r| serde_json::json!({"workspace": r.workspace, "path": r.path}))
            .collect();
        return output::json(&serde_json::json!({ "roots": roots }));
    }
    output::text(
        &reply
            .roots
            .iter()
            .map(|r| {
                use berth_vocab::text::escaped;
                format!("{}\t{}\n", escaped(&r.workspace), escaped(&r.path))
            })
            .collect::<String>(),
    )
}
