//! The command line's shape. These structs validate and touch nothing;
//! `commands` does the work.

use clap::{Parser, Subcommand};

use crate::commands;

/// berth: which workspace does this directory belong to, why, and which
/// folder may its tools touch?
#[derive(Parser, Debug)]
#[command(name = "berth", version, propagate_version = true)]
// Help and errors say `berth`, as the docs do, not the file's `berth.exe`.
#[cfg_attr(windows, command(bin_name = "berth"))]
pub struct Cli {
    /// Print one JSON document on stdout instead of text.
    #[arg(long, global = true)]
    pub json: bool,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Show which workspace a directory belongs to, and why.
    Resolve(commands::resolve::ResolveArgs),
    /// Draw the walk behind a resolution: what was found where, and which rule decided.
    Explain(commands::explain::ExplainArgs),
    /// Manage workspaces.
    #[command(subcommand)]
    Workspace(WorkspaceCommand),
    /// Manage roots: the folders this device approved for a workspace.
    #[command(subcommand)]
    Root(RootCommand),
    /// Read and change settings.
    #[command(subcommand)]
    Setting(SettingCommand),
    /// List the workspaces that may learn a conversation with these working directories.
    Claim(commands::claim::ClaimArgs),
    /// Show how a tool path resolves: which workspace's folder, and where.
    Path(commands::path::PathArgs),
    /// Run a command with the workspace an agent session here would get:
    /// in its environment (BERTH_WORKSPACE, BERTH_HOME, BERTH_PROJECT,
    /// BERTH_REASON) and in its arguments ({workspace}, {home}, {project}).
    Exec(commands::exec::ExecArgs),
    /// Print a short segment for shell prompts: the workspace an agent
    /// session here would use, and `?` when it would ask.
    Prompt(commands::prompt::PromptArgs),
    /// Print the lines that add `berth prompt` to a shell's prompt.
    Init(commands::init::InitArgs),
    /// Start, stop or inspect the daemon.
    #[command(subcommand)]
    Daemon(DaemonCommand),
    /// List the agent sessions: their directory, workspace and why, and scratch folder.
    Sessions(commands::sessions::SessionsArgs),
    /// Check that berth works here: the daemon, the data folder, each registered client.
    Doctor(commands::doctor::DoctorArgs),
    /// Register berth's MCP server and hooks with a coding client.
    Install(commands::install::InstallArgs),
    /// Remove what `berth install` registered with a client.
    Uninstall(commands::uninstall::UninstallArgs),
    /// Print a shell completion script.
    Completions(commands::completions::CompletionsArgs),
    /// Print the man page, or write one page per command into a folder.
    Man(commands::man::ManArgs),
}

#[derive(Subcommand, Debug)]
pub enum WorkspaceCommand {
    /// List the workspaces.
    List,
    /// Show one workspace.
    Show(commands::workspace::NameArg),
    /// Create a workspace.
    Create(commands::workspace::create::CreateArgs),
    /// Delete a workspace (its files are kept unless --purge).
    Delete(commands::workspace::delete::DeleteArgs),
    /// Make a workspace the device's active one.
    Switch(commands::workspace::NameArg),
    /// Use a workspace for the project around the current directory.
    Use(commands::workspace::use_::UseArgs),
}

#[derive(Subcommand, Debug)]
pub enum RootCommand {
    /// Approve a folder as a root of a workspace.
    Add(commands::root::add::AddArgs),
    /// Remove a root.
    Remove(commands::root::remove::RemoveArgs),
    /// List roots, of one workspace or of all.
    List(commands::root::list::ListArgs),
}

#[derive(Subcommand, Debug)]
pub enum SettingCommand {
    /// List every setting: its value, its default and what it accepts.
    List,
    /// Print a setting (its default and what it accepts on stderr).
    Get(commands::setting::KeyArg),
    /// Change a setting.
    Set(commands::setting::set::SetArgs),
    /// Unset a setting.
    Unset(commands::setting::KeyArg),
}

