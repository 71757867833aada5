//! `berth resolve [PATH] [--workspace W] [--agent]`

use std::path::PathBuf;

use berth_proto::pb;
use clap::Args;

use crate::context::Ctx;
use crate::output::{self, CliError};

/// Arguments of `berth resolve`.
#[derive(Args, Debug)]
pub struct ResolveArgs {
    /// The directory (or a file, meaning its folder); default: the current directory.
    pub path: Option<PathBuf>,
    /// Use this workspace explicitly (reason `argument`).
    #[arg(long, short)]
    pub workspace: Option<String>,
    /// Resolve as an agent session would (the `workspace.unassigned` default).
    #[arg(long)]
    pub agent: bool,
}

/// Builds the request shared by `resolve` and `explain`.
pub fn request(
    ctx: &Ctx,
    path: Option<PathBuf>,
    workspace: Option<String>,
    agent: bool,
) -> Result<pb::ResolveRequest, CliError> {
    Ok(pb::ResolveRequest {
        caller: Some(ctx.caller()?),
        path: super::path_arg(path, "the path")?,
        workspace: workspace.unwrap_or_default(),
        mode: if agent {
            pb::Mode::Agent
        } else {
            pb::Mode::Cli
        } as i32,
        open_home: false,
    })
}

/// Runs `berth resolve`.
pub async fn cmd_resolve(ctx: &mut Ctx, args: ResolveArgs) -> Result<(), CliError> {
    let req = request(ctx, args.path, args.workspace, args.agent)?;
    let reply = ctx
        .unary(req, |mut c, r| async move { c.resolve(r).await })
        .await?;
    let r = reply.resolution.unwrap_or_default();
    if ctx.json {
        output::json(&super::resolution_json(&r))
    } else {
        output::text(&super::resolution_text(&r))
    }
}
