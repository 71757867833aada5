//! `berth workspace create W [--home DIR]`

use std::path::PathBuf;

use berth_proto::pb;
use clap::Args;

use crate::context::Ctx;
use crate::output::{self, CliError};

/// Arguments of `berth workspace create`.
#[derive(Args, Debug)]
pub struct CreateArgs {
    /// The new workspace's name: 1 to 40 of a-z, 0-9 and -, not starting with -.
    pub name: String,
    /// Keep the workspace's files in this existing folder (an absolute path)
    /// instead of berth's data folder.
    #[arg(long)]
    pub home: Option<PathBuf>,
}

/// Runs `berth workspace create`.
pub async fn cmd_workspace_create(ctx: &mut Ctx, args: CreateArgs) -> Result<(), CliError> {
    let req = pb::CreateWorkspaceRequest {
        caller: Some(ctx.caller()?),
        name: args.name,
        home: crate::commands::path_arg(args.home, "--home")?,
    };
    let w = ctx
        .unary(req, |mut c, r| async move { c.create_workspace(r).await })
        .await?;
    // On stderr either way, so a script reading the JSON still sees them.
    for warning in &w.warnings {
        output::warning(warning);
    }
    if ctx.json {
        let mut v = super::info_json(&w);
        // Present only when there is something to say, like `error` and `notes`.
        if !w.warnings.is_empty() {
            v["warnings"] = w.warnings.clone().into();
        }
        output::json(&v)
    } else {
        output::text(&format!("created workspace {}\n", w.name))?;
        output::text(&super::info_text(&w))
    }
}
