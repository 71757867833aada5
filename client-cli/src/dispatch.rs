//! Runs the parsed command: each subcommand's `cmd_*` function, given its arguments.

use clap::CommandFactory as _;

use crate::cli::{Cli, Command, DaemonCommand, RootCommand, SettingCommand, WorkspaceCommand};
use crate::commands::{
    claim, completions, daemon, doctor, exec, explain, init, install, man, path, prompt, resolve,
    root, sessions, setting, uninstall, workspace,
};
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
        Command::Completions(a) => completions::cmd_completions(&mut ctx, a, Cli::command()).await,
        Command::Man(a) => man::cmd_man(&mut ctx, a, Cli::command()).await,
    }
}
