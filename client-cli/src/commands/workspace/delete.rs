//! `berth workspace delete W [--purge]`

use berth_proto::pb;
use clap::Args;

use crate::context::Ctx;
use crate::output::{self, CliError};

/// Arguments of `berth workspace delete`.
#[derive(Args, Debug)]
pub struct DeleteArgs {
    /// The workspace to delete (not the active one).
    pub name: String,
    /// Also delete the files in its managed home.
    #[arg(long)]
    pub purge: bool,
}

/// Runs `berth workspace delete`.
pub async fn cmd_workspace_delete(ctx: &mut Ctx, args: DeleteArgs) -> Result<(), CliError> {
    let req = pb::DeleteWorkspaceRequest {
        name: args.name.clone(),
        purge: args.purge,
    };
    let reply = ctx
        .unary(req, |mut c, r| async move { c.delete_workspace(r).await })
        .await?;
    if ctx.json {
        return output::json(&serde_json::json!({
            "deleted": args.name,
            "purged": reply.purged,
            "notes": reply.notes,
        }));
    }
    output::text(&format!("deleted workspace {}\n", args.name))?;
    for n in &reply.notes {
        output::note(n);
    }
    Ok(())
}
