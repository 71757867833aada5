//! `berth install <client>`: registers `berth-mcp` and berth's hooks in a
//! client's own config files (docs/decisions/0008-registering-clients.md).

use clap::Args;

use crate::context::Ctx;
use crate::output::{self, CliError};
use crate::relay::RootsFrom;
use berth_install::clients::{self, Edit, FileSpec, Wrapped};
use berth_install::files::{self, Action, Backup, Planned, Written};
use berth_install::{Client, Locations, Programs, Scope, json, toml};

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
    /// Register another MCP server, wrapped by `berth exec`, under this name
    /// instead of berth's own: `--exec NAME -- CMD [ARGS...]`. Its arguments
    /// may hold `{workspace}`, `{home}` and `{project}`.
    #[arg(long, value_name = "NAME", requires = "command")]
    pub exec: Option<String>,
    /// With --exec: the roots the wrapped server gets when it asks the
    /// client for them, written into the registration as `berth exec
    /// --roots`: the workspace's home, the project folder, or the client's
    /// own roots.
    #[arg(
        long,
        value_enum,
        value_name = "FROM",
        default_value = "home",
        requires = "exec"
    )]
    pub roots: RootsFrom,
    /// With --exec: the server's command and arguments, after `--`.
    #[arg(last = true, value_name = "CMD", requires = "exec")]
    pub command: Vec<String>,
}

/// Runs `berth install`.
pub async fn cmd_install(ctx: &mut Ctx, args: InstallArgs) -> Result<(), CliError> {
    let wrapped = match args.exec {
        Some(name) => Some(wrapped(name, args.command, args.roots)?),
        None => None,
    };
    run(
        ctx,
        args.client,
        args.scope,
        args.dry_run,
        Action::Install,
        wrapped.as_ref(),
    )
}

/// The server `berth exec` wraps, its name and command checked as `berth exec` will check them
/// (usage errors).
pub fn wrapped(name: String, command: Vec<String>, roots: RootsFrom) -> Result<Wrapped, CliError> {
    let plain = (1..=64).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if !plain {
        return Err(CliError::usage(format!(
            "{name:?} cannot name a server: use 1 to 64 letters, digits, `-` or `_`"
        )));
    }
    if name == json::SERVER_NAME {
        return Err(CliError::usage(
            "\"berth\" is berth's own server; give the wrapped server another name",
        ));
    }
    // What `berth exec` would refuse when the client starts the server
    // is refused now, while the user is at the terminal.
    let words: Vec<std::ffi::OsString> = command.iter().map(Into::into).collect();
    super::exec::check_command(&words)?;
    Ok(Wrapped {
        name,
        command,
        roots: roots.word(),
    })
}

/// Install and uninstall: plan every file, refuse before writing anything
/// when one is malformed, then write and report.
pub fn run(
    ctx: &Ctx,
    client: Client,
    scope: Scope,
    dry_run: bool,
    action: Action,
    wrapped: Option<&Wrapped>,
) -> Result<(), CliError> {
    let loc = Locations::from_process().map_err(CliError::failed)?;
    let programs = match (Programs::find(), action, wrapped) {
        (Ok(p), _, _) => p,
        // Uninstall recognises berth's entries by name, not by path, and a
        // wrapped server names `berth` itself.
        (Err(_), Action::Uninstall, _) | (Err(_), _, Some(_)) => Programs {
            mcp: "berth-mcp".into(),
            hook: "berth-hook".into(),
        },
        (Err(e), Action::Install, None) => return Err(CliError::failed(e)),
    };
    let specs = match wrapped {
        Some(w) => {
            // Uninstall recognises the entry by its name and shape, not by path.
            let berth = std::env::current_exe().unwrap_or_else(|_| "berth".into());
            let specs = clients::exec_files(client, scope, &loc, &berth, w)
                .map_err(|e| CliError::usage(e.0))?;
            for spec in &specs {
                refuse_the_users_entry(spec, &w.name, action)?;
            }
            specs
        }
        None => clients::files(client, scope, &loc, &programs).map_err(|e| CliError::usage(e.0))?,
    };
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
    let mut written = Vec::new();
    for p in &plans {
        written.push(if dry_run {
            Written::default()
        } else {
            p.write().map_err(CliError::failed)?
        });
    }
    if action == Action::Uninstall && !dry_run {
        // After every file is written: two files may share a folder.
        for (p, w) in plans.iter().zip(&mut written) {
            match p.remove_left_folders() {
                Ok(removed) => w.folders = removed,
                Err(e) => output::warning(&format!("{e}; the files are unregistered")),
            }
        }
    }
    report(
        ctx, client, scope, dry_run, action, wrapped, &plans, &written,
    )
}

