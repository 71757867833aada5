//! `berth root add W DIR [--allow-overlap]`

use std::path::PathBuf;

use berth_proto::pb;
use berth_vocab::text::escaped;
use clap::Args;

use crate::context::Ctx;
use crate::output::{self, CliError};

/// Arguments of `berth root add`.
#[derive(Args, Debug)]
pub struct AddArgs {
    /// The workspace.
    pub workspace: String,
    /// An existing folder (relative to the current directory).
    pub dir: PathBuf,
    /// Confirm sharing folders with other workspaces' roots.
    #[arg(long)]
    pub allow_overlap: bool,
}

/// Runs `berth root add`.
pub async fn cmd_root_add(ctx: &mut Ctx, args: AddArgs) -> Result<(), CliError> {
    let req = pb::RootRequest {
        caller: Some(ctx.caller()?),
        workspace: args.workspace,
        path: crate::commands::path_arg(Some(args.dir), "the folder")?,
        allow_overlap: args.allow_overlap,
    };
    let reply = ctx
        .unary(req, |mut c, r| async move { c.add_root(r).await })
        .await?;
    if ctx.json {
        output::json(&serde_json::json!({"workspace": reply.workspace, "path": reply.path}))
    } else {
        output::text(&format!(
            "approved {} as a root of {}\n",
            escaped(&reply.path),
            escaped(&reply.workspace)
        ))
    }
}
