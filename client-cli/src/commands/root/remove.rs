//! `berth root remove W DIR`

use std::path::PathBuf;

use berth_proto::pb;
use berth_vocab::text::escaped;
use clap::Args;

use crate::context::Ctx;
use crate::output::{self, CliError};

/// Arguments of `berth root remove`.
#[derive(Args, Debug)]
pub struct RemoveArgs {
    /// The workspace.
    pub workspace: String,
    /// The root's folder.
    pub dir: PathBuf,
}

/// Runs `berth root remove`.
pub async fn cmd_root_remove(ctx: &mut Ctx, args: RemoveArgs) -> Result<(), CliError> {
    let req = pb::RootRequest {
        caller: Some(ctx.caller()?),
        workspace: args.workspace,
        path: crate::commands::path_arg(Some(args.dir), "the folder")?,
        allow_overlap: false,
    };
    let reply = ctx
        .unary(req, |mut c, r| async move { c.remove_root(r).await })
        .await?;
    if ctx.json {
        output::json(&serde_json::json!({"workspace": reply.workspace, "path": reply.path}))
    } else {
        output::text(&format!(
            "removed root {} of {}\n",
            escaped(&reply.path),
            escaped(&reply.workspace)
        ))
    }
}
