//! One file per subcommand: its clap `Args` and a `cmd_*` function.

pub mod claim;
pub mod completions;
pub mod daemon;
pub mod doctor;
pub mod exec;
pub mod explain;
pub mod init;
pub mod install;
pub mod man;
pub mod path;
pub mod prompt;
pub mod resolve;
pub mod root;
pub mod sessions;
pub mod setting;
pub mod uninstall;
pub mod workspace;

use crate::cli::{Cli, Command, DaemonCommand, RootCommand, SettingCommand, WorkspaceCommand};
use crate::context::Ctx;
use crate::output::CliError;

/// Runs the parsed command.
pub async fn run(cli: Cli) -> Result<(), CliError> {
    let mut ctx = Ctx::new(cli.json);
    match cli.command {
        Command::Resolve(a) => resolve::cmd_resolve(&mut ctx, a).await,
        Command::Explain(a) => explain::cmd_explain(&mut ctx, a).await,
        Command::Claim(a) => claim::cmd_claim(&mut ctx, a).await,
        Command::Path(a) => path::cmd_path(&mut ctx, a).await,
        Command::Exec(a) => exec::cmd_exec(&mut ctx, a).await,
        Command::Prompt(a) => prompt::cmd_prompt(&mut ctx, a).await,
        Command::Init(a) => init::cmd_init(&mut ctx, a).await,
        Command::Workspace(w) => match w {
            WorkspaceCommand::List => workspace::list::cmd_workspace_list(&mut ctx).await,
            WorkspaceCommand::Show(a) => workspace::show::cmd_workspace_show(&mut ctx, a).await,
            WorkspaceCommand::Create(a) => {
                workspace::create::cmd_workspace_create(&mut ctx, a).await
            }
            WorkspaceCommand::Delete(a) => {
                workspace::delete::cmd_workspace_delete(&mut ctx, a).await
            }
            WorkspaceCommand::Switch(a) => {
                workspace::switch::cmd_workspace_switch(&mut ctx, a).await
            }
            WorkspaceCommand::Use(a) => workspace::use_::cmd_workspace_use(&mut ctx, a).await,
        },
        Command::Root(r) => match r {
            RootCommand::Add(a) => root::add::cmd_root_add(&mut ctx, a).await,
            RootCommand::Remove(a) => root::remove::cmd_root_remove(&mut ctx, a).await,
            RootCommand::List(a) => root::list::cmd_root_list(&mut ctx, a).await,
        },
        Command::Setting(s) => match s {
            SettingCommand::List => setting::list::cmd_setting_list(&mut ctx).await,
            SettingCommand::Get(a) => setting::get::cmd_setting_get(&mut ctx, a).await,
            SettingCommand::Set(a) => setting::set::cmd_setting_set(&mut ctx, a).await,
            SettingCommand::Unset(a) => setting::unset::cmd_setting_unset(&mut ctx, a).await,
        },
        Command::Daemon(d) => match d {
            DaemonCommand::Start => daemon::start::cmd_daemon_start(&mut ctx).await,
            DaemonCommand::Stop(a) => daemon::stop::cmd_daemon_stop(&mut ctx, a).await,
            DaemonCommand::Status => daemon::status::cmd_daemon_status(&mut ctx).await,
        },
        Command::Sessions(a) => sessions::cmd_sessions(&mut ctx, a).await,
        Command::Doctor(a) => doctor::cmd_doctor(&mut ctx, a).await,
        Command::Install(a) => install::cmd_install(&mut ctx, a).await,
        Command::Uninstall(a) => uninstall::cmd_uninstall(&mut ctx, a).await,
        Command::Completions(a) => completions::cmd_completions(&mut ctx, a).await,
        Command::Man(a) => man::cmd_man(&mut ctx, a).await,
    }
}

/// What an agent session in `path` (empty: the caller's cwd) would get, with `workspace` as
/// its pin (empty: none): one `Resolve` in the agent mode, as `exec` and `prompt` ask it.
/// With `open_home` the daemon also makes the workspace's home ready and names it.
pub async fn resolve_as_agent(
    ctx: &mut Ctx,
    path: String,
    workspace: String,
    open_home: bool,
) -> Result<berth_proto::pb::Resolution, CliError> {
    let req = berth_proto::pb::ResolveRequest {
        caller: Some(ctx.caller()?),
        path,
        workspace,
        mode: berth_proto::pb::Mode::Agent as i32,
        open_home,
    };
    Ok(ctx
        .unary(req, |mut c, r| async move { c.resolve(r).await })
        .await?
        .resolution
        .unwrap_or_default())
}

/// A path argument as the UTF-8 string the protocol carries.
pub fn path_arg(p: Option<std::path::PathBuf>, what: &str) -> Result<String, CliError> {
    match p {
        None => Ok(String::new()),
        Some(p) => crate::context::utf8(p.into_os_string(), what),
    }
}

/// The JSON shape of a resolution (docs/reference.md, "The CLI").
pub fn resolution_json(r: &berth_proto::pb::Resolution) -> serde_json::Value {
    use crate::output::nullable;
    serde_json::json!({
        "workspace": r.workspace,
        "reason": r.reason,
        "directory": r.directory,
        "project": nullable(&r.project),
        "project_file": nullable(&r.project_file),
        "proposal": nullable(&r.proposal),
        "notes": r.notes,
    })
}

/// A resolution as text, one `key: value` line each, every value escaped.
pub fn resolution_text(r: &berth_proto::pb::Resolution) -> String {
    use berth_proto::text::escaped;
    let mut s = format!(
        "workspace: {}\nreason: {}\ndirectory: {}\n",
        crate::output::bold(&escaped(&r.workspace)),
        escaped(&r.reason),
        escaped(&r.directory)
    );
    let mut line = |k: &str, v: &str| {
        if !v.is_empty() {
            s.push_str(&format!("{k}: {}\n", escaped(v)));
        }
    };
    line("project", &r.project);
    line("project_file", &r.project_file);
    line("proposal", &r.proposal);
    for n in &r.notes {
        line("note", n);
    }
    s
}
