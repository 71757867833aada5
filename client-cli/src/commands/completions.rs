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
