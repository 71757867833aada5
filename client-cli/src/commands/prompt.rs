//! `berth prompt [--format FMT]`: a short segment for shell prompts, the
//! workspace an agent session here would get and a marker when it would
//! ask (docs/decisions/0027-the-prompt-segment.md). It runs at every prompt:
//! one `Resolve`, as `berth resolve` sends.

use berth_proto::pb;
use clap::Args;

use crate::context::Ctx;
use crate::output::{self, CliError};
use crate::placeholders;

/// The format when none is given.
pub const DEFAULT_FORMAT: &str = "{name}{marker}";

/// Arguments of `berth prompt`.
#[derive(Args, Debug)]
pub struct PromptArgs {
    /// The segment's template. `{workspace}`: the workspace an agent session
    /// here would use; `{proposal}`: the workspace a project file here
    /// proposes and this device has not approved; `{name}`: that proposal
    /// when there is one, else the workspace; `{marker}`: `?` when an agent
    /// session here would ask which workspace to use (a project nothing
    /// assigns, or a proposal); `{reason}`: why the workspace applies. `{{`
    /// and `}}` are literal braces. Nothing is printed in a folder without a
    /// project that no pin or root assigns.
    #[arg(long, value_name = "FMT", default_value = DEFAULT_FORMAT)]
    pub format: String,
}

/// The placeholders, in the order error messages list them.
pub const NAMES: [&str; 5] = ["name", "workspace", "marker", "proposal", "reason"];

/// Runs `berth prompt`.
pub async fn cmd_prompt(ctx: &mut Ctx, args: PromptArgs) -> Result<(), CliError> {
    // A bad format is refused before the daemon is asked anything.
    placeholders::fill(&args.format, &NAMES.map(|n| (n, ""))).map_err(|e| CliError::usage(e.0))?;
    let r = super::resolve_as_agent(ctx, String::new(), String::new(), false).await?;
    let marker = if r.needs_asking { "?" } else { "" };
    let name = if r.proposal.is_empty() {
        &r.workspace
    } else {
        &r.proposal
    };
    let segment = if shown(&r) {
        // Names, the marker and reasons hold no control characters, and the
        // format is the user's own (colour escapes included): nothing to escape.
        placeholders::fill(
            &args.format,
            &[
                ("name", name.as_str()),
                ("workspace", r.workspace.as_str()),
                ("marker", marker),
                ("proposal", r.proposal.as_str()),
                ("reason", r.reason.as_str()),
            ],
        )
        .map_err(|e| CliError::usage(e.0))?
    } else {
        String::new()
    };
    if ctx.json {
        return output::json(&serde_json::json!({
            "segment": segment,
            "workspace": r.workspace,
            "marker": marker,
            "proposal": output::nullable(&r.proposal),
            "reason": r.reason,
            "project": output::nullable(&r.project),
        }));
    }
    if segment.is_empty() {
        return Ok(());
    }
    output::text(&format!("{segment}\n"))
}

/// Whether the folder has something to show: a project, or an answer that
/// is more than a default (a pin, a root). A plain folder's default is the
/// same everywhere and would only be noise in every prompt.
fn shown(r: &pb::Resolution) -> bool {
    !r.project.is_empty() || !matches!(r.reason.as_str(), "active" | "unassigned-setting")
}