#[derive(Subcommand, Debug)]
pub enum DaemonCommand {
    /// Start the daemon if it is not running.
    Start,
    /// Stop the daemon.
    Stop(commands::daemon::stop::StopArgs),
    /// Show whether the daemon runs, and where.
    Status,
}

// The CLI's definition is whole only here, so a check over every command lives beside it
// (commands/ names nothing of this file).
#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::Cli;
    use crate::commands::man;

    /// Every command path of the CLI (`["workspace", "list"]`, ...), with
    /// each command's long options, as clap knows them.
    fn commands(cmd: &clap::Command, words: &[String], out: &mut Vec<(Vec<String>, Vec<String>)>) {
        for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
            if sub.get_name() == "help" {
                continue;
            }
            let mut path = words.to_vec();
            path.push(sub.get_name().to_string());
            let longs = sub
                .get_arguments()
                .filter(|a| !a.is_hide_set())
                .filter_map(|a| a.get_long().map(str::to_string))
                .collect();
            out.push((path.clone(), longs));
            commands(sub, &path, out);
        }
    }

    fn script(shell: clap_complete::Shell) -> String {
        let mut out = Vec::new();
        clap_complete::generate(shell, &mut Cli::command(), "berth", &mut out);
        String::from_utf8(out).expect("UTF-8 script")
    }

    /// A command added to the CLI is in every shell's completion and has its
    /// man page, with no list to keep up to date by hand.
    #[test]
    fn every_command_is_completed_in_bash_zsh_and_fish_and_has_a_man_page() {
        let mut all = Vec::new();
        commands(&Cli::command(), &[], &mut all);
        assert!(all.len() > 20, "{all:?}");
        let (bash, zsh, fish) = (
            script(clap_complete::Shell::Bash),
            script(clap_complete::Shell::Zsh),
            script(clap_complete::Shell::Fish),
        );
        let dir = tempfile::tempdir().expect("temp dir");
        let mut written = Vec::new();
        man::write_pages(&Cli::command(), &["berth".into()], dir.path(), &mut written)
            .expect("man pages");
        let top = std::fs::read_to_string(dir.path().join("berth.1")).expect("berth.1");
        for (path, longs) in &all {
            let name = path.last().expect("a name");
            let bash_fn: String = path
                .iter()
                .map(|w| format!("__subcmd__{}", w.replace('-', "__")))
                .collect();
            assert!(
                bash.contains(&format!("cmd=\"berth{bash_fn}\"")),
                "bash lacks {path:?}"
            );
            assert!(zsh.contains(&format!("'{name}:")), "zsh lacks {path:?}");
            assert!(
                fish.contains(&format!("-a \"{name}\"")),
                "fish lacks {path:?}"
            );
            for long in longs {
                assert!(
                    bash.contains(&format!("--{long}")),
                    "bash lacks --{long} of {path:?}"
                );
                assert!(
                    zsh.contains(&format!("'--{long}")),
                    "zsh lacks --{long} of {path:?}"
                );
                assert!(
                    fish.contains(&format!("-l {long}")),
                    "fish lacks --{long} of {path:?}"
                );
            }
            let page = format!("berth-{}.1", path.join("-"));
            let text = std::fs::read_to_string(dir.path().join(&page))
                .unwrap_or_else(|e| panic!("no man page {page}: {e}"));
            for long in longs {
                // roff escapes every hyphen.
                let roff = format!("--{long}").replace('-', "\\-");
                assert!(text.contains(&roff), "{page} lacks --{long}");
            }
            if path.len() == 1 {
                assert!(top.contains(name.as_str()), "berth.1 lacks {name}");
            }
        }
        for new in ["sessions", "doctor", "exec"] {
            assert!(
                all.iter().any(|(p, _)| p == &[new.to_string()]),
                "no {new} command"
            );
        }
    }
}
