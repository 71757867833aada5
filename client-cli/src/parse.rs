//! Parsing the command line without building all of it.
//!
//! clap's derive builds the whole command tree, every subcommand with its
//! arguments and help text, before it looks at argv: about a quarter of
//! `berth resolve`'s start-up (docs/decisions/0010-client-start-up-budget.md).
//! The commands scripts and shell prompts run on every call (`resolve`,
//! `path`, `prompt`) are parsed with a tree holding only that subcommand.
//! Anything else, and anything that tree does not accept (help, versions,
//! every error), goes to the full tree, so what a user reads is always
//! clap's own output for the whole CLI.

use std::ffi::OsString;

use clap::{Arg, ArgAction, Args, Command, FromArgMatches, Parser};

use crate::cli::Cli;
use crate::commands;

/// Parses argv (program name first); exits as clap does on help, versions
/// and errors.
#[cfg_attr(test, allow(dead_code))]
pub fn parse(args: Vec<OsString>) -> Cli {
    match hot(&args) {
        Some(cli) => cli,
        None => Cli::parse_from(args),
    }
}

/// The parse of a hot command with a tree holding only that subcommand, or
/// `None` when argv is anything else or that tree refuses it.
pub fn hot(args: &[OsString]) -> Option<Cli> {
    let name = args.iter().skip(1).find(|a| *a != "--json")?;
    let sub = match name.to_str()? {
        "resolve" => commands::resolve::ResolveArgs::augment_args(Command::new("resolve")),
        "path" => commands::path::PathArgs::augment_args(Command::new("path")),
        "prompt" => commands::prompt::PromptArgs::augment_args(Command::new("prompt")),
        _ => return None,
    };
    // The same top level as `Cli`'s: its one global flag.
    let top = Command::new("berth")
        .arg(
            Arg::new("json")
                .long("json")
                .action(ArgAction::SetTrue)
                .global(true),
        )
        .subcommand(sub);
    let matches = top.try_get_matches_from(args).ok()?;
    Cli::from_arg_matches(&matches).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(line: &str) -> Vec<OsString> {
        line.split(' ').map(OsString::from).collect()
    }

    /// Every argv the hot path accepts parses to what the full tree gives,
    /// and every argv the full tree refuses or answers with help or a
    /// version (whose text the user reads) goes to the full tree.
    #[test]
    fn the_hot_path_agrees_with_the_full_tree_or_steps_aside() {
        let lines = [
            "berth resolve",
            "berth resolve --json",
            "berth --json resolve",
            "berth --json resolve --json",
            "berth resolve some/dir",
            "berth resolve -w shop",
            "berth resolve --workspace=shop --agent /x",
            "berth resolve --agent -- -odd",
            "berth path ./a",
            "berth path -x",
            "berth path --json <shop>/a --cwd /tmp",
            "berth path /abs --cwd=/tmp --json",
            "berth prompt",
            "berth prompt --format {name}",
            "berth --json prompt --format={workspace}{marker}",
            // Refused or answered with text by the full tree.
            "berth resolve --help",
            "berth resolve -h",
            "berth --json resolve --version",
            "berth resolve -V",
            "berth resolve a b",
            "berth resolve --bogus",
            "berth resolve -w",
            "berth path",
            "berth path --help",
            "berth path a b",
            "berth path a --cwd",
            "berth prompt --help",
            "berth prompt --format",
            "berth prompt extra",
            "berth --json",
            "berth",
            "berth help resolve",
            "berth --help resolve",
            "berth workspace list",
            "berth resolv",
        ];
        for line in lines {
            let args = argv(line);
            let full = Cli::try_parse_from(&args);
            match (hot(&args), full) {
                (Some(h), Ok(f)) => assert_eq!(format!("{h:?}"), format!("{f:?}"), "{line}"),
                (Some(h), Err(e)) => panic!("{line}: hot path gave {h:?}, full tree: {e}"),
                (None, Ok(_))
                    if line.starts_with("berth resolve") || line.starts_with("berth path") =>
                {
                    panic!("{line}: the hot path stepped aside on a valid command")
                }
                (None, _) => {}
            }
        }
    }
}
