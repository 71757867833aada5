//! `berth completions <shell>`: a completion script, generated from the CLI's
//! own definition. With `--json`, one document holding it:
//! `{"shell", "script"}`.

use clap::Args;

use crate::context::Ctx;
use crate::output::{self, CliError};

/// Arguments of `berth completions`.
#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// Runs `berth completions` for `cmd`, the CLI's definition: the script goes to stdout.
pub async fn cmd_completions(
    ctx: &mut Ctx,
    args: CompletionsArgs,
    mut cmd: clap::Command,
) -> Result<(), CliError> {
    let mut out = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "berth", &mut out);
    let script = String::from_utf8_lossy(&out);
    if ctx.json {
        return output::json(&serde_json::json!({
            "shell": args.shell.to_string(),
            "script": script,
        }));
    }
    output::text(&script)
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use crate::cli::Cli;

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
        super::super::man::write_pages(
            &Cli::command(),
            &["berth".into()],
            dir.path(),
            &mut written,
        )
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
