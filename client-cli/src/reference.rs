//! docs/reference.md's CLI table, checked against clap's command tree: every command is listed
//! with every option it takes, the table lists no command or option that does not exist, and
//! the sentence naming the commands that refuse `--json` names exactly those that do.
//!
//! A row's first cell holds one or more forms separated by ` / `; the first names the whole
//! command (`root add W DIR [--allow-overlap]`), the others only the last word under the same
//! parent (`remove W DIR`).

use std::collections::{BTreeMap, BTreeSet};

use clap::CommandFactory;

use crate::cli::Cli;

/// The commands that refuse `--json`, because their stdout belongs to someone else: the
/// refusals are in `commands::exec` and `commands::init`, and the end-to-end test
/// `exec::json_is_a_usage_error_where_stdout_is_not_berths` runs both.
const REFUSE_JSON: [&str; 2] = ["exec", "init"];

/// Options every command has, which the table leaves out.
const EVERYWHERE: [&str; 3] = ["help", "version", "json"];

/// One option as the table may spell it: `--workspace`, and `-w` when it has a short form.
type Spellings = Vec<String>;

/// Each leaf command's words (`["root", "add"]`) and its options, from clap.
fn leaves() -> BTreeMap<Vec<String>, Vec<Spellings>> {
    fn walk(
        cmd: &clap::Command,
        path: &mut Vec<String>,
        out: &mut BTreeMap<Vec<String>, Vec<Spellings>>,
    ) {
        let subs: Vec<_> = cmd
            .get_subcommands()
            .filter(|s| s.get_name() != "help")
            .collect();
        if subs.is_empty() {
            let options = cmd
                .get_arguments()
                .filter_map(|a| {
                    let long = a.get_long().filter(|l| !EVERYWHERE.contains(l))?;
                    let mut spellings = vec![format!("--{long}")];
                    spellings.extend(a.get_short().map(|c| format!("-{c}")));
                    Some(spellings)
                })
                .collect();
            out.insert(path.clone(), options);
            return;
        }
        for sub in subs {
            path.push(sub.get_name().to_string());
            walk(sub, path, out);
            path.pop();
        }
    }
    let mut out = BTreeMap::new();
    walk(&Cli::command(), &mut Vec::new(), &mut out);
    out
}

/// The section of docs/reference.md headed `heading`, up to the next `## `.
fn section<'a>(doc: &'a str, heading: &str) -> &'a str {
    let start = doc
        .find(heading)
        .unwrap_or_else(|| panic!("docs/reference.md has no {heading:?}"));
    let rest = &doc[start + heading.len()..];
    &rest[..rest.find("\n## ").unwrap_or(rest.len())]
}

/// The forms of the table's rows, as (command words, the form's text).
fn table_forms(
    cli_section: &str,
    known: &BTreeMap<Vec<String>, Vec<Spellings>>,
) -> Vec<(Vec<String>, String)> {
    let table = cli_section
        .split("| command | does |")
        .nth(1)
        .expect("the CLI section has its command table");
    let mut out = Vec::new();
    for line in table.lines().skip(2) {
        let Some(row) = line.strip_prefix("| ") else {
            break;
        };
        let cell = row.split(" | ").next().unwrap_or_default();
        let mut parent: Vec<String> = Vec::new();
        for (i, form) in cell.split(" / ").enumerate() {
            let form = form.trim().trim_matches('`').replace("\\|", "|");
            let words: Vec<String> = form.split_whitespace().map(str::to_string).collect();
            // The longest run of leading words that names a command (after the first form, under
            // the first form's parent).
            let base = if i == 0 { Vec::new() } else { parent.clone() };
            let mut path = base.clone();
            let mut best = None;
            for w in &words {
                path.push(w.clone());
                if known.contains_key(&path) {
                    best = Some(path.clone());
                } else if !known.keys().any(|k| k.starts_with(&path)) {
                    break;
                }
            }
            let path = best.unwrap_or_else(|| panic!("the table's {form:?} names no command"));
            if i == 0 {
                parent = path[..path.len() - 1].to_vec();
            }
            out.push((path, form));
        }
    }
    out
}

/// The options a form names, as spelled: `--all`, `-w`.
fn options_named(form: &str) -> BTreeSet<String> {
    form.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
        .filter(|w| w.len() > 1 && w.starts_with('-') && w != &"--")
        .map(str::to_string)
        .collect()
}

fn reference() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/reference.md");
    std::fs::read_to_string(path).expect("docs/reference.md")
}

fn checked(doc: &str) -> Result<(), Vec<String>> {
    let known = leaves();
    let cli = section(doc, "\n## The CLI\n");
    let mut named: BTreeMap<Vec<String>, BTreeSet<String>> = BTreeMap::new();
    for (path, form) in table_forms(cli, &known) {
        named.entry(path).or_default().extend(options_named(&form));
    }
    let mut wrong = Vec::new();
    for (path, options) in &known {
        let name = path.join(" ");
        let Some(listed) = named.get(path) else {
            wrong.push(format!("`{name}` is not in the table"));
            continue;
        };
        for spellings in options {
            if !spellings.iter().any(|s| listed.contains(s)) {
                let o = &spellings[0];
                wrong.push(format!("`{name}` takes {o}, which its row does not show"));
            }
        }
        for o in listed {
            if !options.iter().flatten().any(|s| s == o) {
                wrong.push(format!("`{name}`'s row shows {o}, which it does not take"));
            }
        }
    }
    let sentence = cli
        .split("\n\n")
        .find(|p| p.contains("Every command takes `--json`"))
        .unwrap_or_default();
    for cmd in known.keys().map(|p| p[0].as_str()).collect::<BTreeSet<_>>() {
        let said = sentence.contains(&format!("`{cmd}`"));
        if said != REFUSE_JSON.contains(&cmd) {
            wrong.push(format!(
                "the `--json` sentence {} `{cmd}`",
                if said { "names" } else { "leaves out" }
            ));
        }
    }
    if wrong.is_empty() { Ok(()) } else { Err(wrong) }
}

#[test]
fn the_cli_table_lists_every_command_with_every_option_it_takes() {
    if let Err(wrong) = checked(&reference()) {
        panic!("docs/reference.md, \"The CLI\":\n{}", wrong.join("\n"));
    }
}

#[test]
fn the_check_finds_a_missing_command_option_or_json_exception() {
    let doc = reference();
    let planted = [
        // A command's row removed.
        doc.replace("| `claim --cwd DIR... [-w W]` | conversations |\n", ""),
        // An option left out of a row.
        doc.replace("`sessions [--all]`", "`sessions`"),
        // An option no command takes.
        doc.replace("`doctor`", "`doctor [--deep]`"),
        // The --json exceptions changed.
        doc.replace("except `exec` and\n`init`", "except `exec`"),
    ];
    for (i, bad) in planted.iter().enumerate() {
        assert_ne!(bad, &doc, "plant {i} changed nothing: the table moved");
        assert!(checked(bad).is_err(), "plant {i} was not found");
    }
}
