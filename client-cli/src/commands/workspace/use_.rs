//! `berth workspace use [W] [--allow-overlap]`: use a workspace for the
//! project around the current directory (else the directory itself).

use std::io::IsTerminal;

use berth_proto::pb;
use berth_vocab::codes::Code;
use berth_vocab::text::escaped;
use clap::Args;

use crate::context::Ctx;
use crate::output::{self, CliError};

/// Arguments of `berth workspace use`.
#[derive(Args, Debug)]
pub struct UseArgs {
    /// The workspace (created if new). Without it, berth asks, on a terminal only.
    pub name: Option<String>,
    /// Confirm sharing folders with other workspaces' roots.
    #[arg(long)]
    pub allow_overlap: bool,
}

/// Runs `berth workspace use`.
pub async fn cmd_workspace_use(ctx: &mut Ctx, args: UseArgs) -> Result<(), CliError> {
    let (mut name, typed) = match args.name {
        Some(n) => (n, false),
        None => pick(ctx).await?,
    };
    let caller = ctx.caller()?;
    let reply = loop {
        let req = pb::UseWorkspaceRequest {
            caller: Some(caller.clone()),
            name: name.clone(),
            allow_overlap: args.allow_overlap,
            mode: pb::Mode::Cli as i32,
        };
        let conn = ctx.conn().await?;
        match conn
            .call(|mut c| {
                let r = req.clone();
                async move { c.use_workspace(r).await }
            })
            .await
        {
            Ok(reply) => break reply,
            // A name typed into the picker that the daemon's name rule
            // refuses: say why and ask again, rather than end the command.
            Err(e) if typed && e.code() == Some(Code::Invalid) => {
                eprintln!("{}", escaped(&e.to_string()));
                name = ask_new_name()?;
            }
            Err(e) => return Err(e.into()),
        }
    };
    if ctx.json {
        return output::json(&serde_json::json!({
            "workspace": name,
            "folder": output::nullable(&reply.folder),
            "created": reply.created,
            "root_added": reply.root_added,
            "project_file": output::nullable(&reply.project_file),
            "notes": reply.notes,
            "resolution": reply.resolution.as_ref().map(crate::commands::resolution_json),
        }));
    }
    let (name, folder) = (escaped(&name), escaped(&reply.folder));
    let mut s = format!("using workspace {name} for {folder}\n");
    if reply.created {
        s.push_str(&format!("created workspace {name}\n"));
    }
    if reply.root_added {
        s.push_str(&format!("approved {folder} as a root of {name}\n"));
    }
    output::text(&s)?;
    for n in &reply.notes {
        output::note(n);
    }
    Ok(())
}

/// Asks which workspace to use, listing the workspaces and any proposal.
/// Returns the name and whether it was typed as a new one. Esc or `q`
/// cancels: exit 1, nothing written.
async fn pick(ctx: &mut Ctx) -> Result<(String, bool), CliError> {
    if !(std::io::stdin().is_terminal() && std::io::stderr().is_terminal()) {
        return Err(CliError::usage(
            "berth workspace use needs a workspace name when it is not run on a terminal",
        )
        .hint("berth workspace use <name> [--allow-overlap]"));
    }
    let caller = ctx.caller()?;
    let conn = ctx.conn().await?;
    let list = conn
        .call(|mut c| async move { c.list_workspaces(pb::ListWorkspacesRequest {}).await })
        .await?;
    let here = conn
        .call(|mut c| {
            let caller = caller.clone();
            async move {
                c.resolve(pb::ResolveRequest {
                    caller: Some(caller),
                    ..Default::default()
                })
                .await
            }
        })
        .await?
        .resolution
        .unwrap_or_default();
    let mut items: Vec<String> = list.workspaces.iter().map(|w| w.name.clone()).collect();
    let mut default = items.iter().position(|n| *n == here.workspace).unwrap_or(0);
    if !here.proposal.is_empty() {
        eprintln!(
            "{} proposes workspace {:?}.",
            escaped(&here.project_file),
            here.proposal
        );
        match items.iter().position(|n| *n == here.proposal) {
            Some(i) => default = i,
            None => {
                items.insert(0, here.proposal.clone());
                default = 0;
            }
        }
    }
    let new_label = "(a new workspace…)".to_string();
    items.push(new_label);
    let choice = dialoguer::Select::new()
        .with_prompt(format!(
            "Which workspace should {} use?",
            escaped(if here.project.is_empty() {
                &here.directory
            } else {
                &here.project
            })
        ))
        .items(&items)
        .default(default)
        .interact_opt()
        .map_err(|e| CliError::failed(format!("reading your choice: {e}")))?
        .ok_or_else(cancelled)?;
    if choice + 1 < items.len() {
        return Ok((items[choice].clone(), false));
    }
    Ok((ask_new_name()?, true))
}

/// Asks for a new workspace's name; the daemon judges it.
fn ask_new_name() -> Result<String, CliError> {
    dialoguer::Input::<String>::new()
        .with_prompt("New workspace name (Ctrl-C cancels)")
        .interact_text()
        .map_err(|e| CliError::failed(format!("reading the name: {e}")))
}

fn cancelled() -> CliError {
    CliError::failed("cancelled; nothing was changed")
        .hint("berth workspace use <name> [--allow-overlap]")
}
