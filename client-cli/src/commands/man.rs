//! `berth man [--dir DIR]`: man pages, generated from the CLI's own
//! definition: `berth.1` on stdout, or one page per command in DIR.
//!
//! With `--json`, one document, `{"pages": [{"name", ...}]}`: without DIR
//! the one page with its text (`"roff"`), with DIR every page written and
//! where (`"path"`).

use std::path::{Path, PathBuf};

use clap::Args;

use crate::context::Ctx;
use crate::output::{self, CliError};

/// Arguments of `berth man`.
#[derive(Args, Debug)]
pub struct ManArgs {
    /// Write `berth.1` and one page per subcommand (`berth-workspace-list.1`,
    /// ...) into this folder instead of printing `berth.1`.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// Runs `berth man` for `cmd`, the CLI's definition.
pub async fn cmd_man(ctx: &mut Ctx, args: ManArgs, cmd: clap::Command) -> Result<(), CliError> {
    let Some(dir) = args.dir else {
        let roff = render(&cmd)?;
        if ctx.json {
            return output::json(&serde_json::json!({
                "pages": [{ "name": "berth.1", "roff": roff }],
            }));
        }
        return output::text(&roff);
    };
    std::fs::create_dir_all(&dir)
        .map_err(|e| CliError::failed(format!("creating {}: {e}", dir.display())))?;
    let mut written = Vec::new();
    write_pages(&cmd, &["berth".to_string()], &dir, &mut written)?;
    if ctx.json {
        let pages: Vec<_> = written
            .iter()
            .map(|(name, path)| serde_json::json!({ "name": name, "path": path }))
            .collect();
        return output::json(&serde_json::json!({ "pages": pages }));
    }
    output::text(
        &written
            .iter()
            .map(|(_, path)| format!("{path}\n"))
            .collect::<String>(),
    )
}

/// Writes the page of `cmd` (the command line `words`) and of each of its
/// subcommands, noting each page's file name and path in `written`.
pub(crate) fn write_pages(
    cmd: &clap::Command,
    words: &[String],
    dir: &Path,
    written: &mut Vec<(String, String)>,
) -> Result<(), CliError> {
    let name = words.join("-");
    // The page's title is the display name; the synopsis shows the words
    // a user types.
    let page = cmd
        .clone()
        .display_name(name.clone())
        .bin_name(words.join(" "));
    let file_name = format!("{name}.1");
    let file = dir.join(&file_name);
    // Replaced whole, never written through a link already at its name.
    berth_client::atomic::write_atomic(&file, render(&page)?.as_bytes())
        .map_err(|e| CliError::failed(format!("writing {}: {e}", file.display())))?;
    written.push((file_name, file.display().to_string()));
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        if sub.get_name() == "help" {
            continue;
        }
        let mut sub_words = words.to_vec();
        sub_words.push(sub.get_name().to_string());
        write_pages(sub, &sub_words, dir, written)?;
    }
    Ok(())
}

fn render(cmd: &clap::Command) -> Result<String, CliError> {
    let mut out = Vec::new();
    clap_mangen::Man::new(cmd.clone())
        .render(&mut out)
        .map_err(|e| CliError::failed(format!("rendering the man page: {e}")))?;
    Ok(String::from_utf8_lossy(&out).into_owned())
}
