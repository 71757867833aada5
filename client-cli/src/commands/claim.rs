//! `berth claim --cwd DIR... [--workspace W]` (docs/reference.md, "Conversations").

use std::path::PathBuf;

use berth_proto::pb;
use clap::{ArgAction, Args};

use crate::context::Ctx;
use crate::output::{self, CliError};

/// Arguments of `berth claim`.
#[derive(Args, Debug)]
pub struct ClaimArgs {
    /// The conversation's working directories: `--cwd A B` or `--cwd A
    /// --cwd B`.
    #[arg(
        long = "cwd",
        value_name = "DIR",
        required = true,
        num_args = 1..,
        action = ArgAction::Append
    )]
    pub cwds: Vec<PathBuf>,
    /// Answer yes or no for this workspace only.
    #[arg(long, short)]
    pub workspace: Option<String>,
}

/// Runs `berth claim`.
pub async fn cmd_claim(ctx: &mut Ctx, args: ClaimArgs) -> Result<(), CliError> {
    let cwds = args
        .cwds
        .into_iter()
        .map(|p| super::path_arg(Some(p), "--cwd"))
        .collect::<Result<Vec<_>, _>>()?;
    let req = pb::ClaimRequest {
        caller: Some(ctx.caller()?),
        cwds,
        workspace: args.workspace.clone().unwrap_or_default(),
    };
    let reply = ctx
        .unary(req, |mut c, r| async move { c.claim(r).await })
        .await?;
    match (args.workspace, ctx.json) {
        (Some(w), true) => {
            output::json(&serde_json::json!({"workspace": w, "allowed": reply.allowed}))
        }
        (Some(_), false) => output::text(if reply.allowed { "yes\n" } else { "no\n" }),
        (None, true) => output::json(&serde_json::json!({"workspaces": reply.workspaces})),
        (None, false) => output::text(
            &reply
                .workspaces
                .iter()
                .map(|w| format!("{}\n", berth_vocab::text::escaped(w)))
                .collect::<String>(),
        ),
    }
}