/// Refuses to touch an entry named `name` that is not a `berth exec`
/// wrapper: the user registered it, and it is theirs. A file that cannot be
/// read or parsed is left for the plan to report.
fn refuse_the_users_entry(spec: &FileSpec, name: &str, action: Action) -> Result<(), CliError> {
    let Ok(Some(text)) = files::read(spec) else {
        return Ok(());
    };
    let theirs = match &spec.edit {
        Edit::Json(json::JsonEdit::Mcp { container, .. }) => json::parse(&text, spec.reader)
            .ok()
            .and_then(|doc| doc.get(*container)?.get(name).cloned())
            .is_some_and(|e| !json::is_exec_entry(&e)),
        Edit::Toml(_) => toml::parse(&text)
            .ok()
            .and_then(|doc| doc.get("mcp_servers")?.get(name).cloned())
            .is_some_and(|t| !toml::is_exec_table(&t)),
        Edit::Json(_) => false,
    };
    if !theirs {
        return Ok(());
    }
    let e = CliError::failed(format!(
        "{} already has a server named {name} that berth did not register; nothing was changed",
        spec.path.display()
    ));
    Err(match action {
        Action::Install => {
            e.hint("choose another name with --exec, or remove that entry yourself first")
        }
        Action::Uninstall => {
            e.hint("uninstall --exec removes only servers that install --exec registered")
        }
    })
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

#[allow(clippy::too_many_arguments)]
fn report(
    ctx: &Ctx,
    client: Client,
    scope: Scope,
    dry_run: bool,
    action: Action,
    wrapped: Option<&Wrapped>,
    plans: &[Planned],
    written: &[Written],
) -> Result<(), CliError> {
    let changed = plans.iter().any(Planned::changed);
    let folder_action = match action {
        Action::Install => "created",
        Action::Uninstall => "removed",
    };
    if ctx.json {
        let path = |p: &Option<std::path::PathBuf>| {
            p.as_ref()
                .map(|p| serde_json::Value::String(p.display().to_string()))
                .unwrap_or(serde_json::Value::Null)
        };
        let list: Vec<_> = plans
            .iter()
            .zip(written)
            .map(|(p, w)| {
                let folders: Vec<_> = w
                    .folders
                    .iter()
                    .map(|f| serde_json::json!({"folder": f.display().to_string(), "action": folder_action}))
                    .collect();
                serde_json::json!({
                    "file": p.path.display().to_string(),
                    "changed": p.changed(),
                    "action": p.action(),
                    "backup": path(&w.backup),
                    "restored": matches!(p.backup, Backup::Restore(_)) && !dry_run,
                    "diff": p.diff(),
                    "folders": folders,
                })
            })
            .collect();
        return output::json(&serde_json::json!({
            "client": client.name(),
            "server": wrapped.map_or(json::SERVER_NAME, |w| w.name.as_str()),
            "scope": if scope == Scope::User { "user" } else { "project" },
            "file": plans.first().map(|p| p.path.display().to_string()),
            "changed": changed,
            "backup": path(&written.first().and_then(|w| w.backup.clone())),
            "dry_run": dry_run,
            "files": list,
        }));
    }
    let mut text = String::new();
    for (p, w) in plans.iter().zip(written) {
        let b = &w.backup;
        if dry_run {
            if p.changed() {
                text.push_str(&p.diff());
            } else {
                text.push_str(&format!("{}: no change\n", p.path.display()));
            }
            continue;
        }
        if action == Action::Install {
            for f in &w.folders {
                text.push_str(&format!("created folder {}\n", f.display()));
            }
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
    if action == Action::Uninstall {
        for f in written.iter().flat_map(|w| &w.folders) {
            text.push_str(&format!(
                "removed folder {} (berth install created it)\n",
                f.display()
            ));
        }
    }
    output::text(&text)?;
    if dry_run {
        output::note("dry run: nothing was written");
    } else if changed && action == Action::Install {
        match wrapped {
            Some(w) => output::note(&format!(
                "restart {}; its server {} now starts through `berth exec`, in the workspace of the folder each session runs in",
                client.name(),
                w.name
            )),
            None => output::note(clients::after_install_hint(client)),
        }
    } else if !changed && written.iter().all(|w| w.folders.is_empty()) {
        let what = wrapped.map_or("berth".to_string(), |w| format!("the server {}", w.name));
        output::note(&match action {
            Action::Install => format!("{what} was already registered; nothing changed"),
            Action::Uninstall => format!("{what} was not registered; nothing changed"),
        });
    }
    Ok(())
}
