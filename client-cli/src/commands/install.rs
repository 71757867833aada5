//! `berth install <client>`: registers `berth-mcp` and berth's hooks in a
//! client's own config files (docs/decisions/0008-registering-clients.md).

use clap::Args;

use crate::context::Ctx;
use crate::install::clients::{self, FileSpec};
use crate::install::files::{self, Action, Backup, Planned};
use crate::install::{Client, Locations, Programs, Scope};
use crate::output::{self, CliError};

/// Arguments of `berth install`.
#[derive(Args, Debug)]
pub struct InstallArgs {
    /// The client to register with.
    #[arg(value_enum)]
    pub client: Client,
    /// Print the change as a unified diff and write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// The user's configuration (every project), or the project in the
    /// current directory.
    #[arg(long, value_enum, default_value = "user")]
    pub scope: Scope,
}

/// Runs `berth install`.
pub async fn cmd_install(ctx: &mut Ctx, args: InstallArgs) -> Result<(), CliError> {
    run(ctx, args.client, args.scope, args.dry_run, Action::Install)
}

/// Install and uninstall: plan every file, refuse before writing anything
/// when one is malformed, then write and report.
pub fn run(
    ctx: &Ctx,
    client: Client,
    scope: Scope,
    dry_run: bool,
    action: Action,
) -> Result<(), CliError> {
    let loc = Locations::from_process().map_err(CliError::failed)?;
    let programs = match (Programs::find(), action) {
        (Ok(p), _) => p,
        // Uninstall recognises berth's entries by name, not by path.
        (Err(_), Action::Uninstall) => Programs {
            mcp: "berth-mcp".into(),
            hook: "berth-hook".into(),
        },
        (Err(e), Action::Install) => return Err(CliError::failed(e)),
    };
    let specs = clients::files(client, scope, &loc, &programs).map_err(|e| CliError::usage(e.0))?;
    let mut plans = Vec::new();
    for spec in &specs {
        let keep = action == Action::Uninstall && still_used(spec, scope, &loc, &programs);
        let plan = files::plan(spec, action, keep).map_err(|why| {
            CliError::failed(format!(
                "cannot {} berth: {why}. Nothing was changed",
                if action == Action::Install {
                    "register"
                } else {
                    "unregister"
                }
            ))
            .hint("fix the file (or move it aside) and run the command again")
        })?;
        plans.push(plan);
    }
    let mut backups = Vec::new();
    for p in &plans {
        backups.push(if dry_run {
            None
        } else {
            p.write().map_err(CliError::failed)?
        });
    }
    report(ctx, client, scope, dry_run, action, &plans, &backups)
}

/// Whether a shared file's entries must stay on uninstall: the other client
/// using them is still registered in the same scope.
fn still_used(spec: &FileSpec, scope: Scope, loc: &Locations, programs: &Programs) -> bool {
    let Some(other) = spec.shared_with else {
        return false;
    };
    clients::files(other, scope, loc, programs)
        .ok()
        .and_then(|f| f.into_iter().next())
        .is_some_and(|mcp| files::has_server(&mcp))
}

fn report(
    ctx: &Ctx,
    client: Client,
    scope: Scope,
    dry_run: bool,
    action: Action,
    plans: &[Planned],
    backups: &[Option<std::path::PathBuf>],
) -> Result<(), CliError> {
    let changed = plans.iter().any(Planned::changed);
    if ctx.json {
        let path = |p: &Option<std::path::PathBuf>| {
            p.as_ref()
                .map(|p| serde_json::Value::String(p.display().to_string()))
                .unwrap_or(serde_json::Value::Null)
        };
        let list: Vec<_> = plans
            .iter()
            .zip(backups)
            .map(|(p, b)| {
                serde_json::json!({
                    "file": p.path.display().to_string(),
                    "changed": p.changed(),
                    "action": p.action(),
                    "backup": path(b),
                    "restored": matches!(p.backup, Backup::Restore(_)) && !dry_run,
                    "diff": p.diff(),
                })
            })
            .collect();
        return output::json(&serde_json::json!({
            "client": client.name(),
            "scope": if scope == Scope::User { "user" } else { "project" },
            "file": plans.first().map(|p| p.path.display().to_string()),
            "changed": changed,
            "backup": path(backups.first().unwrap_or(&None)),
            "dry_run": dry_run,
            "files": list,
        }));
    }
    let mut text = String::new();
    for (p, b) in plans.iter().zip(backups) {
        if dry_run {
            if p.changed() {
                text.push_str(&p.diff());
            } else {
                text.push_str(&format!("{}: no change\n", p.path.display()));
            }
            continue;
        }
        text.push_str(&format!("{} {}", p.action(), p.path.display()));
        match (&p.backup, b) {
            (Backup::Restore(_), _) if p.changed() => {
                text.push_str(" (its bytes from before install; backup removed)")
            }
            (Backup::Keep(_), Some(b)) => text.push_str(&format!(
                " (it changed since install, so the original stays in {})",
                b.display()
            )),
            (_, Some(b)) => text.push_str(&format!(" (backup: {})", b.display())),
            _ => {}
        }
        text.push('\n');
    }
    output::text(&text)?;
    if dry_run {
        output::note("dry run: nothing was written");
    } else if changed && action == Action::Install {
        output::note(clients::after_install_hint(client));
    } else if !changed {
        output::note(match action {
            Action::Install => "berth was already registered; nothing changed",
            Action::Uninstall => "berth was not registered; nothing changed",
        });
    }
    Ok(())
}
